"""Scripted agents: legal play under every rule variant, greedy's exact choices, the view decoder."""

from __future__ import annotations

import time

import numpy as np
import pytest
from reference_solver import ref_least_penalty

from tt_env import three_thirteen_v0
from tt_env.agents import ExpertAgent, GreedyAgent, RandomAgent, list_agents, make_agent
from tt_env.agents.greedy import discard_key
from tt_env.observation.decode import decode_observation
from tt_env.engine import Rules, least_penalty
from tt_env.engine.cards import card_value, rank_of
from tt_env.engine.game import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD, action_mask, apply, new_game
from tt_env.observation import encode
from tt_env.evaluation.duplicate import play_game

VARIANTS = [
    dict(num_players=2),
    dict(num_players=2, aces="high_or_low", meld_needs_natural=True),
    dict(num_players=3, discard_drawn_discard=True),
    dict(num_players=4, rounds=(9, 10, 11), max_turns_per_round=40),
    dict(num_players=5, rounds=(1, 6, 11)),
]


def test_registry_names() -> None:
    assert {"random-v0", "greedy-v0", "expert-v0"} <= set(list_agents())
    rules = Rules()
    assert isinstance(make_agent("greedy-v0", rules), GreedyAgent)
    assert isinstance(make_agent("expert-v0", rules), ExpertAgent)
    assert make_agent("expert-v0", rules).name == "expert-v0"
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("nobody-v9", rules)


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_agents_only_play_legal_actions(options: dict) -> None:
    """Whole games mixing the three agents; ``play_game`` raises on any illegal choice."""
    rules = Rules(**options)
    n = rules.num_players
    kinds = [RandomAgent, GreedyAgent, ExpertAgent]
    for deal in range(3):
        agents = [kinds[(deal + i) % 3](rules) for i in range(n)]
        record = play_game(agents, rules, seed=11, deal=deal, rotation=deal % n)
        assert len(record.scores) == n and sum(record.moves) > 0


def test_agents_play_through_the_aec_env() -> None:
    """The same agents drive the PettingZoo env (raw_env raises on an illegal action)."""
    env = three_thirteen_v0.raw_env(num_players=3, rounds=(1, 2, 3, 11))
    env.reset(seed=3)
    agents = {"player_0": ExpertAgent(env.rules), "player_1": GreedyAgent(env.rules),
              "player_2": RandomAgent(env.rules)}
    rng = np.random.default_rng(0)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agents[name].act(obs["observation"], obs["action_mask"], rng))
    assert env.game_state.game_over


def _positions(rules: Rules, games: int, seed: int):
    """(state, seat) at every decision of games played by greedy agents."""
    agent = GreedyAgent(rules)
    rng = np.random.default_rng(seed)
    for g in range(games):
        state = new_game(rules, np.random.default_rng(seed * 1000 + g))
        while not state.game_over:
            seat = state.current_player
            yield state, seat
            apply(state, agent.act(encode(state, seat), action_mask(state), rng))


@pytest.mark.parametrize("options", [dict(), dict(aces="high_or_low"), dict(meld_needs_natural=True)],
                         ids=["default", "aces-high", "natural"])
def test_greedy_discards_the_least_penalty(options: dict) -> None:
    """Every greedy discard leaves the least penalty (reference solver), ties to the highest value."""
    rules = Rules(rounds=(1, 2, 3, 4, 5), **options)
    agent = GreedyAgent(rules)
    checked = 0
    for state, seat in _positions(rules, 4, seed=5):
        if state.phase != 1:
            continue
        hand = list(state.hands[seat])
        mask = action_mask(state)
        action = agent.act(encode(state, seat), mask, np.random.default_rng(0))
        legal = [a - DISCARD_BASE for a in np.flatnonzero(mask)]
        pen = {}
        for c in legal:
            rest = list(hand)
            rest.remove(c)
            pen[c] = ref_least_penalty(rest, state.wild_rank, rules.aces_high, rules.meld_needs_natural)
        best = min(pen.values())
        card = action - DISCARD_BASE
        assert pen[card] == best, (state.describe(), card, pen)
        top_value = max(card_value(rank_of(c), aces_high=rules.aces_high and rank_of(c) != state.wild_rank)
                        for c in legal if pen[c] == best)
        assert card_value(rank_of(card), aces_high=rules.aces_high and rank_of(card) != state.wild_rank) == top_value
        checked += 1
    assert checked > 50


def test_greedy_takes_the_discard_only_when_it_lowers_the_penalty() -> None:
    rules = Rules(rounds=(3, 7, 11))
    agent = GreedyAgent(rules)
    checked = 0
    for state, seat in _positions(rules, 4, seed=9):
        mask = action_mask(state)
        if state.phase != 0 or not (mask[DRAW_STOCK] and mask[TAKE_DISCARD]):
            continue
        hand, top, wild = list(state.hands[seat]), state.discard_pile[-1], state.wild_rank
        now = least_penalty(hand, wild)
        after = min(least_penalty([x for j, x in enumerate(hand) if j != i] + [top], wild)
                    for i, c in enumerate(hand) if c != top)
        expected = TAKE_DISCARD if after < now else DRAW_STOCK
        assert agent.act(encode(state, seat), mask, np.random.default_rng(0)) == expected
        checked += 1
    assert checked > 30


def test_discard_key_order() -> None:
    # equal penalty: the higher value goes first; then a natural card before a wild
    assert discard_key(5, 12, 13, False) < discard_key(5, 1, 13, False)  # KC (10) before 2C (2)
    assert discard_key(5, 12, 10, False) < discard_key(5, 9, 10, False)  # KC before TC, a wild (both 10)
    assert discard_key(4, 0, 13, False) < discard_key(5, 12, 13, False)


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_observation_view_matches_the_state(num_players: int) -> None:
    rules = Rules(num_players=num_players)
    for state, seat in _positions(rules, 1, seed=num_players):
        view = decode_observation(encode(state, seat))
        assert sorted(view.hand) == sorted(state.hands[seat])
        assert view.wild_rank == state.wild_rank and view.round_number == state.round_number
        assert view.phase == state.phase
        assert view.discard_top == (state.discard_pile[-1] if state.discard_pile else None)
        assert view.discard_below.sum() == max(0, len(state.discard_pile) - 1)
        for k in range(1, num_players):
            other = (seat + k) % num_players
            assert view.opponent_taken[k - 1].sum() == len(state.known_taken[other])
            assert view.opponent_discards[k - 1].sum() == len(state.discards[other])
        assert view.hand_sizes == [len(state.hands[(seat + k) % num_players]) for k in range(num_players)]
        assert view.scores == [state.scores[(seat + k) % num_players] for k in range(num_players)]
        expected_out = None if state.went_out is None else (state.went_out - seat) % num_players
        assert view.went_out == expected_out
        if state.round_index > 2:
            break


def test_expert_is_fast() -> None:
    """A few milliseconds a move at most (generous bound: the test machine may be busy)."""
    rules = Rules(rounds=(9, 10, 11))
    record = play_game([ExpertAgent(rules), GreedyAgent(rules)], rules, seed=1, deal=0, rotation=0)
    per_move = record.think_seconds[0] / record.moves[0]
    assert per_move < 0.02, f"expert-v0 takes {1000 * per_move:.1f} ms a move"


def test_expert_goes_out_when_it_can() -> None:
    rules = Rules(rounds=(1,))
    state = new_game(rules, np.random.default_rng(0))
    seat = state.current_player
    from tt_env.engine import parse_cards

    state.hands[seat] = parse_cards("4H 5H 6H 9C")
    state.phase = 1
    action = ExpertAgent(rules).act(encode(state, seat), action_mask(state), np.random.default_rng(0))
    assert action == DISCARD_BASE + parse_cards("9C")[0]


@pytest.mark.slow
def test_expert_beats_greedy_on_a_fixed_sample() -> None:
    """A deterministic regression check (the 2,000-deal proof is in docs/evaluation.md)."""
    rules = Rules()
    agents = [ExpertAgent(rules), GreedyAgent(rules)]
    start = time.perf_counter()
    diffs = [np.mean([(r := play_game(agents, rules, 2024, d, k)).scores[0] - r.scores[1] for k in range(2)])
             for d in range(12)]
    assert np.mean(diffs) < 0, diffs
    assert time.perf_counter() - start < 120


def test_make_agent_passes_keyword_options_to_the_factory():
    from tt_env.agents import make_agent
    from tt_env.engine.rules import Rules

    agent = make_agent("expert-v0", Rules(), gamma=1.25)
    assert agent.gamma == 1.25
    with pytest.raises(ValueError, match=r"takes no option\(s\) \['gama'\].*gamma"):
        make_agent("expert-v0", Rules(), gama=1.0)
    with pytest.raises(ValueError, match="allowed are none"):
        make_agent("random-v0", Rules(), anything=1)


def test_an_agent_factory_s_options_are_its_keywords_after_the_rules():
    """``factory_options`` (``make_agent``'s check of options, and ``takes_option``): the first
    argument, whatever its name, is the rules, not an option; ``**kwargs`` takes any option."""
    import tt_env.agents.registry as registry
    from tt_env.agents.registry import factory_options

    def odd(game_rules, speed=1, *, depth=2):
        return None

    def anything(rules, **options):
        return None

    assert factory_options(odd) == ["speed", "depth"]
    assert factory_options(anything) is None
    registry._AGENTS["test-anything-v0"] = anything
    try:
        assert registry.takes_option("test-anything-v0", "allow_rule_mismatch")
    finally:
        del registry._AGENTS["test-anything-v0"]
