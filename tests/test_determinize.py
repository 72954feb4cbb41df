"""``tt_env.search.determinize`` and the engine's cheap copies for search.

A determinization must reproduce the observation exactly, put the true position in its
support, read nothing hidden, and sample the hidden cards uniformly.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tt_env.engine import Rules, game
from tt_env.observation import encode
from tt_env.search import InconsistentObservation, determinize

CONFIGS = [
    Rules(),
    Rules(num_players=3),
    Rules(num_players=4, aces="high_or_low"),
    Rules(num_players=5, decks=3, rounds=(1, 5, 11), max_turns_per_round=30),
    Rules(num_players=8, rounds=(10, 11)),
    Rules(num_players=2, discard_drawn_discard=True, max_turns_per_round=15, meld_needs_natural=True),
    Rules(num_players=2, decks=4, rounds=(11,)),
    Rules(num_players=6, decks=2, max_turns_per_round=12, rounds=(3, 4)),
]


def _play(rules: Rules, seed: int, steps: int) -> game.GameState:
    """A position ``steps`` random legal actions into a game (or its last position)."""
    rng = np.random.default_rng(seed)
    state = game.new_game(rules, rng)
    for _ in range(steps):
        legal = game.legal_actions(state)
        if not legal:
            break
        nxt, _ = game.applied(state, int(rng.choice(legal)), rng)
        if nxt.game_over:
            break
        state = nxt
    return state


def _hidden_of(state: game.GameState, observer: int) -> tuple[Counter, list[int]]:
    """The multiset of cards hidden from ``observer`` and each opponent's unknown slot count (from its left)."""
    n = state.rules.num_players
    hidden = Counter(state.stock)
    slots = []
    for k in range(1, n):
        seat = (observer + k) % n
        unknown = Counter(state.hands[seat]) - Counter(state.known_taken[seat])
        hidden += unknown
        slots.append(sum(unknown.values()))
    return hidden, slots


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=st.integers(0, len(CONFIGS) - 1), seed=st.integers(0, 2 ** 32 - 1), steps=st.integers(0, 400),
       sample_seed=st.integers(0, 2 ** 32 - 1))
def test_determinization_reproduces_the_observation_and_holds_the_truth(config, seed, steps, sample_seed):
    rules = CONFIGS[config]
    state = _play(rules, seed, steps)
    n = rules.num_players
    for seat in range(n):
        obs = encode(state, seat)
        mask = game.action_mask(state) if seat == state.current_player else None
        sample = determinize(obs, rules, np.random.default_rng(sample_seed), action_mask=mask)
        np.testing.assert_array_equal(encode(sample, 0), obs)
        if mask is not None:
            assert sample.current_player == 0
            np.testing.assert_array_equal(game.action_mask(sample), mask)
        # the true position is in the support: same hidden multiset, same unknown slots
        true_hidden, true_slots = _hidden_of(state, seat)
        sample_hidden, sample_slots = _hidden_of(sample, 0)
        assert sample_hidden == true_hidden and sample_slots == true_slots
        assert sample.rules is rules and sample.round_number == state.round_number
        assert sample.went_out == (None if state.went_out is None else (state.went_out - seat) % n)


def test_every_position_of_every_configuration_round_trips():
    """Exhaustive over whole games (not sampled positions): each seat's view at each step."""
    checked = 0
    for index, rules in enumerate(CONFIGS):
        rng = np.random.default_rng(100 + index)
        state = game.new_game(rules, rng)
        while not state.game_over:
            seat = state.current_player
            obs, mask = encode(state, seat), game.action_mask(state)
            sample = determinize({"observation": obs, "action_mask": mask}, rules, rng)
            np.testing.assert_array_equal(encode(sample, 0), obs)
            np.testing.assert_array_equal(game.action_mask(sample), mask)
            game.apply(state, int(rng.choice(game.legal_actions(state))))
            checked += 1
    assert checked > 1000


def test_the_true_hidden_cards_never_influence_the_sample():
    rules = Rules(num_players=3)
    state = _play(rules, 5, 37)
    other = state.copy()
    # swap a hidden card of seat 1 (not known taken) with one of the stock: seat 0 cannot tell
    unknown = [c for c in other.hands[1] if c not in other.known_taken[1]]
    i, j = other.hands[1].index(unknown[0]), 0
    other.hands[1][i], other.stock[j] = other.stock[j], other.hands[1][i]
    assert other.hands[1] != state.hands[1]
    np.testing.assert_array_equal(encode(other, 0), encode(state, 0))
    a = determinize(encode(state, 0), rules, np.random.default_rng(9))
    b = determinize(encode(other, 0), rules, np.random.default_rng(9))
    assert a.to_dict() == b.to_dict()


def test_same_observation_and_rng_state_give_the_same_sample():
    rules = Rules(num_players=4)
    state = _play(rules, 3, 120)
    obs = encode(state, 2)
    assert (determinize(obs, rules, np.random.default_rng(4)).to_dict()
            == determinize(obs, rules, np.random.default_rng(4)).to_dict())
    assert (determinize(obs, rules, np.random.default_rng(4)).to_dict()
            != determinize(obs, rules, np.random.default_rng(5)).to_dict())


def test_hidden_cards_are_dealt_uniformly():
    """Each hidden card lands in the opponent's unknown slots with probability slots / hidden."""
    rules = Rules()
    state = _play(rules, 11, 0)  # round 1: the opponent holds 3 unknown cards, 45 more are hidden
    obs = encode(state, state.current_player)
    rng = np.random.default_rng(0)
    draws = 4000
    counts = Counter()
    for _ in range(draws):
        sample = determinize(obs, rules, rng)
        counts.update(sample.hands[1])
    hidden, slots = _hidden_of(state, state.current_player)
    p = slots[0] / sum(hidden.values())
    sd = (draws * p * (1 - p)) ** 0.5
    for card in hidden:
        assert abs(counts[card] - draws * p) < 5 * sd, (card, counts[card], draws * p)
    assert set(counts) == set(hidden)  # every hidden card reaches the hand, and nothing else does


def test_the_discard_ban_is_recovered_from_the_mask():
    rules = Rules()
    rng = np.random.default_rng(2)
    state = game.new_game(rules, rng)
    game.apply(state, game.TAKE_DISCARD)
    mask = game.action_mask(state)
    sample = determinize(encode(state, state.current_player), rules, rng, action_mask=mask)
    assert sample.taken_this_turn == state.taken_this_turn
    np.testing.assert_array_equal(game.action_mask(sample), mask)


def test_inconsistent_observations_are_refused():
    rules = Rules()
    obs = encode(_play(rules, 1, 10), 0)
    with pytest.raises(InconsistentObservation, match="does not fit 3 players"):
        determinize(obs, Rules(num_players=3), np.random.default_rng(0))
    broken = obs.copy()
    broken[0:52] = 0
    broken[0:3] = 2.0  # two copies of a card with one deck
    with pytest.raises(InconsistentObservation):
        determinize(broken, rules, np.random.default_rng(0))
    with pytest.raises(InconsistentObservation, match="rules.rounds"):
        determinize(obs, Rules(rounds=(10, 11)), np.random.default_rng(0))


# ---------------------------------------------------------------- the engine's copies
def test_copy_is_independent_and_replays_like_the_original():
    rules = Rules(num_players=3)
    state = _play(rules, 8, 50)
    before = state.to_dict()
    dup = state.copy()
    rng = np.random.default_rng(1)
    while not dup.game_over:
        game.apply(dup, int(rng.choice(game.legal_actions(dup))))
    assert state.to_dict() == before
    # without an rng the copy's generators are copies: the same actions give the same game
    a, b = state.copy(), state.copy()
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    while not a.game_over:
        game.apply(a, int(rng_a.choice(game.legal_actions(a))))
        game.apply(b, int(rng_b.choice(game.legal_actions(b))))
    assert a.to_dict() == b.to_dict()
    assert state.to_dict() == before


def test_copy_keeps_pile_counts_exact():
    state = _play(Rules(), 4, 80)
    dup = state.copy(np.random.default_rng(0))
    dup.discard_pile.append(5)
    assert list(dup.discard_pile.counts) != list(state.discard_pile.counts)
    assert list(state.discard_pile.counts) == [float(state.discard_pile.count(c)) for c in range(52)]


def test_applied_leaves_the_state_untouched_and_round_penalties_score_the_round():
    rules = Rules(rounds=(4,), max_turns_per_round=6)
    rng = np.random.default_rng(6)
    state = game.new_game(rules, np.random.default_rng(7))
    while True:
        before = state.to_dict()
        expected = game.round_penalties(state)
        action = int(rng.choice(game.legal_actions(state)))
        child, result = game.applied(state, action, np.random.default_rng(0))
        assert state.to_dict() == before
        if result.round_record is not None:
            if state.phase == game.PHASE_DISCARD:
                # the points of the round are those of the hands after the last discard
                last = state.copy(np.random.default_rng(0))
                last.hands[last.current_player].remove(action - game.DISCARD_BASE)
                expected = game.round_penalties(last)
            assert result.round_record.points == expected
            break
        state = child
