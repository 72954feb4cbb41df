"""Worlds drawn from a learned belief (``sample_world(..., belief=model)``) and the belief's contract.

The same guarantees as ``determinize``: the world re-encodes to the observation exactly, the
true position is in its support (and every arrangement is reachable), and the true hidden
cards cannot influence the draw; plus the belief's own: ``card_probs`` rows add up to each
opponent's unknown count, never exceed the unseen copies, and follow the observation's
order of opponents.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from models.belief import Belief  # noqa: E402
from models.belief_net import BeliefNet  # noqa: E402
from tt_env.engine import Rules, game  # noqa: E402
from tt_env.engine.melds import least_penalty  # noqa: E402
from tt_env.observation import encode, get_layout  # noqa: E402
from tt_env.search import sample_world  # noqa: E402

CONFIGS = [Rules(), Rules(num_players=3), Rules(num_players=4, aces="high_or_low"),
           Rules(num_players=2, decks=2, rounds=(11,)), Rules(num_players=5, decks=3, rounds=(1, 6, 11))]


def random_belief(rules: Rules, seed: int = 0) -> Belief:
    """An untrained network with random output weights: far from uniform, as a trained one is."""
    torch.manual_seed(seed)
    net = BeliefNet(rules.num_players, width=8, blocks=1)
    torch.nn.init.normal_(net.head.weight, std=2.0)
    return Belief(net, rules)


BELIEFS = {i: random_belief(rules, i) for i, rules in enumerate(CONFIGS)}


def _play(rules: Rules, seed: int, steps: int) -> game.GameState:
    rng = np.random.default_rng(seed)
    state = game.new_game(rules, rng)
    for _ in range(steps):
        nxt, _ = game.applied(state, int(rng.choice(game.legal_actions(state))), rng)
        if nxt.game_over:
            break
        state = nxt
    return state


def _unknown(state: game.GameState, seat: int) -> Counter:
    return Counter(state.hands[seat]) - Counter(state.known_taken[seat])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=st.integers(0, len(CONFIGS) - 1), seed=st.integers(0, 2 ** 32 - 1), steps=st.integers(0, 300),
       sample_seed=st.integers(0, 2 ** 32 - 1))
def test_belief_worlds_reproduce_the_observation_and_hold_the_truth(config, seed, steps, sample_seed):
    rules, belief = CONFIGS[config], BELIEFS[config]
    state = _play(rules, seed, steps)
    n = rules.num_players
    seat = state.current_player
    obs, mask = encode(state, seat), game.action_mask(state)
    world = sample_world(obs, rules, np.random.default_rng(sample_seed), action_mask=mask, belief=belief)
    np.testing.assert_array_equal(encode(world, 0), obs)
    np.testing.assert_array_equal(game.action_mask(world), mask)
    hidden = Counter(state.stock) + sum((_unknown(state, (seat + k) % n) for k in range(1, n)), Counter())
    drawn = Counter(world.stock) + sum((_unknown(world, k) for k in range(1, n)), Counter())
    assert drawn == hidden
    for k in range(1, n):
        assert sum(_unknown(world, k).values()) == sum(_unknown(state, (seat + k) % n).values())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=st.integers(0, len(CONFIGS) - 1), seed=st.integers(0, 2 ** 32 - 1), steps=st.integers(0, 300))
def test_card_probs_respect_counts_and_copies(config, seed, steps):
    rules, belief = CONFIGS[config], BELIEFS[config]
    state = _play(rules, seed, steps)
    n, seat = rules.num_players, state.current_player
    obs = encode(state, seat)
    probs = belief.card_probs(obs)
    assert probs.shape == (n - 1, 52)
    seen = Counter(state.hands[seat]) + Counter(state.discard_pile)
    for k in range(1, n):
        seen += Counter(state.known_taken[(seat + k) % n])
    unseen = np.array([rules.num_decks - seen[c] for c in range(52)])
    for k in range(1, n):
        other = (seat + k) % n
        assert probs[k - 1].sum() == pytest.approx(sum(_unknown(state, other).values()), abs=1e-6)
    assert (probs >= 0).all() and (probs <= unseen[None] + 1e-9).all()
    assert (probs[:, unseen == 0] == 0).all()


def test_the_opponents_come_in_the_observations_order():
    """A belief that holds each opponent's discards against it: rows follow the observation's
    opponents (from the seat's left), so swapping the opponents' blocks swaps the rows."""
    rules = Rules(num_players=3)
    belief = BELIEFS[1]
    state = _play(rules, 4, 60)
    obs = encode(state, state.current_player)
    lay = get_layout(3)
    swapped = obs.copy()
    for piece in ("opponent_taken", "opponent_discards"):
        block = lay.view(swapped, piece)
        block[:] = np.concatenate([block[52:], block[:52]])
    sizes = lay.view(swapped, "hand_sizes")
    sizes[1:] = sizes[1:][::-1].copy()
    np.testing.assert_allclose(belief.card_probs(swapped), belief.card_probs(obs)[::-1])


def test_the_true_hidden_cards_never_influence_the_draw():
    rules = Rules(num_players=3)
    state = _play(rules, 5, 37)
    other = state.copy()
    unknown = [c for c in other.hands[1] if c not in other.known_taken[1]]
    i = other.hands[1].index(unknown[0])
    other.hands[1][i], other.stock[0] = other.stock[0], other.hands[1][i]
    assert other.hands[1] != state.hands[1]
    np.testing.assert_array_equal(encode(other, 0), encode(state, 0))
    belief = BELIEFS[1]
    a = sample_world(encode(state, 0), rules, np.random.default_rng(9), belief=belief)
    b = sample_world(encode(other, 0), rules, np.random.default_rng(9), belief=belief)
    assert a.to_dict() == b.to_dict()


def test_every_hand_is_reachable_and_draws_follow_the_belief():
    """Round 1 at two players: every unseen card reaches the opponent's hand, at the belief's rate."""
    rules = Rules()
    belief = BELIEFS[0]
    state = _play(rules, 11, 0)
    obs = encode(state, state.current_player)
    expected = belief.card_probs(obs)[0]
    rng = np.random.default_rng(0)
    draws = 3000
    counts = Counter()
    for _ in range(draws):
        counts.update(sample_world(obs, rules, rng, belief=belief).hands[1])
    unseen = set(np.flatnonzero(expected > 0).tolist())
    assert set(counts) == unseen  # every unseen card reaches the hand, nothing else does
    for card in unseen:
        p = expected[card]
        sd = (draws * p * (1 - p)) ** 0.5
        assert abs(counts[card] - draws * p) < 5 * sd + 3, (card, counts[card], draws * p)


def test_an_opponent_that_would_have_gone_out_is_redrawn():
    """After it discarded, the opponent cannot hold a fully melded hand (it would have gone out)."""
    rules = Rules(rounds=(1,))  # three cards, threes wild: melded hands are common
    belief = BELIEFS[0]
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(40):
        state = _play(rules, seed, 2)  # the first player has drawn and discarded
        if state.round_number != 1 or state.went_out is not None or not state.discards[1 - state.current_player]:
            continue
        obs, mask = encode(state, state.current_player), game.action_mask(state)
        for _ in range(20):
            world = sample_world(obs, rules, rng, action_mask=mask, belief=belief)
            assert least_penalty(world.hands[1], world.wild_rank) > 0
            checked += 1
    assert checked > 100
