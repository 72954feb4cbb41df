"""The pure-Python solver's stop: it answers within ``MAX_SEARCH_STATES`` states or says it cannot.

The documented guarantee rests on a bound: a search over n naturals (counts c_t per card type)
and w wilds memoises at most prod(c_t + 1) * (w + 1)**2 states, so every hand of up to 16 cards
fits under the stop. These tests check the bound on many hands, that the stop raises a clear
``ValueError`` (with a lowered stop, so that they run fast), and that what it answers is C's.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from tt_env.engine import melds_py

try:
    from tt_env.engine import _meldsolver
except ImportError:  # pragma: no cover - the C accelerator is optional
    _meldsolver = None


def _hand(rng: np.random.Generator, size: int, wilds: int, wild: int, decks: int) -> list[int]:
    wilds = min(wilds, size)
    naturals = [c for c in (rng.permutation(52 * decks) % 52).tolist() if c % 13 + 1 != wild][:size - wilds]
    return naturals + [int(s) * 13 + wild - 1 for s in rng.integers(0, 4, size=wilds)]


def _bound(hand: list[int], wild: int) -> int:
    naturals = Counter(c for c in hand if c % 13 + 1 != wild)
    w = len(hand) - sum(naturals.values())
    return math.prod(k + 1 for k in naturals.values()) * (w + 1) ** 2


def _states(monkeypatch, hand, wild, aces_high=False, natural=False) -> int:
    searches = []
    original = melds_py._Search.__init__

    def record(self, *args):
        original(self, *args)
        searches.append(self)

    monkeypatch.setattr(melds_py._Search, "__init__", record)
    melds_py.discard_penalties(hand, wild, aces_high, natural)
    return len(searches[0].memo)


def test_the_state_bound_holds(monkeypatch):
    rng = np.random.default_rng(5)
    for i in range(300):
        wild = int(rng.integers(1, 14))
        hand = _hand(rng, int(rng.integers(1, 13)), int(rng.integers(0, 4)), wild, int(rng.integers(1, 4)))
        assert _states(monkeypatch, hand, wild, bool(i % 2), bool(i % 3 == 0)) <= _bound(hand, wild), hand


def test_every_hand_of_up_to_16_cards_fits_under_the_stop():
    worst = max(2 ** (16 - w) * (w + 1) ** 2 for w in range(17))
    assert worst <= melds_py.MAX_SEARCH_STATES


def test_the_stop_is_a_clear_value_error(monkeypatch):
    monkeypatch.setattr(melds_py, "MAX_SEARCH_STATES", 2_000)
    hand = _hand(np.random.default_rng(0), 26, 3, 7, 1)
    for entry in (melds_py.least_penalty, melds_py.discard_penalties, melds_py.solve):
        with pytest.raises(ValueError, match=r"hand of 26 cards \(3 wild\) needs more than the 2,000 search states"
                                             r".*C accelerator"):
            entry(hand, 7)
    with pytest.raises(ValueError, match="search states"):
        melds_py.after_draw_values(hand, [0, 1], 7)
    with pytest.raises(ValueError, match="search states"):
        melds_py.draw_gains([hand], [1 / 52] * 52, 7)


def test_below_the_stop_the_answers_are_cs(monkeypatch):
    if _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    rng = np.random.default_rng(8)
    for i in range(30):
        wild = int(rng.integers(1, 14))
        hand = _hand(rng, 16, int(rng.integers(0, 5)), wild, int(rng.integers(1, 3)))
        assert melds_py.discard_penalties(hand, wild, bool(i % 2)) == _meldsolver.discard_penalties(hand, wild, bool(i % 2))
        assert melds_py.solve(hand, wild, bool(i % 2)) == _meldsolver.solve(hand, wild, bool(i % 2))
