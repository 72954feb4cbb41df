"""The last turn after someone went out, solved exactly (tt_env/agents/last_turn.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from models.expert_features import ExpertFeaturizer
from models.networks import build_network
from tt_env.agents import ExpertAgent, ISMCTSAgent
from tt_env.agents.last_turn import expected_penalties, last_turn_scores
from tt_env.observation.decode import decode_observation
from tt_env.engine import Rules
from tt_env.engine.game import DRAW_STOCK, TAKE_DISCARD
from tt_env.engine.melds import least_penalty

from test_expert_features import _positions as expert_positions


def _brute_force(hand: list[int], top: int, weights: list[float], wild: int, ban_top: bool) -> tuple[float, float]:
    """The same two numbers from least_penalty alone: every draw, every discard."""
    def best_after(cards: list[int], banned: int | None) -> int:
        options = [c for c in set(cards) if c != banned] or list(set(cards))
        return min(least_penalty(cards[:cards.index(c)] + cards[cards.index(c) + 1:], wild) for c in options)

    take = best_after(hand + [top], top if ban_top else None)
    stock = sum(w * best_after(hand + [u], None) for u, w in enumerate(weights) if w > 0)
    return float(stock), float(take)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_expected_penalties_match_brute_force(data):
    size = data.draw(st.integers(3, 10), label="hand size")
    cards = data.draw(st.lists(st.integers(0, 51), min_size=size + 1, max_size=size + 1), label="cards")
    hand, top = cards[:size], cards[size]
    wild = data.draw(st.integers(1, 13), label="wild rank")
    unseen = data.draw(st.lists(st.integers(0, 51), min_size=1, max_size=12, unique=True), label="unseen")
    weights = [0.0] * 52
    for u in unseen:
        weights[u] = 1.0 / len(unseen)
    for ban in (True, False):
        got = expected_penalties(hand, top, weights, wild, discard_drawn_discard=not ban)
        assert got == pytest.approx(_brute_force(hand, top, weights, wild, ban))


def test_a_stock_draw_can_beat_a_discard_that_lowers_the_penalty():
    """The case expert-v0 plays wrong: taking a 9 for a king saves 1 point, while half the unseen
    cards complete a run and save 10."""
    wild = 2  # twos wild, none in play
    # hearts 5-6 (a run needs a third), the king of spades, the queen of clubs; clubs are 0-12
    h = lambda rank: 13 * 2 + rank - 1  # noqa: E731  (a heart of that rank)
    hand = [h(5), h(6), 13 * 3 + 12, 13 * 0 + 11]
    top = 13 * 1 + 8  # the nine of diamonds
    weights = [0.0] * 52
    weights[h(4)] = weights[h(7)] = 0.25  # a heart 4 or 7 completes the run
    weights[13 * 1 + 9] = weights[13 * 1 + 10] = 0.25  # or a ten or jack of diamonds: no help
    stock, take = expected_penalties(hand, top, weights, wild)
    now = least_penalty(hand, wild)
    assert take < now  # taking the nine lowers the penalty: expert-v0 would take it
    assert stock < take  # but the stock is better in expectation


def _last_turn_positions(rules: Rules, games: int, seed: int = 0):
    """(observation, mask) of the last-turn draws with both draws legal in expert self-play."""
    return [(obs, mask) for obs, mask, _ in expert_positions(rules, games, seed)
            if mask[DRAW_STOCK] and mask[TAKE_DISCARD] and decode_observation(obs).went_out is not None]


def test_ismcts_plays_the_last_turn_by_its_exact_expectation():
    rules = Rules(rounds=(6, 9, 11))
    exact = ISMCTSAgent(rules, worlds=2, min_worlds=2)
    greedy = ISMCTSAgent(rules, worlds=2, min_worlds=2, exact_last_turn=False)
    expert = ExpertAgent(rules)
    positions = _last_turn_positions(rules, 6)
    assert len(positions) >= 6
    differ = 0
    for obs, mask in positions:
        view = decode_observation(obs)
        stock, take = expected_penalties(view.hand, view.discard_top, view.unseen_weights(rules.num_decks), view.wild_rank)
        want = TAKE_DISCARD if take < stock else DRAW_STOCK
        assert exact.act(obs, mask, np.random.default_rng(0)) == want == last_turn_scores(view, rules)[0][0]
        first = expert.act(obs, mask, np.random.default_rng(0))
        assert greedy.act(obs, mask, np.random.default_rng(0)) == first
        differ += want != first
    assert differ > 0  # the positions include some that expert-v0 plays differently
    with pytest.raises(ValueError, match="exact_last_turn"):
        ISMCTSAgent(rules, exact_last_turn=1)


def test_untrained_cardnet_with_the_exact_last_turn_plays_it_exactly():
    rules = Rules(rounds=(6, 9, 11))
    positions = _last_turn_positions(rules, 6, seed=1)
    obs = np.stack([p[0] for p in positions])
    masks = np.stack([p[1] for p in positions])
    torch.manual_seed(0)
    net = build_network("cardnet", num_players=2, channels=8, hidden=16, expert_features=True,
                        exact_last_turn=True).eval()
    with torch.no_grad():
        dist, _ = net(obs, masks)
    chosen = dist.probs.argmax(dim=1).numpy()
    want = [last_turn_scores(decode_observation(o), rules)[0][0] for o in obs]
    _, scalars = ExpertFeaturizer(2, exact_last_turn=True)(obs, masks)
    close = np.abs(scalars[:, 0]) < 0.01  # within 0.1 point: the untrained head may tip a near-tie
    assert ((chosen == np.array(want)) | close).all()
    assert net.config()["exact_last_turn"] is True
    with pytest.raises(ValueError, match="exact_last_turn=True needs expert_features=True"):
        build_network("cardnet", num_players=2, exact_last_turn=True, expert_features=False)
