"""Every info dict has the same keys with the same types on every step, for every agent, in
the AEC environment (raw and wrapped) and the Gymnasium environment, over whole games; and
the values say what the docstrings' tables say."""

from __future__ import annotations

import numpy as np
import pytest

from tt_env import three_thirteen_v0
from tt_env.gym_env import ThreeThirteenGymEnv

AEC_TYPES = {"went_out": int, "round_number": int, "round_points": list, "final_scores": list}
GYM_TYPES = {**AEC_TYPES, "action_mask": np.ndarray, "seat": int, "illegal_action": bool}
# short games that still reach going out, turn-limit endings and several rounds
GAME = dict(rounds=(1, 2, 3), max_turns_per_round=12)


def check_info(info: dict, types: dict, n: int) -> None:
    assert set(info) == set(types), f"keys {sorted(info)}"
    for key, kind in types.items():
        assert type(info[key]) is kind, f"{key}: {type(info[key]).__name__}"
    assert -1 <= info["went_out"] < n and info["round_number"] in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
    for key in ("round_points", "final_scores"):
        assert len(info[key]) == n and all(type(v) is int for v in info[key]), key
    if info["round_number"] == 0:
        assert info["round_points"] == [0] * n


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("make", [three_thirteen_v0.raw_env, three_thirteen_v0.env])
def test_aec_infos_have_fixed_keys_and_types_over_whole_games(make, num_players: int) -> None:
    env = make(num_players=num_players, **GAME)
    rng = np.random.default_rng(num_players)
    went_out_seen = rounds_seen = 0
    for seed in range(4):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _reward, term, trunc, info = env.last()
            check_info(info, AEC_TYPES, num_players)
            if term or trunc:
                env.step(None)
                continue
            state = env.unwrapped.game_state
            mover, finished = state.current_player, len(state.round_results)
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            infos = env.infos
            for a in env.agents:
                check_info(infos[a], AEC_TYPES, num_players)
                assert infos[a] == infos[env.agents[0]], "every agent gets the same event info"
            info = infos[env.agents[0]]
            went_out = state.went_out if len(state.round_results) == finished else state.round_results[-1].went_out
            if info["went_out"] >= 0:
                went_out_seen += 1
                assert info["went_out"] == mover == went_out
            if len(state.round_results) > finished:
                rounds_seen += 1
                record = state.round_results[-1]
                assert (info["round_number"], info["round_points"]) == (record.round_number, record.points)
                assert info["final_scores"] == (state.scores if state.game_over else [0] * num_players)
            else:
                assert info["round_number"] == 0 and info["final_scores"] == [0] * num_players
    assert went_out_seen > 0 and rounds_seen == 4 * len(GAME["rounds"])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_gym_infos_have_fixed_keys_and_types_over_whole_games(num_players: int) -> None:
    env = ThreeThirteenGymEnv(opponents="random-v0", num_players=num_players, seat="rotate", **GAME)
    rng = np.random.default_rng(0)
    ended = 0
    for seed in range(2 * num_players):
        obs, info = env.reset(seed=seed) if seed == 0 else env.reset()
        check_info(info, GYM_TYPES, num_players)
        done = False
        while not done:
            assert np.array_equal(info["action_mask"], env.action_masks())
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, _reward, done, _trunc, info = env.step(action)
            check_info(info, GYM_TYPES, num_players)
            assert not info["illegal_action"] and info["seat"] == env.seat
            ended += info["round_number"] > 0
        assert info["final_scores"] == env.aec.game_state.scores and not info["action_mask"].any()
    assert ended >= 2 * num_players * len(GAME["rounds"]) - 2  # tiny limits can end two rounds in one step
    _obs, info = env.reset(seed=1)
    _obs, _reward, done, _trunc, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    check_info(info, GYM_TYPES, num_players)
    assert done and info["illegal_action"]


def test_a_returned_info_dict_is_never_rewritten_by_later_steps() -> None:
    env = three_thirteen_v0.raw_env(num_players=2, rounds=(1, 2))
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    events = 0
    while not env.game_state.game_over:
        before = env.last()[-1]
        kept = {k: list(v) if isinstance(v, list) else v for k, v in before.items()}
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
        after = env.infos[env.agent_selection]
        assert before == kept, "an info dict already handed out changed"
        if after["went_out"] >= 0 or after["round_number"]:
            events += 1
            assert after is not before
    assert events >= 2
