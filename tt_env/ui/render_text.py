"""Plain-text view of the table, for ``render_mode="ansi"`` and logs."""

from __future__ import annotations

from ..engine.cards import SUITS, card_str, rank_of, suit_of
from ..engine.game import PHASE_DRAW, GameState


def sorted_hand(cards: list[int], wild_rank: int) -> list[int]:
    """Cards grouped by suit then rank, wilds last."""
    return sorted(cards, key=lambda c: (rank_of(c) == wild_rank, suit_of(c), rank_of(c)))


def hand_text(cards: list[int], wild_rank: int) -> str:
    """Hand grouped by suit, wild cards marked with ``*``."""
    groups: dict[str, list[str]] = {s: [] for s in SUITS}
    wilds = []
    for c in sorted_hand(cards, wild_rank):
        if rank_of(c) == wild_rank:
            wilds.append(card_str(c) + "*")
        else:
            groups[SUITS[suit_of(c)]].append(card_str(c))
    parts = [" ".join(v) for v in groups.values() if v]
    if wilds:
        parts.append(" ".join(wilds))
    return " | ".join(parts) if parts else "(empty)"


def render_text(state: GameState, seat: int) -> str:
    """The table as seen by ``seat``: its hand, the discard pile top, stock, hand sizes, scores."""
    n = state.rules.num_players
    wild = "A23456789TJQK"[state.wild_rank - 1]
    top = card_str(state.discard_pile[-1]) if state.discard_pile else "--"
    lines = [
        f"Round {state.round_number} (wild: {wild}s)   turn {state.turn}   dealer player_{state.dealer}",
        f"To move: player_{state.current_player} ({'draw' if state.phase == PHASE_DRAW else 'discard'})",
        f"Discard pile: {top} (+{max(0, len(state.discard_pile) - 1)} below)   Stock: {len(state.stock)}",
    ]
    if state.went_out is not None:
        lines.append(f"player_{state.went_out} has gone out: last turns")
    for p in range(n):
        marker = ">" if p == state.current_player else " "
        shown = hand_text(state.hands[p], state.wild_rank) if p == seat else f"{len(state.hands[p])} cards"
        lines.append(f"{marker} player_{p}  score {state.scores[p]:4d}  {shown}")
    if state.game_over:
        lines.append("Game over.")
    return "\n".join(lines)
