"""The RLCard adapter checks its seed itself (issue 25: RLCard's own check fails with an AttributeError
of its own), an illegal step leaves nothing for ``step_back`` to undo, and ``step_back`` undoes the
step counter and the action record too."""

from __future__ import annotations

import numpy as np
import pytest

rlcard = pytest.importorskip("rlcard")

import tt_env.rlcard  # noqa: E402,F401  (registers three-thirteen)

QUICK = {"game_rounds": [1, 2], "game_max_turns_per_round": 30}


@pytest.mark.parametrize("seed", [-1, -(2**40), 1.5, "7", True, [1], np.int64(-3)])
def test_a_bad_seed_is_refused_by_the_adapter(seed) -> None:
    with pytest.raises(ValueError, match=r"seed=.* is not allowed: use None or an integer >= 0"):
        rlcard.make("three-thirteen", config={"seed": seed})


@pytest.mark.parametrize("seed", [None, 0, 2**40, np.int64(5)])
def test_good_seeds_are_taken(seed) -> None:
    env = rlcard.make("three-thirteen", config={"seed": seed, **QUICK})
    state, player = env.reset()
    assert player in (0, 1) and state["obs"].shape == (294,)
    if seed is not None:
        again = rlcard.make("three-thirteen", config={"seed": int(seed), **QUICK})
        np.testing.assert_array_equal(again.reset()[0]["obs"], state["obs"])


def test_step_back_after_an_illegal_step_undoes_the_last_legal_one() -> None:
    env = rlcard.make("three-thirteen", config={"seed": 3, "allow_step_back": True, **QUICK})
    first, player = env.reset()
    legal = list(first["legal_actions"])
    after, _ = env.step(legal[0])
    illegal = next(a for a in range(54) if a not in after["legal_actions"])
    with pytest.raises(ValueError):
        env.step(illegal)
    assert len(env.game.history) == 1  # the refused step kept no undo entry
    assert env.timestep == 1 and env.action_recorder == [(player, legal[0])]  # nor a count or a record
    state, back = env.step_back()
    np.testing.assert_array_equal(state["obs"], first["obs"])
    assert back == player and list(state["legal_actions"]) == legal
    assert env.step_back() is False


def test_step_back_undoes_the_timestep_and_the_action_record() -> None:
    env = rlcard.make("three-thirteen", config={"seed": 5, "allow_step_back": True, **QUICK})
    state, _ = env.reset()
    rng = np.random.default_rng(1)
    seen = [(env.timestep, list(env.action_recorder), list(state["action_record"]))]
    for _ in range(12):
        state, _ = env.step(int(rng.choice(list(state["legal_actions"]))))
        seen.append((env.timestep, list(env.action_recorder), list(state["action_record"])))
    assert seen[-1][0] == 12 and len(seen[-1][1]) == 12
    for timestep, record, _ in reversed(seen[:-1]):
        state, _ = env.step_back()
        assert (env.timestep, env.action_recorder, state["action_record"]) == (timestep, record, record)
    assert env.step_back() is False and env.timestep == 0 and env.action_recorder == []


def test_perfect_information_names_both_phases() -> None:
    env = rlcard.make("three-thirteen", config={"seed": 4, **QUICK})
    state, _ = env.reset()
    info = env.get_perfect_information()
    assert info["phase"] == "draw" and info["current_player"] == env.get_player_id()
    env.step(list(state["legal_actions"])[0])
    after = env.get_perfect_information()
    assert after["phase"] == "discard" and after["legal_actions"] == env.game.get_legal_actions()
