"""The PettingZoo AEC environment: API conformance, rewards, episode end, rendering, options,
the purity of ``observe``, the documentation tables and the action codec."""

from __future__ import annotations

import re
import warnings
from collections import Counter

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

import tt_env
from tt_env import actions, three_thirteen_v0
from tt_env.engine import parse_cards
from tt_env.engine.cardlist import CardList
from tt_env.engine.cards import card_str, hand_vec
from tt_env.engine.game import DISCARD_BASE, DRAW_STOCK, NUM_ACTIONS, TAKE_DISCARD, action_mask, legal_actions
from tt_env.observation import get_layout, layout_table
from tt_env.ui.render_text import hand_text

# PettingZoo warns about these for every environment whose observation is a dict
DICT_OBS_WARNINGS = (
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    "Observation is not a NumPy array",
)


@pytest.fixture
def no_warnings():
    """Every warning is an error inside the test, except the two dict-observation notes."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for message in DICT_OBS_WARNINGS:
            warnings.filterwarnings("ignore", message=re.escape(message))
        yield


def random_legal(env, rng: np.random.Generator) -> int:
    mask = env.observe(env.agent_selection)["action_mask"]
    return int(rng.choice(np.flatnonzero(mask)))


# --------------------------------------------------------------------------- PettingZoo tests
@pytest.mark.parametrize("num_players, cycles", [(2, 600), (3, 300), (4, 250), (6, 120)])
def test_pettingzoo_api_and_seed_tests(num_players: int, cycles: int, no_warnings) -> None:
    api_test(three_thirteen_v0.env(num_players=num_players), num_cycles=cycles)
    seed_test(lambda: three_thirteen_v0.env(num_players=num_players), num_cycles=cycles // 2)


@pytest.mark.parametrize("reward_mode", three_thirteen_v0.REWARD_MODES)
def test_pettingzoo_api_test_through_whole_short_games(reward_mode: str, no_warnings) -> None:
    # one round of at most 12 turns (plus last turns): play_test plays the game to its end
    env = three_thirteen_v0.env(num_players=3, reward_mode=reward_mode, rounds=(1,), max_turns_per_round=12)
    api_test(env, num_cycles=200)


def test_pettingzoo_make_after_import() -> None:
    assert tt_env.registration.ENV_ID == "tt_env/ThreeThirteen-v0"
    env = pettingzoo.make("aec", "tt_env/ThreeThirteen-v0", num_players=3)
    env.reset(seed=0)
    assert isinstance(env.unwrapped, three_thirteen_v0.raw_env)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    env.step(DRAW_STOCK)
    assert env.unwrapped.game_state.phase == 1


# --------------------------------------------------------------------------- spaces
@pytest.mark.parametrize("num_players", range(2, 9))
def test_observation_shape_depends_only_on_the_number_of_players(num_players: int) -> None:
    size = 107 * num_players + 80
    for options in ({}, {"aces": "high_or_low", "decks": 4, "max_turns_per_round": 7}):
        env = three_thirteen_v0.raw_env(num_players=num_players, **options)
        for agent in env.possible_agents:
            space = env.observation_space(agent)
            assert space["observation"].shape == (size,) and space["action_mask"].shape == (NUM_ACTIONS,)
            assert env.action_space(agent).n == NUM_ACTIONS
    env = three_thirteen_v0.raw_env(num_players=num_players, max_turns_per_round=1)
    env.reset(seed=num_players)
    rounds_seen = set()
    rng = np.random.default_rng(0)
    space = env.observation_space("player_0")
    while not env.game_state.game_over:
        rounds_seen.add(env.game_state.round_number)
        for agent in env.agents:
            obs = env.observe(agent)
            assert obs["observation"].shape == (size,) and obs["observation"].dtype == np.float32
            assert obs["action_mask"].shape == (NUM_ACTIONS,) and obs["action_mask"].dtype == np.int8
            assert space.contains(obs), f"observation of {agent} out of its space"
        env.step(random_legal(env, rng))
    assert rounds_seen == set(range(1, 12))


def test_action_mask_is_the_legal_actions_of_the_agent_to_move_and_zero_for_the_others() -> None:
    env = three_thirteen_v0.raw_env(num_players=4, rounds=(2,))
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(60):
        state = env.game_state
        for agent in env.agents:
            mask = env.observe(agent)["action_mask"]
            if agent == env.agent_selection:
                assert np.array_equal(mask, action_mask(state))
                assert np.flatnonzero(mask).tolist() == legal_actions(state)
            else:
                assert not mask.any()
        env.step(random_legal(env, rng))


def test_observation_stays_in_its_box_in_the_last_turns_past_the_turn_limit() -> None:
    env = three_thirteen_v0.raw_env(num_players=3, rounds=(1,), max_turns_per_round=1)
    env.reset(seed=0)
    state = env.game_state
    state.hands = [parse_cards("4H 5H 9C"), parse_cards("2C 7D QS"), parse_cards("AS 4S 8D")]
    state.stock = parse_cards("2D JC KC 6H")
    state.current_player, env.agent_selection = 0, "player_0"
    for token in ("S", "9C", "S", "KC", "S"):      # seat 0 goes out on turn 1 of 1; two last turns
        env.step(DRAW_STOCK if token == "S" else DISCARD_BASE + parse_cards(token)[0])
        for agent in env.agents:
            assert env.observation_space(agent).contains(env.observe(agent)), f"turn {state.turn}"
    assert state.turn == 2 > state.rules.max_turns_per_round


# --------------------------------------------------------------------------- rewards and episode end
def expected_round_rewards(mode: str, points: list[int], scores: list[int], last: bool) -> list[float]:
    """Rewards of one finished round, written from the module docstring."""
    n = len(points)
    if mode == "relative":
        return [(sum(q for j, q in enumerate(points) if j != i) / (n - 1) - p) / 100 for i, p in enumerate(points)]
    if mode == "penalty":
        return [-p / 100 for p in points]
    if not last:
        return [0.0] * n
    low = min(scores)
    won = [s == low for s in scores]
    k = sum(won)
    if k == n:
        return [0.0] * n
    return [1 / k if w else -1 / (n - k) for w in won]


@pytest.mark.parametrize("mode", three_thirteen_v0.REWARD_MODES)
@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_rewards_per_mode_and_episode_end(mode: str, num_players: int) -> None:
    rounds = (1, 2, 3)
    env = three_thirteen_v0.raw_env(num_players=num_players, reward_mode=mode, rounds=rounds,
                                    max_turns_per_round=15)
    for seed in range(3):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        received = Counter()
        expected_total = Counter()
        steps = 0
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            received[agent] += reward
            assert not truncated, "rounds stopped by the turn limit are scored, never truncated"
            if terminated:
                env.step(None)
                continue
            assert not env.game_state.game_over
            finished = len(env.round_results)
            env.step(random_legal(env, rng))
            steps += 1
            assert not any(env.truncations.values())
            if len(env.round_results) == finished:
                assert all(r == 0.0 for r in env.rewards.values())
                continue
            record = env.round_results[-1]
            last = len(env.round_results) == len(rounds)
            want = expected_round_rewards(mode, record.points, env.game_state.scores, last)
            got = [env.rewards[a] for a in env.possible_agents]
            assert got == pytest.approx(want), f"round {record.round_number}: points {record.points}"
            if mode == "relative":
                assert sum(got) == pytest.approx(0.0, abs=1e-12), "relative rewards are zero-sum"
            for a, r in zip(env.possible_agents, want, strict=True):
                expected_total[a] += r
                assert env.infos[a]["round_points"] == record.points
                assert env.infos[a]["round_number"] == record.round_number
                assert env.infos[a]["final_scores"] == (env.game_state.scores if last else [0] * num_players)
            assert all(env.terminations.values()) == last, "the episode ends after the last round only"
        assert env.agents == [] and steps > 0
        assert [r.round_number for r in env.round_results] == list(rounds)
        for a in env.possible_agents:
            assert received[a] == pytest.approx(expected_total[a]), "rewards reach every agent through last()"
        scores = env.game_state.scores
        if mode == "penalty":
            assert [expected_total[a] for a in env.possible_agents] == pytest.approx([-s / 100 for s in scores])


WIN_CASES = [
    # (hands, scores before the round, rewards): the round ends after one turn (turn limit)
    (["2C 7D QS", "2D 7H QC", "2H 7S QD"], [0, 0, 0], [0.0, 0.0, 0.0]),         # all tied at 19
    (["2C 7D QS", "2D 7H QC", "AH 7S QD"], [0, 0, 0], [-0.5, -0.5, 1.0]),       # 19 19 18
    (["2C 7D QS", "2D 7H QC", "AH 7S QD"], [0, 0, 2], [0.5, 0.5, -1.0]),        # 19 19 20
    (["2C 7D QS", "2D 7H QC"], [5, 5], [0.0, 0.0]),
    (["2C 7D QS", "4D 5D 6D"], [0, 30], [1.0, -1.0]),                             # 19 vs 30 + 0
]


@pytest.mark.parametrize("hands, scores, rewards", WIN_CASES)
def test_win_rewards_at_the_end_of_the_game(hands: list[str], scores: list[int], rewards: list[float]) -> None:
    env = three_thirteen_v0.raw_env(num_players=len(hands), reward_mode="win", rounds=(1,), max_turns_per_round=1)
    env.reset(seed=0)
    state = env.game_state
    state.hands = [parse_cards(h) for h in hands]
    state.stock, state.scores = parse_cards("8D"), list(scores)
    state.current_player, env.agent_selection = 0, "player_0"
    env.step(DRAW_STOCK)
    env.step(DISCARD_BASE + parse_cards("8D")[0])
    assert all(env.terminations.values())
    assert [env.rewards[a] for a in env.possible_agents] == pytest.approx(rewards)
    assert three_thirteen_v0.win_rewards(state.scores) == pytest.approx(rewards)
    assert env.infos["player_0"]["final_scores"] == state.scores


# --------------------------------------------------------------------------- render
def test_ansi_render_shows_the_hand_to_move_and_the_scores() -> None:
    env = three_thirteen_v0.raw_env(num_players=3, render_mode="ansi")
    env.reset(seed=4)
    env.game_state.scores = [17, 42, 305]
    rng = np.random.default_rng(0)
    for _ in range(7):
        text = env.render()
        state = env.game_state
        assert isinstance(text, str)
        seat = state.current_player
        assert hand_text(state.hands[seat], state.wild_rank) in text
        assert all(card_str(c) in text for c in state.hands[seat])
        assert all(str(s) in text for s in (17, 42, 305))
        for other in range(3):
            if other != seat:
                assert hand_text(state.hands[other], state.wild_rank) not in text, "opponents' hands are hidden"
        env.step(random_legal(env, rng))


# --------------------------------------------------------------------------- options
BAD_KWARGS = [
    ({"colour": "red"}, "colour"),
    ({"reward_mode": "best"}, "reward_mode"),
    ({"render_mode": "3d"}, "render_mode"),
    ({"aces": "sometimes"}, "aces"),
    ({"rounds": (3, 1)}, "rounds"),
    ({"rounds": ()}, "rounds"),
    ({"rounds": (0, 1)}, "rounds"),
    ({"num_players": 9}, "num_players"),
    ({"num_players": 1}, "num_players"),
    ({"decks": 0}, "decks"),
    ({"decks": "many"}, "decks"),
    ({"num_players": 8, "decks": 2}, "decks"),
    ({"max_turns_per_round": 0}, "max_turns_per_round"),
    ({"discard_drawn_discard": "yes"}, "discard_drawn_discard"),
    ({"meld_needs_natural": 1}, "meld_needs_natural"),
]


@pytest.mark.parametrize("kwargs, name", BAD_KWARGS)
@pytest.mark.parametrize("make", [three_thirteen_v0.raw_env, three_thirteen_v0.env])
def test_bad_arguments_raise_a_clear_error(make, kwargs: dict, name: str) -> None:
    with pytest.raises((TypeError, ValueError), match=re.escape(name)) as err:
        make(**kwargs)
    assert "allowed" in str(err.value) or "use" in str(err.value) or "at least" in str(err.value)


def test_good_arguments_are_accepted() -> None:
    env = three_thirteen_v0.env(num_players=5, reward_mode="penalty", render_mode="ansi", decks=3,
                                aces="high_or_low", rounds=[2, 4], discard_drawn_discard=True,
                                max_turns_per_round=50, meld_needs_natural=True)
    rules = env.unwrapped.rules
    assert (rules.num_decks, rules.rounds, rules.aces_high) == (3, (2, 4), True)


# --------------------------------------------------------------------------- observe is pure
def test_observe_is_a_pure_function_of_the_state() -> None:
    env = three_thirteen_v0.raw_env(num_players=3, rounds=(4,))
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    for _ in range(10):
        env.step(random_legal(env, rng))
    state = env.game_state
    lay = get_layout(3)
    agent = "player_1"

    def view(name: str) -> np.ndarray:
        return lay.view(env.observe(agent)["observation"], name)

    first = env.observe(agent)["observation"].copy()
    assert np.array_equal(first, env.observe(agent)["observation"]), "observing changes nothing"
    # swap a card of the observer's hand for one it does not hold
    old = state.hands[1][0]
    new = next(c for c in range(52) if c not in state.hands[1])
    state.hands[1][0] = new
    assert np.array_equal(view("hand"), hand_vec(state.hands[1]))
    # append to the discard pile: new top, old top moves below
    below = list(state.discard_pile)
    state.discard_pile.append(old)
    assert np.flatnonzero(view("discard_top")).tolist() == [old]
    assert np.array_equal(view("discard_below"), hand_vec(below))
    # plain lists in place of the CardList fields give the same answer
    state.discard_pile = list(state.discard_pile)
    state.discards = [list(d) + [new] for d in state.discards]
    assert np.flatnonzero(view("discard_top")).tolist() == [old]
    assert np.array_equal(view("discard_below"), hand_vec(below))
    discards = view("opponent_discards").reshape(2, 52)
    assert np.array_equal(discards[0], hand_vec(state.discards[2]))   # left of seat 1 is seat 2
    assert np.array_equal(discards[1], hand_vec(state.discards[0]))
    state.discard_pile = CardList(below)
    assert np.array_equal(view("discard_below"), hand_vec(below[:-1]))
    # scores, went out and the round are read afresh too
    state.scores = [100, 200, 300]
    assert view("scores").tolist() == pytest.approx([2.0, 3.0, 1.0])
    state.went_out = 0
    assert view("went_out").tolist() == [0.0, 0.0, 1.0]


# --------------------------------------------------------------------------- documentation drift
def docstring_table(heading_row: str) -> str:
    lines = three_thirteen_v0.__doc__.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading_row))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[start:end])


def test_docstring_observation_table_matches_the_layout() -> None:
    assert docstring_table("| Index | Piece |") == layout_table(2)


def test_docstring_summary_table_matches_the_spaces() -> None:
    summary = docstring_table("| Import")
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in summary.splitlines()
            if not line.startswith("|--")}
    env2 = three_thirteen_v0.raw_env()
    n_actions = env2.action_space("player_0").n
    assert rows["Action Shape"] == f"Discrete({n_actions})" == rows["Action Values"]
    match = re.match(r"\((\d+) \* N \+ (\d+),\)", rows["Observation Shape"])
    assert match, rows["Observation Shape"]
    per_player, extra = map(int, match.groups())
    for num_players in range(2, 9):
        space = three_thirteen_v0.raw_env(num_players=num_players).observation_space("player_0")
        assert space["observation"].shape == (per_player * num_players + extra,)
    examples = re.findall(r"(\d+) for (\d+)", rows["Observation Shape"])
    assert examples
    for size, num_players in examples:
        space = three_thirteen_v0.raw_env(num_players=int(num_players)).observation_space("player_0")
        assert space["observation"].shape == (int(size),)
    low, high = re.search(r"(\d+) to (\d+)", rows["Number of agents"]).groups()
    assert (int(low), int(high)) == (2, 8)


# --------------------------------------------------------------------------- action codec
def test_action_encode_decode_round_trip_for_every_id() -> None:
    assert actions.NUM_ACTIONS == NUM_ACTIONS == 54
    kinds = Counter()
    for a in range(NUM_ACTIONS):
        move = actions.decode(a)
        assert actions.encode(move) == a
        kinds[move.kind] += 1
        if move.kind == "discard":
            assert move.card == a - DISCARD_BASE
            assert actions.discard_action(card_str(move.card).lower()) == a
            assert actions.action_name(a) == f"discard {card_str(move.card)}"
    assert kinds == {"draw_stock": 1, "take_discard": 1, "discard": 52}
    assert actions.decode(DRAW_STOCK).kind == "draw_stock" and actions.decode(TAKE_DISCARD).kind == "take_discard"


@pytest.mark.parametrize("bad", [-1, 54, 100])
def test_decode_rejects_ids_outside_the_space(bad: int) -> None:
    with pytest.raises(ValueError, match="0..53"):
        actions.decode(bad)


@pytest.mark.parametrize("move", [actions.Move("discard"), actions.Move("discard", 52), actions.Move("pass")])
def test_encode_rejects_bad_moves(move: actions.Move) -> None:
    with pytest.raises(ValueError, match="draw_stock, take_discard, discard"):
        actions.encode(move)


def test_from_rules_builds_the_env_of_a_rules_object() -> None:
    """Issue 24: callers that hold a ``Rules`` pass it as is (no dict without num_players to rebuild it from)."""
    from tt_env.engine.rules import Rules

    rules = Rules(num_players=3, rounds=(9, 10))
    env = three_thirteen_v0.raw_env.from_rules(rules, reward_mode="penalty")
    assert env.rules == rules and env.reward_mode == "penalty" and len(env.possible_agents) == 3
    with pytest.raises(TypeError):
        three_thirteen_v0.raw_env.from_rules({"num_players": 3})
