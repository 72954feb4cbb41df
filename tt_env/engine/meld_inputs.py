"""The input checks of the pure-Python meld solver (``melds_py``): each argument as plain ints
or floats, or the error the C backend raises for the same input (same type, same message).

``melds_py``'s docstring gives the order the arguments are checked in; ``check_input`` and
``check_cards`` are also importable from ``tt_env.engine.melds_py``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

MAX_CARDS = 40
"""Cards one hand may hold (a hand of ``after_draw_values`` or ``draw_gains``: 39, the draw makes 40)."""
ALL_DRAWS = (1 << 52) - 1
"""The ``draws`` mask of every card."""
WILD_RANKS_HINT = "use 1..13 (or 0 for no wilds)"
DRAWS_HINT = "use a mask of card ints, bit u set to weigh drawing card u (0 <= draws < 2**52)"


def as_int(value: object) -> int | None:
    """``value`` as an int, or None for a bool or anything that is not an integer."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def check_input(hand: Iterable[int], wild_rank: int) -> tuple[list[int], int]:
    """(cards, wild rank) as plain ints, or the error the C backend raises for the same input."""
    wild = check_wild(wild_rank)
    return check_cards(hand, "hand", MAX_CARDS), wild


def check_wild(wild_rank: int) -> int:
    wild = as_int(wild_rank)
    if wild is None:
        kind = "a bool, not an int" if isinstance(wild_rank, bool) else "not an int"
        raise TypeError(f"wild_rank={wild_rank!r} is {kind}: {WILD_RANKS_HINT}")
    if not 0 <= wild <= 13:
        raise ValueError(f"wild_rank={wild} is not allowed: {WILD_RANKS_HINT}")
    return wild


def as_sequence(items, message: str) -> list | tuple:
    """``items`` as a list or tuple (copied only when it is neither), or ``TypeError(message)``."""
    if type(items) is list or type(items) is tuple:
        return items
    try:
        return list(items)
    except TypeError:
        raise TypeError(message) from None


def check_cards(cards: Iterable[int], what: str, max_cards: int | None = None) -> list[int]:
    """``cards`` as a list of plain ints, or the error the C backend raises: ``what`` ("hand"
    or "cards") names the argument; ``max_cards`` bounds its length (None: any)."""
    items = as_sequence(cards, f"{what} must be a sequence of card ints")
    if max_cards is not None and len(items) > max_cards:
        raise ValueError(f"{what} has {len(items)} cards: the solver takes at most {max_cards}")
    out = []
    for item in items:
        card = as_int(item)
        if card is None:
            kind = "a bool, not a card int" if isinstance(item, bool) else "not an int"
            raise TypeError(f"card {item!r} is {kind}: cards are ints 0..51")
        if not 0 <= card <= 51:
            raise ValueError(f"{card} is not a card int: allowed 0..51")
        out.append(card)
    return out


def check_draws(draws: Iterable[int], num_hands: int) -> list[int]:
    items = as_sequence(draws, "draws must be None or a sequence of masks, one per hand")
    if len(items) != num_hands:
        raise ValueError(f"draws has {len(items)} masks: it takes one per hand, {num_hands}")
    masks = []
    for i, draw in enumerate(items):
        mask = as_int(draw)
        if mask is None:
            raise TypeError(f"draws[{i}]={draw!r} is not an int: {DRAWS_HINT}")
        if not 0 <= mask <= ALL_DRAWS:
            raise ValueError(f"draws[{i}]={draw!r} is not allowed: {DRAWS_HINT}")
        masks.append(mask)
    return masks


def check_room_for_a_draw(held: list[int], entry: str) -> None:
    if len(held) == MAX_CARDS:
        raise ValueError(f"hand has {MAX_CARDS} cards: {entry} adds one, and the solver takes at most {MAX_CARDS}")


def real_number(value: object, what: str) -> float:
    """``value`` as a float (what ``float()`` takes, less bools and strings), else a TypeError."""
    if not isinstance(value, (bool, str, bytes, bytearray)):
        try:
            return float(value)  # type: ignore[arg-type]
        except TypeError:
            pass
    raise TypeError(f"{what} is not a real number")
