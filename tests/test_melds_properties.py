"""Hypothesis properties of the exact meld solver that follow from the rules alone.

Split from tests/test_melds.py (known answers, reference comparisons, arrangements); each
property's comment says why the rules imply it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tt_env.engine import melds_py
from tt_env.engine.melds import best_melds, least_penalty

from reference_solver import ref_least_penalty, ref_rank, ref_value

GAME_WILD_RANKS = (0, *range(3, 14))  # 0: no wilds; rounds 1..11 make 3..K wild


DECKS = 2


@st.composite
def deals(draw: st.DrawFn, max_size: int = 12) -> tuple[list[int], int, bool, bool]:
    """A hand of at most two copies of each card, drawn near one suit's run and the wilds."""
    wild = draw(st.sampled_from(GAME_WILD_RANKS))
    suit = draw(st.integers(0, 3))
    centre = draw(st.integers(1, 13))
    near = st.builds(lambda r: suit * 13 + r - 1, st.integers(max(1, centre - 3), min(13, centre + 3)))
    pool = [st.integers(0, 51), near]
    if wild:
        pool.append(st.builds(lambda s: s * 13 + wild - 1, st.integers(0, 3)))
    raw = draw(st.lists(st.one_of(pool), max_size=max_size))
    counts: Counter[int] = Counter()
    hand = []
    for card in raw:
        if counts[card] < DECKS:
            counts[card] += 1
            hand.append(card)
    return hand, wild, draw(st.booleans()), draw(st.booleans())


def _dw(hand: Sequence[int], wild: int, aces_high: bool, needs_natural: bool) -> int:
    return least_penalty(list(hand), wild, aces_high, needs_natural)


PROPERTY_SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(deals(max_size=8))
def test_property_small_hands_match_reference(deal) -> None:
    hand, wild, aces_high, needs_natural = deal
    expected = ref_least_penalty(hand, wild, aces_high, needs_natural)
    assert _dw(hand, wild, aces_high, needs_natural) == expected
    assert melds_py.solve(list(hand), wild, aces_high, needs_natural)[0] == expected


@PROPERTY_SETTINGS
@given(deals(), st.randoms(use_true_random=False))
def test_property_order_of_cards_does_not_matter(deal, random) -> None:
    hand, wild, aces_high, needs_natural = deal
    shuffled = list(hand)
    random.shuffle(shuffled)
    assert _dw(shuffled, wild, aces_high, needs_natural) == _dw(hand, wild, aces_high, needs_natural)


@PROPERTY_SETTINGS
@given(deals(), st.permutations(range(4)))
def test_property_suits_carry_no_rank(deal, suit_map) -> None:
    hand, wild, aces_high, needs_natural = deal
    relabelled = [suit_map[c // 13] * 13 + c % 13 for c in hand]
    assert _dw(relabelled, wild, aces_high, needs_natural) == _dw(hand, wild, aces_high, needs_natural)


@PROPERTY_SETTINGS
@given(deals())
def test_property_deadwood_bounded_by_card_values(deal) -> None:
    hand, wild, aces_high, needs_natural = deal
    dw = _dw(hand, wild, aces_high, needs_natural)
    assert 0 <= dw <= sum(ref_value(c, wild, aces_high) for c in hand)


@PROPERTY_SETTINGS
@given(deals(max_size=11), st.integers(0, 51))
def test_property_an_extra_card_costs_at_most_its_value(deal, card) -> None:
    # leaving the new card unmelded is always one arrangement
    hand, wild, aces_high, needs_natural = deal
    assume(hand.count(card) < DECKS)
    before = _dw(hand, wild, aces_high, needs_natural)
    assert _dw(hand + [card], wild, aces_high, needs_natural) <= before + ref_value(card, wild, aces_high)


@PROPERTY_SETTINGS
@given(deals(max_size=11), st.integers(0, 3))
def test_property_an_extra_wild_joins_a_meld_with_room(deal, suit) -> None:
    # a set always has room and a run shorter than 13 has room, so the extra wild costs
    # nothing then; with no such meld in a best arrangement it may have to stay unmelded
    hand, wild, aces_high, needs_natural = deal
    assume(wild != 0)
    extra = suit * 13 + wild - 1
    assume(hand.count(extra) < DECKS)
    result = best_melds(hand, wild, aces_high=aces_high, meld_needs_natural=needs_natural)
    after = _dw(hand + [extra], wild, aces_high, needs_natural)
    assert after <= result.deadwood + ref_value(extra, wild, aces_high)
    if any(len(m) < 13 or len({ref_rank(c) for c in m if ref_rank(c) != wild}) <= 1 for m in result.melds):
        assert after <= result.deadwood


@PROPERTY_SETTINGS
@given(deals(max_size=10))
def test_property_three_extra_wilds_never_hurt_without_needs_natural(deal) -> None:
    # the three extra wilds can always be an all-wild set of their own
    hand, wild, aces_high, _ = deal
    assume(wild != 0)
    wilds = [s * 13 + wild - 1 for s in range(3)]
    assume(all(hand.count(w) < DECKS for w in wilds))
    assert _dw(hand + wilds, wild, aces_high, False) <= _dw(hand, wild, aces_high, False)


@PROPERTY_SETTINGS
@given(deals(), st.data())
def test_property_a_natural_turned_wild_keeps_its_melds(deal, data) -> None:
    # without meld_needs_natural a wild can take any natural's place in a meld (a meld left
    # with no natural is an all-wild set); unmelded, it costs the wild rank's value instead
    hand, wild, aces_high, _ = deal
    naturals = [i for i, c in enumerate(hand) if ref_rank(c) != wild]
    assume(wild != 0 and naturals)
    i = data.draw(st.sampled_from(naturals))
    wild_card = data.draw(st.integers(0, 3)) * 13 + wild - 1
    assume(hand.count(wild_card) < DECKS)
    changed = hand[:i] + [wild_card] + hand[i + 1:]
    extra = max(0, ref_value(wild_card, wild, aces_high) - ref_value(hand[i], wild, aces_high))
    assert _dw(changed, wild, aces_high, False) <= _dw(hand, wild, aces_high, False) + extra


@PROPERTY_SETTINGS
@given(deals())
def test_property_wilds_never_hurt_compared_with_no_wilds(deal) -> None:
    # every meld of naturals stays a meld when its wild-rank cards turn wild (in their own
    # slot, or an all-wild set), and an unmelded wild costs the same as before
    hand, wild, aces_high, _ = deal
    assert _dw(hand, wild, aces_high, False) <= _dw(hand, 0, aces_high, False)


@PROPERTY_SETTINGS
@given(deals())
def test_property_needing_a_natural_only_removes_melds(deal) -> None:
    hand, wild, aces_high, _ = deal
    assert _dw(hand, wild, aces_high, True) >= _dw(hand, wild, aces_high, False)


@PROPERTY_SETTINGS
@given(deals())
def test_property_aces_high_variant(deal) -> None:
    # every low arrangement is still valid with aces high, each unmelded natural ace costing
    # 14 more; without natural aces the two variants agree (a run through a high ace slot
    # can slide down one slot)
    hand, wild, _, needs_natural = deal
    low = _dw(hand, wild, False, needs_natural)
    high = _dw(hand, wild, True, needs_natural)
    natural_aces = sum(1 for c in hand if ref_rank(c) == 1 and wild != 1)
    assert high <= low + 14 * natural_aces
    if natural_aces == 0:
        assert high == low
