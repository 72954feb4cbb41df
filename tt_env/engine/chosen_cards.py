"""Chosen cards: for callers that choose every card leaving the shoe themselves.

Explicit chance nodes, as in the OpenSpiel game: take a fresh deal back (:func:`collect_deal`),
deal chosen cards one at a time in the deal's order (:func:`deal_card`), and put a chosen card
on top of the stock before the next draw from it (:func:`stack_stock`). Rules, turns and
scoring stay those of :func:`tt_env.engine.game.apply`.
"""

from __future__ import annotations

import numpy as np

from .cardlist import CardList
from .cards import card_str, cards_str
from .game import PHASE_DRAW, GameState, _refill_stock
from .rules import hand_size

__all__ = ["cards_to_deal", "collect_deal", "deal_card", "stack_stock"]


def collect_deal(state: GameState, *, dealer: int | None = None) -> None:
    """Take back the round just dealt: hands and discard pile empty, the whole shoe in the stock.

    The caller then deals it card by card with :func:`deal_card`; until the deal is complete the
    state is only for dealing. ``dealer`` (first round only) chooses the first dealer, who is
    otherwise the one :func:`~tt_env.engine.game.new_game` drew; later dealers follow from it.
    """
    if state.game_over or state.turn or state.phase != PHASE_DRAW or state.taken_this_turn is not None:
        raise ValueError(f"collect_deal needs a round that was just dealt, before its first move: {state.describe()}")
    n = state.rules.num_players
    if dealer is not None:
        if state.round_index != 0:
            raise ValueError(f"dealer={dealer!r}: only the first round's dealer can be chosen "
                             f"(this is round {state.round_number})")
        if not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < n:
            raise ValueError(f"dealer={dealer!r} is not a seat: use 0..{n - 1}")
        state.dealer = int(dealer)
        state.current_player = (state.dealer + 1) % n
    shoe = [c for hand in state.hands for c in hand]
    shoe.extend(state.discard_pile)
    shoe.extend(state.stock)
    state.stock = shoe
    state.hands = [[] for _ in range(n)]
    state.discard_pile = CardList()


def cards_to_deal(state: GameState) -> int:
    """Cards still to deal in a round taken back by :func:`collect_deal` (hands, then the first
    discard); 0 once the first discard is up and for any round already in play."""
    if state.turn or state.phase != PHASE_DRAW or state.discard_pile or state.game_over:
        return 0
    n = state.rules.num_players
    return n * hand_size(state.round_number) + 1 - sum(len(h) for h in state.hands)


def deal_card(state: GameState, card: int) -> None:
    """Deal one copy of ``card`` from the stock to the next place of the deal.

    The places come in :func:`tt_env.engine.game._deal`'s order: one card at a time to each seat from the dealer's
    left until every hand has the round's size, then the first card of the discard pile.
    """
    left = cards_to_deal(state)
    if left == 0:
        raise ValueError(f"no card is due: the deal of round {state.round_number} is complete")
    if card not in state.stock:
        raise ValueError(f"{_card_label(card)} is not in the stock: deal one of {cards_str(sorted(set(state.stock)))}")
    state.stock.remove(card)
    if left == 1:
        state.discard_pile.append(card)
    else:
        n = state.rules.num_players
        dealt = n * hand_size(state.round_number) + 1 - left
        state.hands[(state.dealer + 1 + dealt % n) % n].append(card)


def stack_stock(state: GameState, card: int) -> bool:
    """Put one copy of ``card`` on top of the stock, so that the next draw from the stock takes it.

    An empty stock is first refilled as a draw would refill it (the discard pile under its top,
    shuffled), so ``card`` may then come from the old pile. Returns whether it was refilled.
    """
    empty = not state.stock
    pool = state.discard_pile[:-1] if empty else state.stock
    if card not in pool:
        where = "the discard pile under its top (the stock is empty)" if empty else "the stock"
        raise ValueError(f"{_card_label(card)} is not in {where}: choose one of {cards_str(sorted(set(pool)))}"
                         if pool else
                         "nothing to draw: the stock is empty and the discard pile holds only its top card")
    if empty:
        _refill_stock(state)
    stock = state.stock
    if stock[-1] != card:
        i = stock.index(card)
        stock[i], stock[-1] = stock[-1], stock[i]
    return empty


def _card_label(card: object) -> str:
    """``card 32 (7H)`` for a card int, else its repr, for error messages."""
    if isinstance(card, (int, np.integer)) and 0 <= card < 52:
        return f"card {int(card)} ({card_str(int(card))})"
    return f"card {card!r}"
