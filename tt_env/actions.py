"""The flat action space: one ``Discrete(54)`` for both phases of a turn.

| Action ID | Action                                   | Phase   |
|-----------|------------------------------------------|---------|
| 0         | draw the top card of the stock           | draw    |
| 1         | take the top card of the discard pile    | draw    |
| 2 - 53    | discard card ``id - 2`` (card ints 0..51)| discard |

Legality lives in the mask only; going out happens by itself when a discard leaves the
hand fully melded.
"""

from __future__ import annotations

from typing import NamedTuple

from .engine.cards import card_str, parse_card
from .engine.game import DISCARD_BASE, DRAW_STOCK, NUM_ACTIONS, TAKE_DISCARD

__all__ = ["DISCARD_BASE", "DRAW_STOCK", "NUM_ACTIONS", "TAKE_DISCARD", "Move", "decode", "encode", "action_name"]


class Move(NamedTuple):
    """A decoded action: ``kind`` is ``"draw_stock"``, ``"take_discard"`` or ``"discard"``."""

    kind: str
    card: int | None = None


def encode(move: Move) -> int:
    """Action id of a :class:`Move`."""
    if move.kind == "draw_stock":
        return DRAW_STOCK
    if move.kind == "take_discard":
        return TAKE_DISCARD
    if move.kind == "discard" and move.card is not None and 0 <= move.card < 52:
        return DISCARD_BASE + move.card
    raise ValueError(f"{move!r} is not a move: kinds are draw_stock, take_discard, discard (card 0..51)")


def decode(action: int) -> Move:
    """:class:`Move` of an action id 0..53."""
    if action == DRAW_STOCK:
        return Move("draw_stock")
    if action == TAKE_DISCARD:
        return Move("take_discard")
    if DISCARD_BASE <= action < NUM_ACTIONS:
        return Move("discard", action - DISCARD_BASE)
    raise ValueError(f"action {action!r} is not in the action space: allowed 0..{NUM_ACTIONS - 1}")


def action_name(action: int) -> str:
    """Readable name of an action id, such as ``"discard 7H"``."""
    move = decode(action)
    return f"discard {card_str(move.card)}" if move.kind == "discard" else move.kind.replace("_", " ")


def discard_action(card_text: str) -> int:
    """Action id that discards the card named ``card_text`` (``"7h"``, ``"10H"``, ``"qs"``)."""
    return DISCARD_BASE + parse_card(card_text)
