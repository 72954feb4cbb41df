"""``python_three_thirteen`` loaded and played at random, for the OpenSpiel tests (``tests/test_openspiel_*.py``)."""

from __future__ import annotations

import numpy as np
import pyspiel

import tt_env.openspiel.game  # noqa: F401  (registers the game)
from tt_env.engine.game import DRAW_STOCK

NAME = "python_three_thirteen"


def load(**params):
    return pyspiel.load_game(NAME, params)


def play(state, rng: np.random.Generator, steps: int | None = None, stock_bias: float = 0.0):
    """Random play (chance by its probabilities) until the end or for ``steps`` nodes; returns state."""
    done = 0
    while not state.is_terminal() and (steps is None or done < steps):
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            legal = state.legal_actions()
            take_stock = DRAW_STOCK in legal and rng.random() < stock_bias
            state.apply_action(DRAW_STOCK if take_stock else int(rng.choice(legal)))
        done += 1
    return state
