"""``ismcts-v0`` and the belief it samples worlds from (tt_env.search.sample_world)."""

from __future__ import annotations

import numpy as np
import pytest

from tt_env.agents import ExpertAgent, ISMCTSAgent, list_agents, make_agent
from tt_env.agents.ismcts import expert_scores, relative_points
from tt_env.engine import Rules, game
from tt_env.engine.melds import least_penalty
from tt_env.observation import encode
from tt_env.search import sample_world, tilt_hidden_hand

SMALL = {"worlds": 4, "min_worlds": 2}


def _positions(rules: Rules, games: int, seed: int = 0, every: int = 1):
    """(state, observation, mask) of the seat to move, every ``every``-th decision of expert self-play."""
    expert = ExpertAgent(rules)
    rng = np.random.default_rng(seed)
    out, n = [], 0
    for g in range(games):
        state = game.new_game(rules, np.random.default_rng([seed, g]))
        while not state.game_over:
            obs, mask = encode(state, state.current_player), game.action_mask(state)
            if n % every == 0:
                out.append((state.copy(), obs, mask))
            n += 1
            game.apply(state, expert.act(obs, mask, rng))
    return out


def test_registered_with_options():
    assert "ismcts-v0" in list_agents()
    agent = make_agent("ismcts-v0", Rules(), worlds=6, z=2.0)
    assert isinstance(agent, ISMCTSAgent) and agent.worlds == 6 and agent.z == 2.0
    with pytest.raises(ValueError, match=r"takes no option\(s\) \['world'\]"):
        make_agent("ismcts-v0", Rules(), world=6)
    for bad in ({"worlds": 0}, {"candidates": 1.5}, {"z": -1.0}, {"belief": float("nan")}, {"rollout": "nope"}):
        with pytest.raises(ValueError, match="is not allowed"):
            ISMCTSAgent(Rules(), **bad)


def test_expert_scores_lead_with_expert_v0s_move():
    for rules in (Rules(), Rules(num_players=3, aces="high_or_low")):
        expert = ExpertAgent(rules)
        for _, obs, mask in _positions(rules, 1, seed=4):
            scores = expert_scores(expert, obs, mask)
            assert scores[0][0] == expert.act(obs, mask, np.random.default_rng(0))
            assert all(mask[a] for a, _ in scores)
            assert [s for _, s in scores] == sorted(s for _, s in scores)


def test_relative_points_are_zero_sum():
    assert relative_points([10, 0]) == [-10.0, 10.0]
    assert sum(relative_points([3, 7, 20])) == pytest.approx(0.0)


@pytest.mark.parametrize("num_players", [2, 3])
def test_plays_legal_moves_and_is_seeded(num_players):
    rules = Rules(num_players=num_players, rounds=(2, 9))
    agent = ISMCTSAgent(rules, **SMALL)
    searched = 0
    for _, obs, mask in _positions(rules, 1, seed=1, every=3):
        a = agent.act(obs, mask, np.random.default_rng(5))
        assert mask[a]
        assert agent.act(obs, mask, np.random.default_rng(5)) == a
        searched += len(expert_scores(agent.expert, obs, mask)) > 1
    assert searched > 5


def test_search_follows_the_expert_unless_confident():
    """z = infinity: never leave expert-v0's choice; z = 0: the best mean advantage wins (the last
    turn, solved exactly rather than searched, is tested in test_last_turn.py)."""
    rules = Rules(rounds=(9,))
    positions = _positions(rules, 2, seed=2)
    expert = ExpertAgent(rules)
    never = ISMCTSAgent(rules, worlds=4, min_worlds=4, z=1e9, exact_last_turn=False)
    always = ISMCTSAgent(rules, worlds=4, min_worlds=4, z=0.0, exact_last_turn=False)
    deviated = 0
    for _, obs, mask in positions:
        first = expert.act(obs, mask, np.random.default_rng(0))
        assert never.act(obs, mask, np.random.default_rng(1)) == first
        a = always.act(obs, mask, np.random.default_rng(1))
        if a != first:
            deviated += 1
            advantage = always.last_search["advantage"][a]
            assert advantage > 0
    assert deviated > 0


def test_a_tree_deeper_than_the_root_plays_legal_moves():
    rules = Rules(rounds=(5,))
    agent = ISMCTSAgent(rules, worlds=6, min_worlds=6, tree_depth=3)
    for _, obs, mask in _positions(rules, 1, seed=3, every=2):
        assert mask[agent.act(obs, mask, np.random.default_rng(0))]


# ---------------------------------------------------------------- the belief
def test_sampled_worlds_encode_to_the_observation_and_keep_what_is_known():
    rules = Rules(num_players=3)
    for state, obs, mask in _positions(rules, 1, seed=6, every=4):
        world = sample_world(obs, rules, np.random.default_rng(0), action_mask=mask)
        np.testing.assert_array_equal(encode(world, 0), obs)
        np.testing.assert_array_equal(game.action_mask(world), mask)
        for seat in range(1, 3):
            for card in world.known_taken[seat]:
                assert card in world.hands[seat]
            if len(world.discards[seat]) > 0 and world.went_out != seat:
                assert least_penalty(world.hands[seat], world.wild_rank) > 0


def test_the_tilt_gives_opponents_the_hands_good_players_hold():
    """After several turns, tilted hands are far closer to expert-v0's real ones than uniform hands."""
    rules = Rules()
    true, uniform, tilted = [], [], []
    for state, obs, mask in _positions(rules, 3, seed=8):
        seat = state.current_player
        opp = 1 - seat
        if len(state.discards[opp]) < 4:
            continue
        true.append(least_penalty(state.hands[opp], state.wild_rank))
        rng = np.random.default_rng(len(true))
        uniform.append(least_penalty(sample_world(obs, rules, rng, mask, belief=0.0).hands[1], state.wild_rank))
        tilted.append(least_penalty(sample_world(obs, rules, rng, mask).hands[1], state.wild_rank))
    assert len(true) > 30
    assert np.mean(uniform) > 2 * np.mean(true)
    assert abs(np.mean(tilted) - np.mean(true)) < abs(np.mean(uniform) - np.mean(true)) / 3


def test_tilt_keeps_the_card_multiset_and_leaves_the_stock_shuffled():
    rules = Rules()
    state, obs, mask = _positions(rules, 1, seed=9)[30]
    world = sample_world(obs, rules, np.random.default_rng(1), mask, belief=0.0)
    before = sorted(world.hands[1] + world.stock)
    tilt_hidden_hand(world, 1, 0.5, 200, np.random.default_rng(2))
    assert sorted(world.hands[1] + world.stock) == before
    np.testing.assert_array_equal(encode(world, 0), obs)


# ---------------------------------------------------------------- where it plays
def test_ismcts_in_the_evaluator_is_worker_independent():
    from tt_env.evaluation.duplicate import run_deals

    rules = Rules(rounds=(3, 4))
    one = run_deals([ISMCTSAgent(rules, **SMALL), "expert-v0"], rules, 2, seed=3)
    again = run_deals([ISMCTSAgent(rules, **SMALL), "expert-v0"], rules, 2, seed=3)
    assert [[g.scores for g in d] for d in one] == [[g.scores for g in d] for d in again]


def test_ismcts_as_a_gymnasium_opponent():
    from tt_env.gym_env import ThreeThirteenGymEnv

    rules_kwargs = {"rounds": (2,)}
    env = ThreeThirteenGymEnv(opponents=[ISMCTSAgent(Rules(rounds=(2,)), **SMALL)], **rules_kwargs)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert len(info["final_scores"]) == 2
