"""JSON views of the engine's positions for the browser: what one seat may see, or everything.

The browser draws only what these functions return, so hiding happens here, on the server:
a seat's view holds its own hand, and of every other hand only its size and the cards seen
taken from the discard pile (as in the observation). ``viewer=None`` shows every hand (the
Watch page). Cards are the engine's ints (``suit * 13 + rank - 1``, suits C D H S); the wild
rank is 1..13. Melds and penalties come from the engine's exact solver.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..actions import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD
from ..engine.game import PHASE_DRAW, GameState, RoundRecord, StepResult, apply, legal_actions, winners
from ..engine.melds import best_melds, discard_penalties
from ..engine.rules import Rules, hand_size, wild_rank
from ..ui.render_text import sorted_hand


def table_view(state: GameState, names: Sequence[str], viewer: int | None) -> dict[str, Any]:
    """The table as ``viewer`` sees it (``None``: every hand face up)."""
    n = state.rules.num_players
    pile = state.discard_pile
    players = []
    for p in range(n):
        visible = viewer is None or p == viewer
        players.append({
            "seat": p, "name": names[p], "hand_size": len(state.hands[p]),
            "hand": sorted_hand(list(state.hands[p]), state.wild_rank) if visible else None,
            "taken": list(state.known_taken[p]), "discards": list(state.discards[p]), "score": state.scores[p],
        })
    mover = state.current_player
    new_card = None
    if not state.game_over and state.phase != PHASE_DRAW and (viewer is None or viewer == mover):
        new_card = state.hands[mover][-1]  # the card just drawn (or taken)
    return {
        "round": state.round_number, "round_index": state.round_index, "rounds": list(state.rules.rounds),
        "hand_size": hand_size(state.round_number), "wild_rank": state.wild_rank, "dealer": state.dealer,
        "current_player": mover, "phase": "draw" if state.phase == PHASE_DRAW else "discard",
        "turn": state.turn, "max_turns": state.rules.max_turns_per_round, "stock": len(state.stock),
        "discard_top": pile[-1] if pile else None, "discard_count": len(pile), "went_out": state.went_out,
        "game_over": state.game_over, "viewer": viewer, "new_card": new_card, "players": players,
        "scores": scores_view(state), "rules": state.rules.to_dict(),
    }


def scores_view(state: GameState) -> dict[str, Any]:
    """Points of every finished round, the totals, and the winners once the game is over."""
    return {
        "rounds": [{"round": r.round_number, "points": list(r.points), "went_out": r.went_out}
                   for r in state.round_results],
        "totals": list(state.scores),
        "winners": winners(state) if state.game_over else None,
    }


def round_end_view(record: RoundRecord, rules: Rules, names: Sequence[str], totals: Sequence[int]) -> dict[str, Any]:
    """A finished round: every hand face up in the solver's melds, its points and the totals after it."""
    wild = wild_rank(record.round_number)
    hands = []
    for p, hand in enumerate(record.hands):
        solved = best_melds(list(hand), wild, aces_high=rules.aces_high, meld_needs_natural=rules.meld_needs_natural)
        hands.append({"seat": p, "name": names[p], "melds": [list(m) for m in solved.melds],
                      "unmelded": sorted_hand(list(solved.unmelded), wild), "points": record.points[p],
                      "total": totals[p], "went_out": record.went_out == p})
    return {"round": record.round_number, "wild_rank": wild, "turns": record.turns, "went_out": record.went_out,
            "hands": hands}


def round_totals(state: GameState, rounds: int) -> list[int]:
    """Each seat's total after the first ``rounds`` finished rounds."""
    return [sum(r.points[p] for r in state.round_results[:rounds]) for p in range(state.rules.num_players)]


def arrangement(hand: Sequence[int], wild: int, rules: Rules) -> dict[str, Any]:
    """The solver's best arrangement of ``hand``: melds, unmelded cards, penalty."""
    solved = best_melds(list(hand), wild, aces_high=rules.aces_high, meld_needs_natural=rules.meld_needs_natural)
    return {"melds": [list(m) for m in solved.melds], "unmelded": sorted_hand(list(solved.unmelded), wild),
            "penalty": solved.deadwood}


def hint_view(state: GameState, seat: int) -> dict[str, Any]:
    """The best arrangement of ``seat``'s hand now; with a card to discard, the legal discard that
    leaves the least penalty and its arrangement; before drawing, what taking the top discard would
    allow (the best discard then and the penalty it leaves)."""
    rules, wild, hand = state.rules, state.wild_rank, list(state.hands[seat])
    out: dict[str, Any] = {**arrangement(hand, wild, rules), "discard": None, "take_discard": None}
    mine = state.current_player == seat and not state.game_over
    if mine and state.phase != PHASE_DRAW:
        legal = {a - DISCARD_BASE for a in legal_actions(state)}
        out["discard"] = _best_discard(hand, legal, wild, rules)
    elif mine and TAKE_DISCARD in legal_actions(state):
        top = state.discard_pile[-1]
        grown = hand + [top]
        allowed = {c for c in grown if c != top or rules.discard_drawn_discard or all(x == top for x in grown)}
        out["take_discard"] = {"take": top, "then": _best_discard(grown, allowed, wild, rules)}
    return out


def _best_discard(hand: list[int], allowed: set[int], wild: int, rules: Rules) -> dict[str, Any]:
    """Among ``allowed`` cards of ``hand``, the discard leaving the least penalty, and what it leaves."""
    options = [(pen, card) for card, pen in discard_penalties(hand, wild, rules.aces_high, rules.meld_needs_natural)
               if card in allowed]
    penalty, card = min(options)
    rest = list(hand)
    rest.remove(card)
    return {"card": card, "penalty": penalty, "after": arrangement(rest, wild, rules)}


def play_move(state: GameState, action: int) -> tuple[dict[str, Any], StepResult]:
    """Apply ``action`` with the engine (``ValueError`` if illegal) and describe it for the move log.

    The event names the seat, the kind of move and its card (the card drawn from the stock too:
    :func:`event_seen_by` hides it from the other seats), and whether the move went out or
    ended the round.
    """
    seat = state.current_player
    top = state.discard_pile[-1] if state.discard_pile else None
    result = apply(state, action)
    if action == DRAW_STOCK:
        kind, card = "draw_stock", state.hands[seat][-1]
    elif action == TAKE_DISCARD:
        kind, card = "take_discard", top
    else:
        kind, card = "discard", action - DISCARD_BASE
    event = {"seat": seat, "kind": kind, "card": card, "went_out": result.went_out,
             "round_over": result.round_record is not None}
    return event, result


def event_seen_by(event: dict[str, Any], viewer: int | None) -> dict[str, Any]:
    """``event`` as ``viewer`` saw it (``None``: everything): another seat's card from the stock is hidden."""
    if event["kind"] == "draw_stock" and viewer is not None and viewer != event["seat"]:
        return {**event, "card": None}
    return event
