"""Fuzzing of the C solver's fast path (tt_env/engine/meld_fast.c) and of the Python twin.

The C extension answers least penalties from a table-driven fast path where the hand is in its
scope, and from the general memoised search (the one that also lays out ``best_melds``)
elsewhere. The private hooks ``_fast_penalty`` (None outside the scope) and ``_search_penalty``
run one path each. Here: the fast path against the general search on seeded random hands of
1..20 cards from 1-4 decks, every wild rank 0..13, both ace variants and ``meld_needs_natural``;
both public backends against the brute-force reference on the small ones; hands built on the
edges of the fast path's scope; and hypothesis deals.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tt_env.engine import melds_py
from tt_env.engine.cards import cards_str, parse_cards

from reference_solver import ref_least_penalty

try:
    from tt_env.engine import _meldsolver
except ImportError:  # pragma: no cover - only where the C accelerator was not built
    _meldsolver = None

needs_c = pytest.mark.skipif(_meldsolver is None, reason="the C accelerator _meldsolver is not built")
ALL_WILD_RANKS = tuple(range(14))  # 0: no wilds; the API takes 1 and 2 too, the game 3..13


def _describe(hand, wild, aces_high, needs_natural) -> str:
    return (f"[{cards_str(sorted(hand))}] wild_rank={wild} aces_high={aces_high} "
            f"meld_needs_natural={needs_natural}")


def _deal(rng: np.random.Generator, size: int, decks: int, wild: int) -> list[int]:
    """A hand of ``size`` cards, at most ``decks`` copies of each, biased towards melds, wilds
    and (sometimes) one long suit, so that every branch of the fast path and its scope edges
    come up."""
    wild_share = float(rng.choice([0.0, 0.1, 0.25, 0.5])) if wild else 0.0
    suit_share = float(rng.choice([0.3, 0.3, 0.8]))
    suit, set_rank = int(rng.integers(4)), int(rng.integers(1, 14))
    centre = int(rng.integers(1, 14))
    counts: Counter[int] = Counter()
    hand: list[int] = []
    while len(hand) < size:
        u = rng.random()
        if u < wild_share:
            card = int(rng.integers(4)) * 13 + wild - 1
        elif u < wild_share + (1 - wild_share) * suit_share:
            card = suit * 13 + (centre - 1 + int(rng.integers(-4, 5))) % 13
        elif u < wild_share + (1 - wild_share) * (suit_share + 0.15):
            card = int(rng.integers(4)) * 13 + set_rank - 1
        else:
            card = int(rng.integers(52))
        if counts[card] < decks:
            counts[card] += 1
            hand.append(card)
    rng.shuffle(hand)
    return hand


def _case(rng: np.random.Generator, i: int, low: int, high: int) -> tuple[list[int], int, bool, bool]:
    wild = ALL_WILD_RANKS[i % len(ALL_WILD_RANKS)]  # every wild rank in turn
    decks = int(rng.integers(1, 5))
    return _deal(rng, int(rng.integers(low, high + 1)), decks, wild), wild, bool(rng.integers(2)), bool(rng.integers(2))


@needs_c
@pytest.mark.parametrize("seed", range(4))
def test_fast_path_matches_the_general_search(seed: int) -> None:
    rng = np.random.default_rng(9000 + seed)
    mismatches, in_scope, out_of_scope = [], 0, 0
    for i in range(3000):
        hand, wild, aces_high, natural = _case(rng, i, 1, 20)
        expected = _meldsolver._search_penalty(hand, wild, aces_high, natural)
        fast = _meldsolver._fast_penalty(hand, wild, aces_high, natural)
        public = _meldsolver.least_penalty(hand, wild, aces_high, natural)
        in_scope += fast is not None
        out_of_scope += fast is None
        if public != expected or fast not in (None, expected):
            mismatches.append(f"{_describe(hand, wild, aces_high, natural)}: search {expected}, "
                              f"fast {fast}, least_penalty {public}")
    assert not mismatches, f"{len(mismatches)} hands differ:\n" + "\n".join(mismatches[:10])
    # both sides of the scope must come up often, or the comparison proves little
    assert in_scope >= 1500 and out_of_scope >= 100, (in_scope, out_of_scope)


@pytest.mark.parametrize("backend", ["c", "python"])
@pytest.mark.parametrize("seed", range(2))
def test_least_penalty_matches_reference_all_wild_ranks_and_decks(backend: str, seed: int) -> None:
    if backend == "c" and _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    solver = _meldsolver if backend == "c" else melds_py
    rng = np.random.default_rng(9100 + seed)
    mismatches, zero = [], 0
    for i in range(280):
        hand, wild, aces_high, natural = _case(rng, i, 1, 11)
        expected = ref_least_penalty(hand, wild, aces_high, natural)
        got = [solver.least_penalty(hand, wild, aces_high, natural)]
        if backend == "c":
            fast = _meldsolver._fast_penalty(hand, wild, aces_high, natural)
            got.append(expected if fast is None else fast)
        zero += expected == 0
        if any(g != expected for g in got):
            mismatches.append(f"{_describe(hand, wild, aces_high, natural)}: reference {expected}, {backend} {got}")
    assert not mismatches, f"{len(mismatches)} hands differ:\n" + "\n".join(mismatches[:10])
    assert zero >= 20, f"only {zero} fully melded hands"


def test_python_twin_matches_c_on_game_sized_and_larger_hands() -> None:
    if _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    rng = np.random.default_rng(9200)
    for i in range(250):
        hand, wild, aces_high, natural = _case(rng, i, 12, 20)
        assert melds_py.least_penalty(hand, wild, aces_high, natural) == \
            _meldsolver.least_penalty(hand, wild, aces_high, natural), _describe(hand, wild, aces_high, natural)


# (hand, wild rank, aces high, meld needs natural): on the edges of the fast path's scope
HEARTS = "AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"
EDGE_CASES = [
    (HEARTS.replace("7H ", "") + " 7C 7D", 7, False, True),        # one suit heavy: 12 naturals + 2 wilds
    (HEARTS.replace("7H ", "") + " 7C 7D 7S", 7, False, True),
    (HEARTS.replace("7H ", "") + " 7C 7D 4C 4D 9S", 7, True, True),  # heavy suit, light suits too
    ("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 5C 5D 5S", 5, True, False),
    ("AH 2H 3H 4H 6H 7H 8H 9H TH JH QH 5C 5D 5S", 5, False, True),
    (" ".join(["9C 9D 9H 9S"] * 4) + " 4H", 9, False, True),      # 16 wilds: past the table's budget
    (" ".join(["9C 9D 9H 9S"] * 4), 9, False, False),
    ("9C 9D 9H 9S 9C 9D 9H 9S 9C 9D 9H 9S 9C 9D 9H 4H 4D", 9, False, True),  # 15 wilds
    ("7H 7H 7H 8H 9H", 0, False, False),                           # three copies of a card
    ("7H 7H 7H 7H 8H 8H 9H 9H", 9, False, False),
    ("4H 4H 5H 5H 6H 6H 7H 7H 8H 8H KC", 0, False, False),         # a suit of doubled cards
    ("4H 4H 5H 5H 6H 6H 7H 7H 8H 8H KC QS", 12, False, True),
    ("AH AH KH KH QH QH 2H 2H 3H 5S", 5, True, False),             # doubled aces, high and low
    ("AH AH KH KH QH QH 2H 2H 3H 5S", 5, False, False),
    ("AH AH AC AC AD 2H 3H QC KC", 0, True, False),
    ("KH KH KC KD QH QH JH", 0, True, False),
    ("AS", 0, False, False), ("AS", 1, False, True), ("2S 2S", 2, False, False),
    ("9C", 9, False, False), ("9C 9D", 9, False, False), ("9C 9D 9H", 9, False, True),
    ("9C 9D 9H", 9, False, False), ("5H 9C 9D 9H", 9, False, True),
]


@needs_c
@pytest.mark.parametrize(("hand", "wild", "aces_high", "natural"), EDGE_CASES)
def test_scope_edges(hand: str, wild: int, aces_high: bool, natural: bool) -> None:
    cards = parse_cards(hand)
    expected = _meldsolver._search_penalty(cards, wild, aces_high, natural)
    if len(cards) <= 12:
        assert ref_least_penalty(cards, wild, aces_high, natural) == expected
    fast = _meldsolver._fast_penalty(cards, wild, aces_high, natural)
    assert fast in (None, expected)
    assert _meldsolver.least_penalty(cards, wild, aces_high, natural) == expected
    assert melds_py.least_penalty(cards, wild, aces_high, natural) == expected


@needs_c
def test_scope_edges_take_both_paths() -> None:
    outside = [h for h, w, a, n in EDGE_CASES if _meldsolver._fast_penalty(parse_cards(h), w, a, n) is None]
    assert 4 <= len(outside) < len(EDGE_CASES), outside


@st.composite
def _deals(draw: st.DrawFn, max_size: int) -> tuple[list[int], int, bool, bool]:
    wild = draw(st.sampled_from(ALL_WILD_RANKS))
    decks = draw(st.integers(1, 4))
    suit = draw(st.integers(0, 3))
    near = st.builds(lambda r: suit * 13 + r, st.integers(0, 12))
    pool = [st.integers(0, 51), near] + ([st.builds(lambda s: s * 13 + wild - 1, st.integers(0, 3))] if wild else [])
    counts: Counter[int] = Counter()
    hand = []
    for card in draw(st.lists(st.one_of(pool), min_size=1, max_size=max_size)):
        if counts[card] < decks:
            counts[card] += 1
            hand.append(card)
    return hand, wild, draw(st.booleans()), draw(st.booleans())


FUZZ_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@needs_c
@FUZZ_SETTINGS
@given(_deals(max_size=20))
def test_property_fast_path_matches_search(deal) -> None:
    hand, wild, aces_high, natural = deal
    expected = _meldsolver._search_penalty(hand, wild, aces_high, natural)
    assert _meldsolver._fast_penalty(hand, wild, aces_high, natural) in (None, expected)
    assert _meldsolver.least_penalty(hand, wild, aces_high, natural) == expected


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_deals(max_size=9))
def test_property_both_backends_match_reference(deal) -> None:
    hand, wild, aces_high, natural = deal
    expected = ref_least_penalty(hand, wild, aces_high, natural)
    assert melds_py.least_penalty(hand, wild, aces_high, natural) == expected
    if _meldsolver is not None:
        assert _meldsolver.least_penalty(hand, wild, aces_high, natural) == expected
