"""The game object behind the RLCard environment: RLCard's ``Game`` interface over our engine.

RLCard's ``Env`` drives a game through a small interface (``init_game``, ``step``,
``step_back``, ``get_state``, ``is_over``, ``get_player_id``, ``get_num_players``,
``get_num_actions``, ``get_legal_actions``, ``np_random``). :class:`ThreeThirteenGame`
implements it over ``tt_env.engine.game``, which decides every rule; this module adds nothing
but the bookkeeping RLCard expects: a seed per game drawn from the env's ``np_random`` (so a
seeded env replays the same games) and a stack of engine states for ``step_back``.

Actions are our ids 0..53 (``tt_env.actions``); the raw actions RLCard shows people are their
names (``"draw stock"``, ``"take discard"``, ``"discard 7H"``), and :meth:`step` takes either.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import action_name
from ..engine import game as engine
from ..engine.rules import Rules
from ..observation import encode
from ..engine.scoring import relative_returns

_ACTION_IDS = {action_name(a): a for a in range(engine.NUM_ACTIONS)}
"""Raw action (its name) -> action id."""


def relative_payoffs(scores: list[int]) -> np.ndarray:
    """Per player, the env's ``relative`` rewards summed over the rounds scored so far.

    (mean of the others' totals - own total) / 100, from integer totals: the AEC env's per-round
    rewards of ``reward_mode="relative"`` summed over the game, zero-sum.
    """
    return np.array(relative_returns(list(scores)), dtype=np.float64)


class ThreeThirteenGame:
    """One game at a time of ``rules``, in RLCard's ``Game`` interface."""

    def __init__(self, rules: Rules, allow_step_back: bool = False) -> None:
        self.rules = rules
        self.allow_step_back = allow_step_back
        self.np_random = np.random.RandomState()
        """Set by RLCard's ``Env.seed``; each game's engine seed is drawn from it."""
        self.state: engine.GameState | None = None
        self.game_seed: int | None = None
        """The engine seed of the current game: ``three_thirteen_v0.env().reset(seed=game_seed)`` deals
        the same game."""
        self.history: list[engine.GameState] = []

    # ---------------------------------------------------------------- RLCard's Game interface
    def get_num_players(self) -> int:
        return self.rules.num_players

    @staticmethod
    def get_num_actions() -> int:
        return engine.NUM_ACTIONS

    def init_game(self) -> tuple[dict[str, Any], int]:
        """Deal a new game (its seed from ``np_random``); returns the first player's state and id."""
        self.game_seed = int(self.np_random.randint(2 ** 31))
        self.state = engine.new_game(self.rules, np.random.default_rng(self.game_seed))
        self.history = []
        return self.get_state(self.state.current_player), self.state.current_player

    def step(self, action: int | str) -> tuple[dict[str, Any], int]:
        """Play ``action`` (an id or a raw action name) for the player to move; illegal ones raise ``ValueError``."""
        state = self._live_state()
        if isinstance(action, str):
            if action not in _ACTION_IDS:
                raise ValueError(f"unknown raw action {action!r}: raw actions are 'draw stock', 'take discard' "
                                 f"and 'discard <card>' such as 'discard 7H'")
            action = _ACTION_IDS[action]
        if self.allow_step_back:
            self.history.append(state.copy())  # generators deep-copied: the undo replays exactly
        try:
            engine.apply(state, action)
        except (TypeError, ValueError):
            if self.allow_step_back:
                self.history.pop()
            raise
        return self.get_state(state.current_player), state.current_player

    def step_back(self) -> bool:
        """Undo the last action; False when there is none to undo (RLCard's convention)."""
        if not self.history:
            return False
        self.state = self.history.pop()
        return True

    def get_state(self, player_id: int) -> dict[str, Any]:
        """What ``player_id`` sees: our observation, and the legal actions when it is on move."""
        state = self._live_state(allow_over=True)
        if not 0 <= player_id < self.rules.num_players:
            raise ValueError(f"player_id={player_id!r} is not allowed: use 0..{self.rules.num_players - 1}")
        on_move = player_id == state.current_player and not state.game_over
        return {"obs": encode(state, player_id), "legal_actions": self.get_legal_actions() if on_move else [],
                "current_player": state.current_player}

    def get_legal_actions(self) -> list[int]:
        return engine.legal_actions(self._live_state(allow_over=True))

    def get_player_id(self) -> int:
        return self._live_state(allow_over=True).current_player

    def is_over(self) -> bool:
        return self.state is not None and self.state.game_over

    def get_payoffs(self) -> np.ndarray:
        """Relative payoffs of the rounds scored so far (the whole game once it is over)."""
        return relative_payoffs(self._live_state(allow_over=True).scores)

    # ---------------------------------------------------------------- helpers
    def _live_state(self, allow_over: bool = False) -> engine.GameState:
        if self.state is None:
            raise RuntimeError("the game has not started: call env.reset() first")
        if self.state.game_over and not allow_over:
            raise ValueError("the game is over: no action is legal; call env.reset() to play again")
        return self.state
