"""``expert-v0``'s keyword options are checked when the agent is built, as ``ismcts-v0``'s are: a bad
value is a ``ValueError`` naming the option, the value and what is allowed, not a ``TypeError`` at
the first move or a NaN that silently changes every decision."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tt_env.agents import ExpertAgent, make_agent
from tt_env.engine import game
from tt_env.engine.rules import Rules
from tt_env.observation import encode

NUMBER = "use a finite number >= 0"
BAD = [
    ({"gamma": "x"}, f"gamma='x' is not allowed: {NUMBER}"),
    ({"gamma": math.nan}, f"gamma=nan is not allowed: {NUMBER}"),
    ({"gamma": -0.5}, f"gamma=-0.5 is not allowed: {NUMBER}"),
    ({"gamma": True}, f"gamma=True is not allowed: {NUMBER}"),
    ({"out_bonus": math.inf}, f"out_bonus=inf is not allowed: {NUMBER}"),
    ({"out_bonus": -1}, f"out_bonus=-1 is not allowed: {NUMBER}"),
    ({"out_per_card": None}, f"out_per_card=None is not allowed: {NUMBER}"),
    ({"feed_weight": "3"}, f"feed_weight='3' is not allowed: {NUMBER}"),
    ({"feed_weight": -math.inf}, f"feed_weight=-inf is not allowed: {NUMBER}"),
    ({"take_bias": math.nan}, "take_bias=nan is not allowed: use a finite number$"),
    ({"take_bias": [1.0]}, r"take_bias=\[1.0\] is not allowed: use a finite number$"),
    ({"candidates": -3}, "candidates=-3 is not allowed: use an int >= 1"),
    ({"candidates": 0}, "candidates=0 is not allowed: use an int >= 1"),
    ({"candidates": 2.0}, "candidates=2.0 is not allowed: use an int >= 1"),
    ({"candidates": True}, "candidates=True is not allowed: use an int >= 1"),
    ({"candidates": np.bool_(True)}, r"candidates=(np\.)?True_? is not allowed: use an int >= 1"),
    ({"margin": -1}, "margin=-1 is not allowed: use an int >= 0"),
    ({"margin": "12"}, "margin='12' is not allowed: use an int >= 0"),
]


@pytest.mark.parametrize("options,message", BAD, ids=[str(o) for o, _ in BAD])
def test_a_bad_option_is_refused_when_the_agent_is_built(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ExpertAgent(Rules(), **options)
    with pytest.raises(ValueError, match=message):
        make_agent("expert-v0", Rules(), **options)


GOOD = [{"gamma": 0}, {"gamma": 1.5}, {"out_bonus": 4}, {"out_per_card": 0.0}, {"candidates": 1},
        {"margin": 0}, {"feed_weight": 0}, {"take_bias": -2.5}, {"take_bias": 3},
        {"candidates": np.int64(3), "margin": np.int32(12), "gamma": np.float32(0.5)}]  # (numpy's numbers too)


@pytest.mark.parametrize("options", GOOD, ids=[str(o) for o in GOOD])
def test_allowed_options_are_taken_and_the_agent_plays(options: dict) -> None:
    rules = Rules(rounds=(3,))
    agent = make_agent("expert-v0", rules, **options)
    for key, value in options.items():
        assert getattr(agent, key) == value
    state = game.new_game(rules, np.random.default_rng(0))
    rng = np.random.default_rng(0)
    for _ in range(8):  # draws and discards of every seat: every option is used by then
        if state.game_over:
            break
        mask = game.action_mask(state)
        action = agent.act(encode(state, state.current_player), mask, rng)
        assert mask[action]
        game.apply(state, action)


def test_the_rules_scoring_reaches_the_agent_s_discard_values() -> None:
    """``meld_needs_natural``: three wilds alone are no meld, so keeping them after discarding the
    king costs 9 (the agent's own table, not only the solver's)."""
    from tt_env.engine import parse_cards

    hand = parse_cards("3C 3D 3H KS")
    king = parse_cards("KS")[0]
    assert ExpertAgent(Rules()).discard_penalties(hand, 3)[king] == 0
    assert ExpertAgent(Rules(meld_needs_natural=True)).discard_penalties(hand, 3)[king] == 9
