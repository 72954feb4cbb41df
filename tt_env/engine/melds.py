"""The exact meld solver: the least penalty of a hand and one arrangement that reaches it.

``best_melds`` is exact for any hand of up to 40 cards (the game needs 14) from any number
of decks, wild cards included. It runs in the C accelerator ``_meldsolver`` when that was
built at install time, else in the pure-Python ``melds_py`` (same algorithm, same answers;
the docstring there explains it and defines the vocabulary). ``SOLVER_BACKEND`` says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import card_value, rank_of, suit_of
from . import melds_py

try:  # the C accelerator, built by `pip install` where a C compiler exists
    from . import _meldsolver as _backend  # type: ignore[attr-defined]

    SOLVER_BACKEND = "c"
except ImportError:  # pragma: no cover - exercised only on machines without a compiler
    _backend = melds_py  # type: ignore[assignment]
    SOLVER_BACKEND = "python"


@dataclass(frozen=True)
class MeldResult:
    """A solved hand.

    Attributes:
        deadwood: the least total penalty over every arrangement of the hand.
        melds: the melds of one arrangement reaching it, each a tuple of card ints
            (runs in slot order; wilds stand in gaps and at the ends).
        unmelded: the cards left out of every meld; their values add up to ``deadwood``.
    """

    deadwood: int
    melds: tuple[tuple[int, ...], ...]
    unmelded: tuple[int, ...]


def best_melds(hand: Sequence[int], wild_rank: int, *, aces_high: bool = False,
               meld_needs_natural: bool = False) -> MeldResult:
    """Solve ``hand`` (card ints) with ``wild_rank`` (1..13; 0 for no wilds) exactly."""
    deadwood, melds, unmelded = _backend.solve(list(hand), wild_rank, aces_high, meld_needs_natural)
    return MeldResult(deadwood, tuple(tuple(m) for m in melds), tuple(unmelded))


def least_penalty(hand: Sequence[int], wild_rank: int, aces_high: bool = False,
                  meld_needs_natural: bool = False) -> int:
    """Only the least penalty of ``hand``: the fast path for scoring and going-out checks."""
    return _backend.least_penalty(hand, wild_rank, aces_high, meld_needs_natural)


def is_valid_meld(cards: Sequence[int], wild_rank: int, *, aces_high: bool = False,
                  meld_needs_natural: bool = False) -> bool:
    """Whether ``cards`` (in any order) form one set or one run under the rules."""
    if len(cards) < 3:
        return False
    naturals = [c for c in cards if rank_of(c) != wild_rank]
    num_wilds = len(cards) - len(naturals)
    if not naturals:
        return not meld_needs_natural
    if len({rank_of(c) for c in naturals}) == 1:
        return True
    if len({suit_of(c) for c in naturals}) != 1 or len(cards) > 13:
        return False
    ranks = sorted(rank_of(c) for c in naturals)
    options = [ranks]
    if aces_high and ranks[0] == 1:
        options.append(sorted(r if r != 1 else 14 for r in ranks))
    for rs in options:
        if len(set(rs)) == len(rs) and rs[-1] - rs[0] + 1 - len(rs) <= num_wilds:
            return True
    return False


def penalty_of(cards: Sequence[int], wild_rank: int, *, aces_high: bool = False) -> int:
    """Sum of the unmelded values of ``cards`` (a wild costs its own rank's value)."""
    return sum(card_value(rank_of(c), aces_high=aces_high and rank_of(c) != wild_rank) for c in cards)
