"""Fast policies that play on a full :class:`~tt_env.engine.game.GameState`, for search rollouts.

Search simulates the rest of a round many times per decision, in sampled worlds where every
hand is known, so its policies skip the observation: each reads only what its seat could see
in that world (its own hand, the top of the discard pile, the wild rank), straight from the
state. ``greedy`` plays exactly as ``greedy-v0`` does. A policy is a function
``policy(state) -> action id`` for the seat to move.
"""

from __future__ import annotations

from collections.abc import Callable

from ..engine import game
from ..engine.cards import card_value
from ..engine.game import DISCARD_BASE, DRAW_STOCK, PHASE_DRAW, TAKE_DISCARD, GameState
from ..engine.melds import least_penalty

StatePolicy = Callable[[GameState], int]


def _value(card: int, wild: int, aces_high: bool) -> int:
    rank = card % 13 + 1
    return card_value(rank, aces_high=aces_high and rank != wild)


def greedy_discards(state: GameState, hand: list[int], banned: int | None) -> list[tuple[tuple, int]]:
    """``(key, card)`` of every legal discard from ``hand``, best first (greedy-v0's order)."""
    rules = state.rules
    wild, ah, nn = state.wild_rank, rules.aces_high, rules.meld_needs_natural
    cards = sorted(set(hand))
    if banned is not None and not rules.discard_drawn_discard and any(c != banned for c in hand):
        cards.remove(banned)
    scored = []
    for c in cards:
        rest = list(hand)
        rest.remove(c)
        p = least_penalty(rest, wild, ah, nn)
        scored.append(((p, -_value(c, wild, ah), int(c % 13 + 1 == wild), -c), c))
    scored.sort()
    return scored


def greedy(state: GameState) -> int:
    """greedy-v0 on the state: take the discard only if that lowers the least penalty, discard the best."""
    seat = state.current_player
    hand = state.hands[seat]
    if state.phase == PHASE_DRAW:
        can_stock = bool(state.stock) or len(state.discard_pile) > 1
        if not state.discard_pile:
            return DRAW_STOCK
        if not can_stock:
            return TAKE_DISCARD
        top = state.discard_pile[-1]
        if not state.rules.discard_drawn_discard and all(c == top for c in hand):
            return DRAW_STOCK
        after = greedy_discards(state, hand + [top], top)[0][0][0]
        now = state.penalty(seat)
        return TAKE_DISCARD if after < now else DRAW_STOCK
    return DISCARD_BASE + greedy_discards(state, hand, state.taken_this_turn)[0][1]


def play_out(state: GameState, policy: StatePolicy, max_steps: int = 10_000) -> list[int] | None:
    """Play ``state`` (in place) with ``policy`` for every seat until the round ends; its points, or
    ``None`` when ``max_steps`` actions did not end it (the state is then left mid-round)."""
    for _ in range(max_steps):
        result = game.apply(state, policy(state))
        if result.round_record is not None:
            return result.round_record.points
    return None
