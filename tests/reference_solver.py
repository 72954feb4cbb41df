"""A slow, obviously correct reference for the least penalty of a hand (tests only).

Written from RULES.md alone, independently of ``tt_env.engine.melds``: it shares no code with
the fast solver except the card-int layout (``card = suit * 13 + rank - 1``), which it
decodes itself.

- :func:`ref_is_valid_meld` decides whether a multiset of cards is one set or one run by
  trying every window of slots a run could occupy.
- :func:`ref_least_penalty` enumerates every way to split the hand into disjoint melds plus
  unmelded cards (the lowest remaining card is unmelded, or it is in some valid meld drawn
  from the remaining cards) and returns the least total value of the unmelded cards. It is
  exponential and meant for hands of up to about 10 cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

ACE, KING = 1, 13


def ref_rank(card: int) -> int:
    """Rank 1 (ace) .. 13 (king)."""
    return card % 13 + 1


def ref_suit(card: int) -> int:
    """Suit 0..3."""
    return card // 13


def ref_value(card: int, wild_rank: int, aces_high: bool) -> int:
    """Cost of one unmelded card: A 1 (15 if aces high), 2-10 face, J Q K 10; a wild its own rank's."""
    rank = ref_rank(card)
    if rank == ACE:
        # the game's wild ranks are 3..13, so a wild is never an ace there; a wild ace is
        # priced as an ace of the low variant (its "own rank's value")
        return 15 if aces_high and rank != wild_rank else 1
    if rank >= 10:
        return 10
    return rank


def _slots_of(rank: int, aces_high: bool) -> tuple[int, ...]:
    """Run positions a natural card of ``rank`` may occupy: an ace is 1, or 1 or 14 when high."""
    if rank == ACE and aces_high:
        return (1, 14)
    return (rank,)


def ref_is_valid_meld(cards: Sequence[int], wild_rank: int, *, aces_high: bool = False,
                      meld_needs_natural: bool = False) -> bool:
    """Whether ``cards`` (any order, duplicates allowed) form one set or one run."""
    n = len(cards)
    if n < 3:
        return False
    naturals = [c for c in cards if ref_rank(c) != wild_rank]
    if not naturals:
        # only wilds: a set of the wild rank
        return not meld_needs_natural
    # set: every natural shares one rank (wilds stand for that rank; suits may repeat)
    if len({ref_rank(c) for c in naturals}) == 1:
        return True
    # run: one suit, at most 13 cards, occupying n consecutive slots
    if len({ref_suit(c) for c in naturals}) != 1 or n > 13:
        return False
    top = 14 if aces_high else 13
    for low in range(1, top - n + 2):
        window = range(low, low + n)
        used: list[int] = []
        ok = True
        for c in naturals:
            slots = [s for s in _slots_of(ref_rank(c), aces_high) if s in window]
            if len(slots) != 1 or slots[0] in used:
                # len 0: outside the window; len 2 cannot happen (a window spans <= 13 slots)
                ok = False
                break
            used.append(slots[0])
        if ok:
            # every natural has its own slot, and the n - len(naturals) wilds fill the rest
            return True
    return False


def ref_least_penalty(hand: Sequence[int], wild_rank: int, aces_high: bool = False,
                      meld_needs_natural: bool = False) -> int:
    """Least total value of unmelded cards over every arrangement of ``hand``."""
    cards = list(hand)
    n = len(cards)
    if n > 16:
        raise ValueError("the reference solver is exponential: give at most 16 cards")
    values = [ref_value(c, wild_rank, aces_high) for c in cards]
    # every subset (as a bit mask over hand positions) that is one valid meld, grouped by
    # its lowest position
    melds_from: list[list[int]] = [[] for _ in range(n)]
    for mask in range(1, 1 << n):
        if bin(mask).count("1") < 3:
            continue
        members = [cards[i] for i in range(n) if mask >> i & 1]
        if ref_is_valid_meld(members, wild_rank, aces_high=aces_high,
                             meld_needs_natural=meld_needs_natural):
            lowest = (mask & -mask).bit_length() - 1
            melds_from[lowest].append(mask)

    @lru_cache(maxsize=None)
    def best(remaining: int) -> int:
        if remaining == 0:
            return 0
        low_bit = remaining & -remaining
        i = low_bit.bit_length() - 1
        # the lowest remaining card is unmelded ...
        result = values[i] + best(remaining & ~low_bit)
        # ... or it belongs to one meld made of remaining cards
        for meld in melds_from[i]:
            if meld & remaining == meld:
                result = min(result, best(remaining & ~meld))
        return result

    return best((1 << n) - 1)


def ref_can_meld_all(hand: Sequence[int], wild_rank: int, aces_high: bool = False,
                     meld_needs_natural: bool = False) -> bool:
    """Whether the whole hand can be arranged into melds (a penalty of zero)."""
    return ref_least_penalty(hand, wild_rank, aces_high, meld_needs_natural) == 0
