"""Cards as small ints, and their string form.

A card is an int ``suit * 13 + (rank - 1)`` with suits in the order C, D, H, S and ranks
A=1 .. K=13, so ``0`` is the ace of clubs and ``51`` the king of spades. With several decks
the same int appears more than once: identical cards are interchangeable. A hand is a list of
card ints; :func:`hand_vec` gives its 52-long count vector.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

NUM_SUITS = 4
NUM_RANKS = 13
NUM_CARD_TYPES = NUM_SUITS * NUM_RANKS
SUITS = "CDHS"
RANKS = "A23456789TJQK"

_RANK_OF_TEXT = {text: i + 1 for i, text in enumerate(RANKS)}
_RANK_OF_TEXT["10"] = 10


def rank_of(card: int) -> int:
    """Rank 1 (ace) .. 13 (king) of a card int."""
    return card % NUM_RANKS + 1


def suit_of(card: int) -> int:
    """Suit index 0..3 (C, D, H, S) of a card int."""
    return card // NUM_RANKS


def card_str(card: int) -> str:
    """Two-character name of a card, such as ``"TD"`` or ``"AS"``."""
    if not 0 <= card < NUM_CARD_TYPES:
        raise ValueError(f"card {card!r} is not a card int: allowed 0..51")
    return RANKS[card % NUM_RANKS] + SUITS[card // NUM_RANKS]


def cards_str(cards: Iterable[int]) -> str:
    """Space-separated names of several cards."""
    return " ".join(card_str(c) for c in cards)


def parse_card(text: str) -> int:
    """Card int of one card name: rank (A 2-9 T/10 J Q K) then suit (C D H S), any case."""
    token = text.strip().upper()
    rank = _RANK_OF_TEXT.get(token[:-1])
    suit = SUITS.find(token[-1:]) if token else -1
    if rank is None or suit < 0 or len(token) < 2:
        raise ValueError(
            f"{text!r} is not a card: write a rank (A 2 3 4 5 6 7 8 9 T or 10 J Q K) "
            f"then a suit (C D H S), such as '7H', '10c' or 'qs'"
        )
    return suit * NUM_RANKS + rank - 1


def parse_cards(text: str) -> list[int]:
    """Card ints of space- or comma-separated card names: ``parse_cards("AS 2H TD 10C KH")``."""
    return [parse_card(token) for token in text.replace(",", " ").split()]


def card_value(rank: int, *, aces_high: bool = False) -> int:
    """Penalty of an unmelded card of ``rank``: A 1 (15 when aces may be high), 2-10 face, J Q K 10."""
    if rank == 1:
        return 15 if aces_high else 1
    return min(rank, 10)


def hand_vec(cards: Iterable[int]) -> np.ndarray:
    """52-long uint8 count vector of a hand (counts exceed 1 with several decks)."""
    return np.bincount(np.asarray(list(cards), dtype=np.intp), minlength=NUM_CARD_TYPES).astype(np.uint8)
