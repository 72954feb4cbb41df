"""The exact meld solver (tt_env/engine/melds.py, its C and Python backends).

Layers (STYLE.md G11): known answers written in card strings, one per melding rule of
RULES.md; both backends (``solve`` and ``least_penalty``) against the brute-force reference of
tests/reference_solver.py on thousands of seeded random hands; the C backend against the
Python one on 14-card two-deck hands; and the arrangement ``best_melds`` returns checked card
by card. The hypothesis properties are in tests/test_melds_properties.py; the C fast path's
own fuzzing in tests/test_melds_fuzz.py; backend selection, input errors and
``discard_penalties`` in tests/test_solver_backends.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import os

import numpy as np
import pytest

from tt_env.engine import melds_py
from tt_env.engine.cards import cards_str, parse_cards
from tt_env.engine.melds import SOLVER_BACKEND, best_melds, is_valid_meld, least_penalty, penalty_of

from reference_solver import ref_is_valid_meld, ref_least_penalty, ref_rank, ref_value

try:
    from tt_env.engine import _meldsolver
except ImportError:  # pragma: no cover - only where the C accelerator was not built
    _meldsolver = None

Solve = Callable[[list[int], int, bool, bool], tuple]
BACKENDS: dict[str, Solve | None] = {
    "c": _meldsolver.solve if _meldsolver is not None else None,
    "python": melds_py.solve,
}
PENALTY: dict[str, Callable[[list[int], int, bool, bool], int] | None] = {
    "c": _meldsolver.least_penalty if _meldsolver is not None else None,
    "python": melds_py.least_penalty,
}
GAME_WILD_RANKS = (0, *range(3, 14))  # 0: no wilds; rounds 1..11 make 3..K wild


def _backend(name: str) -> Solve:
    solve = BACKENDS[name]
    if solve is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    return solve


def _describe(hand: Sequence[int], wild: int, aces_high: bool, needs_natural: bool) -> str:
    return (f"[{cards_str(sorted(hand))}] wild_rank={wild} aces_high={aces_high} "
            f"meld_needs_natural={needs_natural}")


def test_default_backend_is_c_when_built() -> None:
    forced_python = os.environ.get("TT_ENV_SOLVER", "").strip() == "python"
    assert SOLVER_BACKEND == ("c" if _meldsolver is not None and not forced_python else "python")


# --------------------------------------------------------------------------- known answers
# (hand, wild rank (0: none), aces high, meld needs natural, least penalty). Every value is
# worked out by hand from RULES.md; the comment says how.
KNOWN = [
    # sets
    ("7H 7C 7D", 0, False, False, 0, "set-of-three"),
    ("7H 7C 7D 7S", 0, False, False, 0, "set-of-four"),
    ("7H 7C", 0, False, False, 14, "pair-is-no-meld"),
    ("7H 7C 8D", 0, False, False, 22, "pair-plus-other"),
    ("AH AC AD", 0, True, False, 0, "set-of-aces-high-variant"),
    # runs
    ("4H 5H 6H", 0, False, False, 0, "run-of-three"),
    ("6H 4H 8H 5H 7H", 0, False, False, 0, "run-of-five-any-order"),
    ("4H 5C 6H", 0, False, False, 15, "run-needs-one-suit"),
    ("4H 6H 7H", 0, False, False, 17, "run-needs-consecutive"),
    ("2H 3H 4H 6H 7H 8H", 0, False, False, 0, "two-runs-one-suit"),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", 0, False, False, 0, "run-of-13"),
    # aces: A-2-3 always, Q-K-A only high_or_low, K-A-2 never; unmelded ace 1 or 15
    ("AS 2S 3S", 0, False, False, 0, "a23-low"),
    ("AS 2S 3S", 0, True, False, 0, "a23-high-or-low"),
    ("QS KS AS", 0, False, False, 21, "qka-not-in-low"),
    ("QS KS AS", 0, True, False, 0, "qka-high-or-low"),
    ("KS AS 2S", 0, False, False, 13, "ka2-never-low"),
    ("KS AS 2S", 0, True, False, 27, "ka2-never-high-ace-15"),
    ("AS 5C", 0, False, False, 6, "ace-costs-1"),
    ("AS 5C", 0, True, False, 20, "ace-costs-15-high-or-low"),
    ("AH AC", 0, True, False, 30, "two-aces-cost-15-each"),
    ("AH 2H QH KH", 0, False, False, 23, "a2-and-qk-low"),
    ("AH 2H QH KH", 0, True, False, 2, "ace-ends-one-run-only"),
    ("AH AH 2H 3H QH KH", 0, False, False, 21, "two-decks-second-ace-low"),
    ("AH AH 2H 3H QH KH", 0, True, False, 0, "two-decks-ace-at-each-end"),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 0, False, False, 1, "14-hearts-low"),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 0, True, False, 0, "14-hearts-split-high"),
    ("KH AH 9C", 9, False, False, 20, "wild-no-qka-low"),
    ("KH AH 9C", 9, True, False, 0, "wild-as-queen-qka"),
    ("KH AH 2H 9C", 9, False, False, 10, "wild-no-wrap-low"),
    ("KH AH 2H 9C", 9, True, False, 2, "wild-no-wrap-high"),
    ("QH KH 9C", 9, False, False, 0, "wild-below-queen-low"),
    ("AH AC 5S", 5, True, False, 0, "ace-set-with-wild"),
    # wilds in gaps and at the ends
    ("4H 9C 6H", 9, False, False, 0, "wild-fills-gap"),
    ("4H 5H 9C", 9, False, False, 0, "wild-extends-end"),
    ("JH QH KH 9C", 9, False, False, 0, "wild-extends-below-king"),
    ("3H 5H 7H 9C 9D", 9, False, False, 0, "wilds-fill-two-gaps"),
    ("3H 6H 9C", 9, False, False, 18, "too-few-wilds-for-gap"),
    ("KH 9C 9D", 9, False, False, 0, "one-natural-two-wilds"),
    ("8H 9H TH", 9, False, False, 0, "wild-in-own-slot"),
    ("8H 9H TH", 9, False, True, 0, "wild-in-own-slot-needs-natural"),
    ("7H 7C 7D 9S", 9, False, False, 0, "leftover-wild-joins-set"),
    ("4H 5H 6H 9S", 9, False, False, 0, "leftover-wild-joins-run"),
    ("AH 2H 3H 4H 5H 6H 7H 8H TH JH QH KH 9C 9D", 9, False, True, 0, "full-run-plus-wild-splits"),
    # all-wild sets and meld_needs_natural
    ("9C 9D 9H", 9, False, False, 0, "all-wild-set"),
    ("9C 9D 9H 9S", 9, False, False, 0, "all-wild-set-of-four"),
    ("9C 9D 9H", 9, False, True, 27, "all-wild-needs-natural"),
    ("9C 9D 9H 9S", 9, False, True, 36, "four-wilds-needs-natural"),
    ("KH KC KD KS", 13, False, True, 40, "kings-wild-needs-natural"),
    ("9C 9D 9H 4S", 9, False, True, 0, "one-natural-many-wilds-set"),
    ("9C 9D 4S 5D", 9, False, True, 4, "two-wilds-one-meld"),
    ("9C 9D 4S 5D", 9, False, False, 4, "two-wilds-too-few-alone"),
    ("4H 9C 6H", 9, False, True, 0, "gap-with-natural-ok"),
    # unmelded wilds cost their own rank
    ("QC 2H 7S", 12, False, False, 19, "unmelded-queen-wild-10"),
    ("5C 2H 9S", 5, False, False, 16, "unmelded-five-wild-5"),
    ("4H 9S", 9, False, False, 13, "lone-wild-unmelded"),
    # two or three decks: identical cards
    ("7H 7H 7D", 0, False, False, 0, "two-decks-set"),
    ("7H 7H 7H", 0, False, False, 0, "three-decks-set"),
    ("7H 7H 8H", 0, False, False, 22, "duplicate-is-no-run"),
    ("7H 7H 8H 9H", 0, False, False, 7, "duplicate-left-over"),
    ("9C 9C 9D", 9, False, False, 0, "duplicate-wilds-set"),
    ("5H 6H 7H 7H 7C 7D", 0, False, False, 0, "two-decks-run-and-set"),
    # no card in two melds
    ("5H 6H 7H 7C 7D", 0, False, False, 11, "shared-seven"),
    ("3C 4C 5C 5D 5H", 0, False, False, 7, "shared-five"),
    ("", 9, False, False, 0, "empty-hand"),
]


@pytest.mark.parametrize(("hand", "wild", "aces_high", "needs_natural", "expected"),
                         [k[:5] for k in KNOWN], ids=[k[5] for k in KNOWN])
def test_known_answers(hand: str, wild: int, aces_high: bool, needs_natural: bool, expected: int) -> None:
    cards = parse_cards(hand)
    assert ref_least_penalty(cards, wild, aces_high, needs_natural) == expected
    for name in BACKENDS:
        if BACKENDS[name] is not None:
            assert BACKENDS[name](list(cards), wild, aces_high, needs_natural)[0] == expected, name
            assert PENALTY[name](list(cards), wild, aces_high, needs_natural) == expected, name
    result = best_melds(cards, wild, aces_high=aces_high, meld_needs_natural=needs_natural)
    assert result.deadwood == expected
    assert least_penalty(cards, wild, aces_high, needs_natural) == expected
    _check_arrangement(cards, wild, aces_high, needs_natural, result.deadwood, result.melds, result.unmelded)


# (meld, wild rank, aces high, meld needs natural, valid)
WILDS_13 = " ".join(["9C 9D 9H 9S"] * 3)  # twelve nines: three decks
KNOWN_MELDS = [
    ("7H 7C 7D", 0, False, False, True),
    ("7H 7H 7D", 0, False, False, True),
    ("7H 7H 8H", 0, False, False, False),
    ("4H 5H 6H", 0, False, False, True),
    ("4H 5C 6H", 0, False, False, False),
    ("4H 6H 7H", 0, False, False, False),
    ("2H 3H", 0, False, False, False),
    ("9C 9D", 9, False, False, False),
    ("AS 2S 3S", 0, False, False, True),
    ("AS 2S 3S", 0, True, False, True),
    ("QS KS AS", 0, False, False, False),
    ("QS KS AS", 0, True, False, True),
    ("KS AS 2S", 0, False, False, False),
    ("KS AS 2S", 0, True, False, False),
    ("KH AH 9C", 9, False, False, False),
    ("KH AH 9C", 9, True, False, True),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", 0, False, False, True),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", 0, True, False, True),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 0, True, False, False),  # both ends, 14 long
    ("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 0, True, False, True),
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", 5, False, False, True),  # 5H wild in own slot
    ("AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 5C", 5, False, False, False),  # a run of 14
    ("AH 2H KH " + " ".join(["9C 9D 9H 9S"] * 2) + " 9C 9D", 9, False, False, True),  # A..K, 13 long
    ("AH 2H KH " + " ".join(["9C 9D 9H 9S"] * 2) + " 9C", 9, False, False, False),  # 12 cards: no window
    ("4S " + WILDS_13 + " 9C", 9, False, True, True),  # a set has no upper size
    ("9C 9D 9H", 9, False, False, True),
    ("9C 9D 9H", 9, False, True, False),
    ("9C 9D 9H 9S 9C 9D", 9, False, False, True),
    ("8H 9H TH", 9, False, True, True),
    ("3H 5H 7H 9C 9D", 9, False, False, True),
    ("3H 6H 9C", 9, False, False, False),
    ("4H 5H 6H 6H", 0, False, False, False),
]


@pytest.mark.parametrize(("meld", "wild", "aces_high", "needs_natural", "valid"), KNOWN_MELDS)
def test_known_melds(meld: str, wild: int, aces_high: bool, needs_natural: bool, valid: bool) -> None:
    cards = parse_cards(meld)
    assert ref_is_valid_meld(cards, wild, aces_high=aces_high, meld_needs_natural=needs_natural) is valid
    assert is_valid_meld(cards, wild, aces_high=aces_high, meld_needs_natural=needs_natural) is valid
    # a hand that is exactly one valid meld has no penalty
    if valid:
        assert least_penalty(cards, wild, aces_high, needs_natural) == 0


# --------------------------------------------------------------------------- random hands
def _random_hand(rng: np.random.Generator, size: int, decks: int, wild: int) -> list[int]:
    """A hand biased towards wilds and near-melds: one suit's neighbourhood, one rank's set."""
    wild_share = rng.choice([0.0, 0.1, 0.25, 0.4, 0.7]) if wild else 0.0
    suit = int(rng.integers(4))
    centre = int(rng.choice([1, 2, 3, 7, 11, 12, 13, int(rng.integers(1, 14))]))
    set_rank = int(rng.integers(1, 14))
    counts: Counter[int] = Counter()
    hand: list[int] = []
    while len(hand) < size:
        u = rng.random()
        if u < wild_share:
            card = int(rng.integers(4)) * 13 + wild - 1
        elif u < wild_share + (1 - wild_share) * 0.4:
            card = suit * 13 + (centre - 1 + int(rng.integers(-3, 4))) % 13
        elif u < wild_share + (1 - wild_share) * 0.65:
            card = int(rng.integers(4)) * 13 + set_rank - 1
        else:
            card = int(rng.integers(52))
        if counts[card] < decks:
            counts[card] += 1
            hand.append(card)
    rng.shuffle(hand)
    return hand


def _random_case(rng: np.random.Generator, low: int, high: int,
                 decks_choice: Sequence[int] = (1, 2)) -> tuple[list[int], int, bool, bool]:
    wild = int(rng.choice(GAME_WILD_RANKS))
    decks = int(rng.choice(decks_choice))
    hand = _random_hand(rng, int(rng.integers(low, high + 1)), decks, wild)
    return hand, wild, bool(rng.integers(2)), bool(rng.integers(2))


def _compare_with_reference(backend: str, seed: int, count: int, low: int, high: int) -> None:
    solve = _backend(backend)
    rng = np.random.default_rng(seed)
    mismatches = []
    zero = many_wilds = 0
    for _ in range(count):
        hand, wild, aces_high, needs_natural = _random_case(rng, low, high)
        expected = ref_least_penalty(hand, wild, aces_high, needs_natural)
        got = solve(list(hand), wild, aces_high, needs_natural)[0]
        penalty = PENALTY[backend](list(hand), wild, aces_high, needs_natural)
        if penalty != got:
            mismatches.append(f"{_describe(hand, wild, aces_high, needs_natural)}: "
                              f"{backend} solve {got}, least_penalty {penalty}")
        zero += expected == 0
        many_wilds += sum(ref_rank(c) == wild for c in hand) >= 2
        if got != expected:
            mismatches.append(f"{_describe(hand, wild, aces_high, needs_natural)}: "
                              f"reference {expected}, {backend} {got}")
    assert not mismatches, f"{len(mismatches)} of {count} hands differ:\n" + "\n".join(mismatches[:10])
    # the biased deal must reach fully melded hands often, or the test proves little
    assert zero >= count // 20, f"only {zero} of {count} random hands were fully melded"
    assert many_wilds >= count // 10, f"only {many_wilds} of {count} random hands held two wilds or more"


@pytest.mark.parametrize("seed", range(8))
def test_c_backend_matches_reference(seed: int) -> None:
    _compare_with_reference("c", 1000 + seed, count=450, low=3, high=10)


@pytest.mark.parametrize("seed", range(3))
def test_python_backend_matches_reference(seed: int) -> None:
    _compare_with_reference("python", 2000 + seed, count=150, low=3, high=10)


def test_c_and_python_agree_on_14_card_two_deck_hands() -> None:
    solve_c = _backend("c")
    rng = np.random.default_rng(3000)
    mismatches = []
    for _ in range(300):
        wild = int(rng.choice(GAME_WILD_RANKS))
        hand = _random_hand(rng, 14, 2, wild)
        aces_high, needs_natural = bool(rng.integers(2)), bool(rng.integers(2))
        c = solve_c(list(hand), wild, aces_high, needs_natural)[0]
        py = melds_py.solve(list(hand), wild, aces_high, needs_natural)[0]
        if c != py:
            mismatches.append(f"{_describe(hand, wild, aces_high, needs_natural)}: c {c}, python {py}")
    assert not mismatches, "\n".join(mismatches[:10])


# --------------------------------------------------------------------------- arrangements
def _check_arrangement(hand: Sequence[int], wild: int, aces_high: bool, needs_natural: bool,
                       deadwood: int, melds: Sequence[Sequence[int]], unmelded: Sequence[int]) -> None:
    where = _describe(hand, wild, aces_high, needs_natural)
    laid = [c for meld in melds for c in meld] + list(unmelded)
    assert Counter(laid) == Counter(hand), f"{where}: melds + unmelded are not the hand"
    for meld in melds:
        assert ref_is_valid_meld(meld, wild, aces_high=aces_high, meld_needs_natural=needs_natural), (
            f"{where}: invalid meld [{cards_str(meld)}]")
    assert sum(ref_value(c, wild, aces_high) for c in unmelded) == deadwood, f"{where}: unmelded do not add up"
    assert penalty_of(unmelded, wild, aces_high=aces_high) == deadwood


@pytest.mark.parametrize("backend", ["c", "python"])
def test_arrangements_are_valid_and_use_every_card_once(backend: str) -> None:
    solve = _backend(backend)
    rng = np.random.default_rng(4000)
    for _ in range(1500 if backend == "c" else 400):
        hand, wild, aces_high, needs_natural = _random_case(rng, 0, 14, decks_choice=(1, 2, 3))
        deadwood, melds, unmelded = solve(list(hand), wild, aces_high, needs_natural)
        _check_arrangement(hand, wild, aces_high, needs_natural, deadwood, melds, unmelded)


def test_best_melds_and_least_penalty_agree() -> None:
    rng = np.random.default_rng(5000)
    for _ in range(500):
        hand, wild, aces_high, needs_natural = _random_case(rng, 0, 14)
        result = best_melds(hand, wild, aces_high=aces_high, meld_needs_natural=needs_natural)
        assert least_penalty(hand, wild, aces_high, needs_natural) == result.deadwood
        assert least_penalty(tuple(hand), wild, aces_high, needs_natural) == result.deadwood
        _check_arrangement(hand, wild, aces_high, needs_natural, result.deadwood, result.melds, result.unmelded)


def test_is_valid_meld_matches_reference_on_random_card_groups() -> None:
    rng = np.random.default_rng(6000)
    valid_seen = 0
    for _ in range(3000):
        hand, wild, aces_high, needs_natural = _random_case(rng, 0, 14, decks_choice=(1, 2, 3))
        expected = ref_is_valid_meld(hand, wild, aces_high=aces_high, meld_needs_natural=needs_natural)
        valid_seen += expected
        assert is_valid_meld(hand, wild, aces_high=aces_high, meld_needs_natural=needs_natural) is expected, (
            _describe(hand, wild, aces_high, needs_natural))
    assert valid_seen >= 100, f"only {valid_seen} random groups were melds"


def _is_run(meld: Sequence[int], wild: int) -> bool:
    return len({ref_rank(c) for c in meld if ref_rank(c) != wild}) > 1


def _slot_order_ok(meld: Sequence[int], wild: int, aces_high: bool) -> bool:
    """A run is listed in slot order: the card at index i sits in slot low + i of one window."""
    for low in range(1, (14 if aces_high else 13) - len(meld) + 2):
        if all(ref_rank(c) == wild or low + i in ((1, 14) if ref_rank(c) == 1 else (ref_rank(c),))
               for i, c in enumerate(meld)):
            return True
    return False


# MeldResult documents runs "in slot order; wilds stand in gaps and at the ends". A leftover
# wild that joins a run ending at the king (or, with aces high, at the ace) is appended
# after it, one slot past the top, although it can only stand below the run.
SLOT_ORDER_CASES = [
    ("JH QH KH 9C", 9, False),  # laid as [JH QH KH 9C]: the 9C must stand for TH, before JH
    ("QH KH AH 9C", 9, True),   # laid as [QH KH AH 9C]: the 9C must stand for JH
    ("4H 5H 6H 9S", 9, False),
    ("4H 9C 6H", 9, False),
    ("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 5C", 5, False),
]


@pytest.mark.parametrize(("hand", "wild", "aces_high"), SLOT_ORDER_CASES)
@pytest.mark.parametrize("backend", ["c", "python"])
def test_runs_are_listed_in_slot_order_known(backend: str, hand: str, wild: int, aces_high: bool) -> None:
    _, melds, _ = _backend(backend)(parse_cards(hand), wild, aces_high, False)
    for meld in melds:
        if _is_run(meld, wild):
            assert _slot_order_ok(meld, wild, aces_high), f"run [{cards_str(meld)}] is not in slot order"


@pytest.mark.parametrize("backend", ["c", "python"])
def test_runs_are_listed_in_slot_order_random(backend: str) -> None:
    solve = _backend(backend)
    rng = np.random.default_rng(7000)
    runs_seen = 0
    bad = []
    for _ in range(800 if backend == "c" else 300):
        hand, wild, aces_high, needs_natural = _random_case(rng, 3, 14)
        for meld in solve(list(hand), wild, aces_high, needs_natural)[1]:
            if _is_run(meld, wild):
                runs_seen += 1
                if not _slot_order_ok(meld, wild, aces_high):
                    bad.append(f"{_describe(hand, wild, aces_high, needs_natural)}: [{cards_str(meld)}]")
    assert runs_seen >= 100
    assert not bad, f"{len(bad)} runs out of slot order:\n" + "\n".join(bad[:10])
