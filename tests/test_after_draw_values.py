"""``after_draw_values`` and ``draw_gains``: expert-v0's value of each draw and its expected
gain of one draw (for several hands), in one call each, in both backends.

The definition it must meet exactly (what ``ExpertAgent.after_draw`` computed before, one
``best_melds`` call per card): for each drawn card ``u``, solve ``hand + [u]``; if the
arrangement leaves cards unmelded, its deadwood less the highest value among them (a wild
costs its own rank's value, min(rank, 10)); else the least penalty after the best discard.
The C backend gets there without laying out the arrangement (its search follows the same
path, see ``meld_search.c``), so it is checked against the arrangement of each backend's own
``solve`` on random hands of every kind the solver takes. ``draw_gains`` must add the floats
up exactly as expert-v0's Python loop did (``==``, not approximately).
"""

from __future__ import annotations

import enum

import numpy as np
import pytest

from tt_env.engine import after_draw_values, best_melds, draw_gains, melds, melds_py, solver_backend
from tt_env.engine.cards import card_value, parse_cards

from solver_modules import BACKEND_NAMES, _meldsolver, solver_module as _module



def unmelded_value(card: int, wild: int, aces_high: bool) -> int:
    """expert-v0's table: a wild costs its own rank's value (min(rank, 10)), a natural its value."""
    rank = card % 13 + 1
    return min(rank, 10) if rank == wild else card_value(rank, aces_high=aces_high)


def by_arrangement(solver, hand: list[int], cards: list[int], wild: int, aces_high: bool,
                   natural: bool) -> list[int]:
    """The definition, card by card, from ``solver.solve``'s arrangement (the old expert's code)."""
    out = []
    for u in cards:
        full = hand + [u]
        deadwood, _, unmelded = solver.solve(full, wild, aces_high, natural)
        if unmelded:
            out.append(deadwood - max(unmelded_value(c, wild, aces_high) for c in unmelded))
        else:
            rests = []
            for c in set(full):
                rest = list(full)
                rest.remove(c)
                rests.append(solver.least_penalty(rest, wild, aces_high, natural))
            out.append(min(rests))
    return out


def random_case(rng: np.random.Generator) -> tuple[list[int], list[int], int, bool, bool]:
    """A hand of 0..19 cards from 1..4 decks (so 1..20 after the draw), any wild rank, every option."""
    decks = int(rng.integers(1, 5))
    size = int(rng.integers(0, 20))
    hand = (rng.permutation(52 * decks)[:size] % 52).tolist()
    wild = int(rng.integers(0, 14))
    if rng.random() < 0.25 and wild:  # wild-heavy hands: leftover wilds, all-wild sets, no room
        hand += [s * 13 + wild - 1 for s in rng.integers(0, 4, size=int(rng.integers(1, 8)))]
        hand = hand[:19]
    cards = rng.integers(0, 52, size=int(rng.integers(0, 12))).tolist()
    return hand, cards, wild, bool(rng.integers(2)), bool(rng.integers(2))


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_after_draw_values_match_the_arrangement_on_random_hands(backend: str) -> None:
    solver = _module(backend)
    rng = np.random.default_rng(2024)
    cases = 3000 if backend == "c" else 150
    fully_melded = 0
    for _ in range(cases):
        hand, cards, wild, aces_high, natural = random_case(rng)
        expected = by_arrangement(solver, hand, cards, wild, aces_high, natural)
        assert solver.after_draw_values(hand, cards, wild, aces_high, natural) == expected, \
            (hand, cards, wild, aces_high, natural)
        fully_melded += sum(not solver.solve(hand + [u], wild, aces_high, natural)[2] for u in cards)
    assert fully_melded > 20  # the exact fallback was exercised


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_after_draw_values_on_every_wild_rank_and_game_hand_size(backend: str) -> None:
    """Game-like hands: 3..13 cards plus the draw, one or two decks, each card of the deck drawn."""
    solver = _module(backend)
    rng = np.random.default_rng(7)
    for wild in range(14):
        for decks in (1, 2):
            for aces_high, natural in ((False, False), (True, True)):
                size = int(rng.integers(3, 14))
                hand = (rng.permutation(52 * decks)[:size] % 52).tolist()
                cards = list(range(52)) if backend == "c" else rng.integers(0, 52, size=6).tolist()
                assert solver.after_draw_values(hand, cards, wild, aces_high, natural) == \
                    by_arrangement(solver, hand, cards, wild, aces_high, natural), (hand, wild, aces_high)


def test_draws_split_into_groups_when_the_memo_key_is_full() -> None:
    """A big hand and every draw: the universe outgrows the 64-bit key (32 held naturals take 2
    bits each once drawn again, the 20 others 1 bit: 84 > 63), so the C backend solves the
    draws in several groups; each must still give the card-by-card answer."""
    if _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    rng = np.random.default_rng(3)
    for decks, size, wild in ((1, 32, 0), (2, 28, 0), (1, 26, 7), (3, 24, 13)):
        hand = (rng.permutation(52 * decks)[:size] % 52).tolist()
        cards = list(range(52)) + list(range(51, -1, -3))
        got = _meldsolver.after_draw_values(hand, cards, wild)
        assert got == [_meldsolver.after_draw_values(hand, [u], wild)[0] for u in cards]
        assert got == by_arrangement(_meldsolver, hand, cards, wild, False, False)
        hands = [hand, hand[:20], hand[5:]]
        gains = _meldsolver.draw_gains(hands, [1 / 52] * 52, wild)
        assert gains == [_meldsolver.draw_gains([h], [1 / 52] * 52, wild)[0] for h in hands]


def test_backends_agree_on_after_draw_values() -> None:
    if _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    rng = np.random.default_rng(99)
    for _ in range(400):
        hand, cards, wild, aces_high, natural = random_case(rng)
        assert _meldsolver.after_draw_values(hand, cards, wild, aces_high, natural) == \
            melds_py.after_draw_values(hand, cards, wild, aces_high, natural), (hand, cards, wild)


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_after_draw_values_known(backend: str) -> None:
    solver = _module(backend)
    # 7H 8H + KS, kings wild: drawing 9H melds the run and leaves nothing but the wild in it, so
    # every card melds (exact fallback: discard nothing costly, 0); drawing 2C leaves 2C dead
    hand = parse_cards("7H 8H KS")
    nine, two = parse_cards("9H 2C")
    assert solver.after_draw_values(hand, [nine, two, nine], 13) == [0, 0, 0]
    # no wilds: 5C 5D + KH; drawing 5S melds the set, KH (10) is the highest unmelded: 10 - 10
    hand = parse_cards("5C 5D KH")
    assert solver.after_draw_values(hand, parse_cards("5S 2H"), 0) == [0, 12]
    assert solver.after_draw_values([], parse_cards("KH AC"), 0) == [0, 0]
    assert solver.after_draw_values(hand, [], 0) == []
    # an ace high costs 15 unmelded (the highest: 15 + 10 + 2 less 15)
    assert solver.after_draw_values(parse_cards("AC KD"), parse_cards("2H"), 0, True) == [2 + 10]
    # aces wild: 2H and two wild aces make a run, so the exact fallback: discard 2H, and the
    # two wild aces cost 1 each (discarding an ace leaves 2H and one wild: 2 + 1)
    assert solver.after_draw_values(parse_cards("AC AD"), parse_cards("2H"), 1) == [2]
    # a third wild ace: 2H and the three wilds are one run; discarding a wild leaves a run
    assert solver.after_draw_values(parse_cards("AC AD 2H"), parse_cards("AH"), 1) == [0]
    assert solver.after_draw_values(parse_cards("AC AD 2H"), parse_cards("AH"), 1, False, True) == [0]
    # a 39-card hand takes one more card
    assert len(solver.after_draw_values([0] * 39, [0, 1], 0)) == 2


def test_after_draw_values_is_the_backends_own_function() -> None:
    backend = _meldsolver if solver_backend() == "c" else melds_py
    assert after_draw_values is backend.after_draw_values is melds.after_draw_values
    assert draw_gains is backend.draw_gains is melds.draw_gains


def test_after_draw_values_follow_best_melds() -> None:
    """Through the public API: ``best_melds``' unmelded cards define it."""
    hand, wild = parse_cards("3C 4C 9D 9H JS QS"), 9
    for u in range(52):
        solved = best_melds(hand + [u], wild)
        if solved.unmelded:
            expected = solved.deadwood - max(unmelded_value(c, wild, False) for c in solved.unmelded)
            assert after_draw_values(hand, [u], wild) == [expected]


# --------------------------------------------------------------------------- input errors
WILD_HINT = "use 1..13 (or 0 for no wilds)"
BAD_INPUTS = [
    # (hand, cards, wild, error, message): the checks of the other entry points on the hand ...
    ([0, 1, True], [2], 5, TypeError, "card True is a bool, not a card int: cards are ints 0..51"),
    ([52], [2], 5, ValueError, "52 is not a card int: allowed 0..51"),
    ([0, 1], [2], 14, ValueError, f"wild_rank=14 is not allowed: {WILD_HINT}"),
    ([0, 1], [2], True, TypeError, f"wild_rank=True is a bool, not an int: {WILD_HINT}"),
    ([0, 1], [2], 5.0, TypeError, f"wild_rank=5.0 is not an int: {WILD_HINT}"),
    ([0] * 41, [2], 5, ValueError, "hand has 41 cards: the solver takes at most 40"),
    (5, [2], 5, TypeError, "hand must be a sequence of card ints"),
    # ... then room for the drawn card ...
    ([0] * 40, [2], 5, ValueError, "hand has 40 cards: after_draw_values adds one, and the solver takes at most 40"),
    ([0] * 40, None, 5, ValueError, "hand has 40 cards: after_draw_values adds one, and the solver takes at most 40"),
    # ... then the drawn cards, each in turn
    ([0, 1], 5, 5, TypeError, "cards must be a sequence of card ints"),
    ([0, 1], None, 5, TypeError, "cards must be a sequence of card ints"),
    ([0, 1], [2, True], 5, TypeError, "card True is a bool, not a card int: cards are ints 0..51"),
    ([0, 1], [2, "7H"], 5, TypeError, "card '7H' is not an int: cards are ints 0..51"),
    ([0, 1], [2, 52], 5, ValueError, "52 is not a card int: allowed 0..51"),
    ([0, 1], [-1, True], 5, ValueError, "-1 is not a card int: allowed 0..51"),
    ([0, 1], [2 ** 70], 5, ValueError, f"{2 ** 70} is not a card int: allowed 0..51"),
    ([52], [True], 14, ValueError, f"wild_rank=14 is not allowed: {WILD_HINT}"),
]


@pytest.mark.parametrize("backend", BACKEND_NAMES)
@pytest.mark.parametrize(("hand", "cards", "wild", "error", "message"), BAD_INPUTS)
def test_bad_input_same_error_in_both_backends(backend, hand, cards, wild, error, message) -> None:
    with pytest.raises(error) as caught:
        _module(backend).after_draw_values(hand, cards, wild, False, False)
    assert str(caught.value) == message


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_arguments_like_the_other_entry_points(backend: str) -> None:
    solver = _module(backend)
    with pytest.raises(TypeError, match=r"missing required argument 'wild_rank'|required positional argument"):
        solver.after_draw_values([0], [1])
    with pytest.raises(TypeError, match="unexpected keyword argument 'wild'"):
        solver.after_draw_values([0], [1], wild=5)
    with pytest.raises(TypeError, match="at most 5 arguments|takes from 3 to 5 positional arguments"):
        solver.after_draw_values([0], [1], 5, False, False, 0)


class Rank(enum.IntEnum):
    KING = 13


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_integer_like_input_is_accepted_alike(backend: str) -> None:
    solver = _module(backend)
    hand, cards = parse_cards("7H 8H KS 5C 5D JC"), parse_cards("5S 9H 2C")
    expected = solver.after_draw_values(hand, cards, 13)
    for make, wild in [(tuple, 13), (iter, 13), (np.array, np.int64(13)),
                       (lambda cs: [np.int32(c) for c in cs], Rank.KING)]:
        assert solver.after_draw_values(make(hand), make(cards), wild) == expected
        assert solver.after_draw_values(make(hand), cards=make(cards), wild_rank=wild, aces_high=0,
                                        meld_needs_natural=None) == expected


# --------------------------------------------------------------------------- draw_gains
def gain_by_loop(solver, hand, weights, wild, aces_high, natural, out_bonus, draws) -> tuple[int, float]:
    """The expected gain as expert-v0's old Python loop added it up, card by card."""
    base = solver.least_penalty(hand, wild, aces_high, natural)
    if base == 0:
        return 0, 0.0
    cards = [u for u in range(52) if draws >> u & 1 and not weights[u] <= 0.0]
    gain = 0.0
    for u, a in zip(cards, solver.after_draw_values(hand, cards, wild, aces_high, natural), strict=True):
        if a < base:
            gain += weights[u] * (base - a + (out_bonus if a == 0 else 0.0))
    return base, gain


def same_results(got: list[tuple[int, float]], expected: list[tuple[int, float]]) -> bool:
    """Equal penalties and bit-equal gains (a NaN weight makes the gain NaN in both)."""
    return len(got) == len(expected) and all(
        g[0] == e[0] and type(g[0]) is int and type(g[1]) is float
        and (g[1] == e[1] or (np.isnan(g[1]) and np.isnan(e[1]))) for g, e in zip(got, expected, strict=True))


def random_weights(rng: np.random.Generator) -> list[float]:
    """Chances like expert-v0's (unseen copies / all unseen), with zeros, and odd values too."""
    counts = rng.integers(0, 3, size=52).astype(float)
    weights = (counts / max(counts.sum(), 1.0)).tolist()
    if rng.random() < 0.2:
        weights[int(rng.integers(52))] = float(rng.choice([-0.5, 3, np.nan, 1e-300]))
    return weights


def random_hands(rng: np.random.Generator, wild: int) -> list[list[int]]:
    """1..6 hands: a hand and what discarding some of its cards leaves (as expert-v0 asks), or
    unrelated hands (1..4 decks), so that universes merge and, with many cards, split."""
    hand = random_case(rng)[0][:15]
    if rng.random() < 0.6 and hand:
        return [hand] + [[c for j, c in enumerate(hand) if j != i] for i in rng.integers(0, len(hand), size=4)]
    return [random_case(rng)[0][:int(rng.integers(0, 20))] for _ in range(int(rng.integers(1, 4)))]


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_draw_gains_add_up_as_the_python_loop(backend: str) -> None:
    solver = _module(backend)
    rng = np.random.default_rng(5)
    for _ in range(400 if backend == "c" else 25):
        wild, aces_high, natural = int(rng.integers(0, 14)), bool(rng.integers(2)), bool(rng.integers(2))
        hands = random_hands(rng, wild)
        weights = random_weights(rng)
        out_bonus = float(rng.choice([0.0, 2.5, 37.5, -1.25]))
        draws = [int(rng.integers(0, 1 << 52)) if rng.random() < 0.7 else (1 << 52) - 1 for _ in hands]
        got = solver.draw_gains(hands, weights, wild, aces_high, natural, out_bonus, draws)
        expected = [gain_by_loop(solver, h, weights, wild, aces_high, natural, out_bonus, d)
                    for h, d in zip(hands, draws, strict=True)]
        assert same_results(got, expected), (hands, wild, aces_high, natural, out_bonus, draws)
        if backend == "c":  # one hand at a time: the same numbers as in the batch
            assert same_results([solver.draw_gains([h], weights, wild, aces_high, natural, out_bonus, [d])[0]
                                 for h, d in zip(hands, draws, strict=True)], expected)


def test_backends_agree_on_draw_gains() -> None:
    if _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    rng = np.random.default_rng(17)
    for _ in range(60):
        wild = int(rng.integers(0, 14))
        args = (random_hands(rng, wild), random_weights(rng), wild, bool(rng.integers(2)), bool(rng.integers(2)),
                2.5 * int(rng.integers(0, 15)))
        assert same_results(_meldsolver.draw_gains(*args), melds_py.draw_gains(*args)), args


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_draw_gains_known(backend: str) -> None:
    solver = _module(backend)
    uniform = [1 / 52] * 52
    assert solver.draw_gains([parse_cards("5C 5D 5S")], uniform, 0) == [(0, 0.0)]  # already out
    assert solver.draw_gains([], uniform, 0) == []
    hand = parse_cards("5C 5D KH")
    only_5s, only_2h = [0.0] * 52, [0.0] * 52
    only_5s[parse_cards("5S")[0]] = only_2h[parse_cards("2H")[0]] = 0.5
    # drawing 5S melds the set and KH goes: a = 0, so 20 points plus the bonus, half the time
    assert solver.draw_gains([hand], only_5s, 0, out_bonus=10.0) == [(20, 0.5 * (20 + 10.0))]
    # drawing 2H lets KH go: a = 12, 8 points better; 5C 5D (10) + 2H: a = 12 - 5 = 7, 3 better
    assert solver.draw_gains([hand, hand[:2]], only_2h, 0) == [(20, 0.5 * 8), (10, 0.5 * 3)]
    two_h = 1 << parse_cards("2H")[0]
    assert solver.draw_gains([hand, hand], only_2h, 0, draws=[0, two_h]) == [(20, 0.0), (20, 4.0)]
    assert solver.draw_gains((tuple(hand),), tuple(only_2h), wild_rank=0, draws=[np.int64(two_h)]) == [(20, 4.0)]
    assert solver.draw_gains(iter([hand]), only_2h, 0, draws=None) == [(20, 4.0)]


DRAWS_HINT = "use a mask of card ints, bit u set to weigh drawing card u (0 <= draws < 2**52)"
BAD_GAINS_INPUTS = [
    # (hands, weights, keyword arguments, error, message)
    ([[0, 1]], [0.0] * 52, dict(wild_rank=14), ValueError, f"wild_rank=14 is not allowed: {WILD_HINT}"),
    (5, [0.0] * 52, {}, TypeError, "hands must be a sequence of hands (each a sequence of card ints)"),
    ([[0], 5], [0.0] * 52, {}, TypeError, "hands[1]: hand must be a sequence of card ints"),
    ([[0], [0, True]], [0.0] * 52, {}, TypeError, "hands[1]: card True is a bool, not a card int: cards are ints 0..51"),
    ([[52]], [0.0] * 52, {}, ValueError, "hands[0]: 52 is not a card int: allowed 0..51"),
    ([[0] * 41], [0.0] * 52, {}, ValueError, "hands[0]: hand has 41 cards: the solver takes at most 40"),
    ([[], [0] * 40], [0.0] * 52, {}, ValueError,
     "hands[1]: hand has 40 cards: draw_gains adds one, and the solver takes at most 40"),
    ([[0, 1]], 5, {}, TypeError, "weights must be a sequence of 52 numbers (one per card int)"),
    ([[0, 1]], [0.0] * 51, {}, ValueError, "weights has 51 entries: it takes one per card int, 52"),
    ([[0, 1]], [0.0] * 51 + [True], {}, TypeError, "weights[51] = True is not a real number"),
    ([[0, 1]], ["0.5"] + [0.0] * 51, {}, TypeError, "weights[0] = '0.5' is not a real number"),
    ([[0, 1]], [0.0, None] + [0.0] * 50, {}, TypeError, "weights[1] = None is not a real number"),
    ([[0, 1]], [0.0] * 52, dict(out_bonus="2"), TypeError, "out_bonus='2' is not a real number"),
    ([[0, 1]], [0.0] * 52, dict(out_bonus=False), TypeError, "out_bonus=False is not a real number"),
    ([[0, 1]], [0.0] * 52, dict(draws=5), TypeError, "draws must be None or a sequence of masks, one per hand"),
    ([[0, 1]], [0.0] * 52, dict(draws=[1, 2]), ValueError, "draws has 2 masks: it takes one per hand, 1"),
    ([[0, 1]], [0.0] * 52, dict(draws=[1.0]), TypeError, f"draws[0]=1.0 is not an int: {DRAWS_HINT}"),
    ([[0], [1]], [0.0] * 52, dict(draws=[1, True]), TypeError, f"draws[1]=True is not an int: {DRAWS_HINT}"),
    ([[0, 1]], [0.0] * 52, dict(draws=[-1]), ValueError, f"draws[0]=-1 is not allowed: {DRAWS_HINT}"),
    ([[0, 1]], [0.0] * 52, dict(draws=[1 << 52]), ValueError, f"draws[0]={1 << 52} is not allowed: {DRAWS_HINT}"),
    ([[0, 1]], [0.0] * 52, dict(draws=[1 << 70]), ValueError, f"draws[0]={1 << 70} is not allowed: {DRAWS_HINT}"),
    # in order: the hands, then the weights, then out_bonus and draws
    ([[52]], [None] * 52, dict(out_bonus="x"), ValueError, "hands[0]: 52 is not a card int: allowed 0..51"),
    ([[0, 1]], [None] * 52, dict(out_bonus="x", draws=[-1]), TypeError, "weights[0] = None is not a real number"),
]


@pytest.mark.parametrize("backend", BACKEND_NAMES)
@pytest.mark.parametrize(("hands", "weights", "options", "error", "message"), BAD_GAINS_INPUTS)
def test_draw_gains_bad_input_same_error_in_both_backends(backend, hands, weights, options, error, message) -> None:
    options = dict(dict(wild_rank=5), **options)
    with pytest.raises(error) as caught:
        _module(backend).draw_gains(hands, weights, **options)
    assert str(caught.value) == message
