"""``CardList``: a list of card ints that keeps its 52-long count vector up to date.

The discard pile and each player's discard history grow all round long (hundreds of cards
under random play). Observations need their counts at every step; counting afresh would
cost time proportional to the pile. A ``CardList`` is a real ``list`` (JSON, equality,
slicing all work) whose every mutating method also updates ``counts``, an ``array("f")``
that observation code copies in one block. Code that replaces it by a plain list still
works: readers fall back to counting.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any, SupportsIndex

_ZEROS = array("f", bytes(4 * 52))


class CardList(list):
    """A list of card ints 0..51 with an always-consistent count vector ``counts``."""

    __slots__ = ("counts",)

    def __init__(self, cards: Iterable[int] = ()) -> None:
        super().__init__(cards)
        self._recount()

    def _recount(self) -> None:
        counts = array("f", _ZEROS)
        for c in self:
            counts[c] += 1.0
        self.counts = counts

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (list(self),))

    def __copy__(self) -> CardList:
        return self.copy()

    def copy(self) -> CardList:  # type: ignore[override]
        """A copy with its own count vector (copied as one block, not recounted)."""
        dup = CardList.__new__(CardList)
        list.extend(dup, self)
        dup.counts = array("f", self.counts)
        return dup

    def __deepcopy__(self, memo: dict) -> CardList:
        copied = memo[id(self)] = type(self)(self)
        return copied

    def append(self, card: int) -> None:
        super().append(card)
        self.counts[card] += 1.0

    def pop(self, index: SupportsIndex = -1) -> int:
        card = super().pop(index)
        self.counts[card] -= 1.0
        return card

    def remove(self, card: int) -> None:
        super().remove(card)
        self.counts[card] -= 1.0

    def extend(self, cards: Iterable[int]) -> None:
        cards = list(cards)
        super().extend(cards)
        for c in cards:
            self.counts[c] += 1.0

    def __iadd__(self, cards: Iterable[int]) -> CardList:  # type: ignore[override]
        self.extend(cards)
        return self

    def clear(self) -> None:
        super().clear()
        self.counts = array("f", _ZEROS)

    # Rarely used mutations: apply, then recount.
    def insert(self, index: SupportsIndex, card: int) -> None:
        super().insert(index, card)
        self.counts[card] += 1.0

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._recount()

    def __delitem__(self, index: Any) -> None:
        super().__delitem__(index)
        self._recount()

    def __imul__(self, times: SupportsIndex) -> CardList:  # type: ignore[override]
        super().__imul__(times)
        self._recount()
        return self
