"""Positions built by hand for the RULES.md tests (``test_game_rules.py``, ``test_going_out_and_scoring.py``).

Each test builds a :class:`GameState` with :func:`new_game` and then overwrites hands,
stock, discard pile and whose turn it is (:func:`make_state`), so the position is exactly
the one a rule talks about. Cards are written as strings (``"7H 8H 9H"``); the stock and
the discard pile are written bottom first, so their top card is the last one.
Moves are written as tokens for :func:`play`: ``S`` draws the stock, ``T`` takes the
discard top, a card name discards that card.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from tt_env.engine import Rules, parse_cards
from tt_env.engine.cardlist import CardList
from tt_env.engine.cards import card_str, parse_card
from tt_env.engine.game import (DISCARD_BASE, DRAW_STOCK, PHASE_DRAW, TAKE_DISCARD, GameState, StepResult,
                                action_mask, apply, legal_actions, new_game)


def make_state(hands: list[str], *, stock: str = "", pile: str = "", player: int = 0,
               phase: int = PHASE_DRAW, taken: str | None = None, turn: int = 0, dealer: int | None = None,
               scores: list[int] | None = None, seed: int = 0, **rule_options) -> GameState:
    """A game whose current round has exactly these hands, stock and discard pile."""
    rules = Rules(num_players=len(hands), **rule_options)
    state = new_game(rules, np.random.default_rng(seed))
    state.hands = [parse_cards(h) for h in hands]
    state.stock = parse_cards(stock)
    state.discard_pile = CardList(parse_cards(pile))
    state.current_player = player
    state.phase = phase
    state.turn = turn
    state.taken_this_turn = parse_card(taken) if taken else None
    state.known_taken = [[] for _ in hands]
    state.discards = [CardList() for _ in hands]
    if dealer is not None:
        state.dealer = dealer
    if scores is not None:
        state.scores = list(scores)
    return state


def action_of(token: str) -> int:
    """Action id of a move token: ``S`` draw stock, ``T`` take discard, else discard that card."""
    if token == "S":
        return DRAW_STOCK
    if token == "T":
        return TAKE_DISCARD
    return DISCARD_BASE + parse_card(token)


def play(state: GameState, moves: str) -> list[StepResult]:
    """Apply the space-separated move tokens in order; the step results, one per move."""
    return [apply(state, action_of(t)) for t in moves.split()]


def legal_tokens(state: GameState) -> set[str]:
    """Legal moves as tokens, checked against the action mask on the way."""
    acts = legal_actions(state)
    assert np.flatnonzero(action_mask(state)).tolist() == acts
    names = {DRAW_STOCK: "S", TAKE_DISCARD: "T"}
    return {names.get(a) or card_str(a - DISCARD_BASE) for a in acts}


def same_cards(a: list[int], b: str | list[int]) -> bool:
    """Whether two hands hold the same cards (order ignored)."""
    return Counter(a) == Counter(parse_cards(b) if isinstance(b, str) else b)


def shoe_counts(state: GameState) -> Counter:
    return Counter([c for h in state.hands for c in h] + list(state.stock) + list(state.discard_pile))
