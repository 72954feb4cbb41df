"""``greedy-v0``: the one-step deadwood minimiser, a fixed baseline for published numbers.

Draw: take the top of the discard pile when holding it (and then making the best discard)
leaves a lower least penalty than the hand held now; otherwise draw from the stock.
Discard: the legal discard that leaves the least penalty (exact solver); ties go to the
highest-value card, then to a natural card over a wild, then to the highest card int.
Going out needs nothing special: a discard that leaves a fully melded hand has penalty 0,
the least there is, and the environment goes out for the player.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine.cards import card_value, rank_of
from ..engine.game import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD
from ..engine.melds import discard_penalties, least_penalty
from ..engine.rules import MAX_DECKS, Rules
from ..observation import get_layout
from ..observation.checks import InconsistentObservation
from .base import checked_mask, num_players_of


def hand_from_observation(observation: np.ndarray) -> tuple[list[int], int, int | None]:
    """(own hand as card ints, wild rank, discard top or None): the little greedy needs.

    A hand count that no game produces (not a whole number 0..64: NaN, infinite, negative) is an
    :class:`~tt_env.observation.checks.InconsistentObservation` (a ``ValueError``)."""
    observation = np.asarray(observation)
    if observation.ndim != 1 or observation.dtype.kind not in "biuf":
        raise ValueError(f"an observation is one vector of numbers, got shape {observation.shape} and dtype "
                         f"{observation.dtype}")
    lay = get_layout(num_players_of(observation))
    hand: list[int] = []
    for c, v in enumerate(observation[lay.hand:lay.hand + 52].tolist()):
        if v:
            if not 0 < v <= MAX_DECKS or v != int(v):  # NaN and infinities fail the first test
                raise InconsistentObservation(f"observation hand[{c}] is {v}: a count of cards is a whole number "
                                              f"0..{MAX_DECKS}")
            hand.extend([c] * int(v))
    wild = int(observation[lay.wild_rank:lay.wild_rank + 13].argmax()) + 1
    top_block = observation[lay.discard_top:lay.discard_top + 52]
    top = int(top_block.argmax()) if top_block.any() else None
    return hand, wild, top


def without(hand: Sequence[int], card: int) -> list[int]:
    """``hand`` less one copy of ``card``."""
    rest = list(hand)
    rest.remove(card)
    return rest


def discard_key(penalty: int, card: int, wild_rank: int, aces_high: bool) -> tuple[int, int, int, int]:
    """Sort key of a discard (smaller is better): penalty left, then highest value, natural, highest int."""
    rank = rank_of(card)
    is_wild = rank == wild_rank
    value = card_value(rank, aces_high=aces_high and not is_wild)
    return (penalty, -value, int(is_wild), -card)


class GreedyAgent:
    """``greedy-v0``: least penalty now, nothing else (see the module docstring)."""

    name = "greedy-v0"

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules or Rules()
        self._aces_high = self.rules.aces_high
        self._natural = self.rules.meld_needs_natural

    def penalty(self, hand: Sequence[int], wild_rank: int) -> int:
        """Least penalty of ``hand`` under this agent's rules."""
        return least_penalty(hand, wild_rank, self._aces_high, self._natural)

    def best_discard(self, hand: Sequence[int], legal_cards: Sequence[int], wild_rank: int) -> tuple[int, int]:
        """(card, penalty left) of the greedy discard among ``legal_cards``."""
        best: tuple[int, int, int, int] | None = None
        best_card = -1
        candidates = sorted(set(legal_cards))
        # every discard's penalty in one solver call; a card not in the hand keeps the old path
        # (``without`` raises for it)
        left = dict(discard_penalties(hand, wild_rank, self._aces_high, self._natural)) if candidates else {}
        for card in candidates:
            penalty = left[card] if card in left else self.penalty(without(hand, card), wild_rank)
            key = discard_key(penalty, card, wild_rank, self._aces_high)
            if best is None or key < best:
                best, best_card = key, card
        if best is None:
            raise ValueError("no legal discard in the mask: the agent was asked to act out of turn")
        return best_card, best[0]

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        hand, wild, top = hand_from_observation(observation)
        phase = int(observation[get_layout(num_players_of(observation)).phase + 1] > 0.5)
        action_mask = checked_mask(action_mask, hand, phase)
        can_stock, can_take = bool(action_mask[DRAW_STOCK]), bool(action_mask[TAKE_DISCARD])
        if can_stock or can_take:
            if not can_take:
                return DRAW_STOCK
            if not can_stock:
                return TAKE_DISCARD
            return TAKE_DISCARD if self.take_improves(hand, top, wild) else DRAW_STOCK
        legal = np.flatnonzero(action_mask[DISCARD_BASE:]).tolist()
        card, _ = self.best_discard(hand, legal, wild)
        return DISCARD_BASE + card

    def take_improves(self, hand: Sequence[int], top: int | None, wild_rank: int) -> bool:
        """Whether taking ``top`` and then discarding best lowers the least penalty of ``hand``."""
        if top is None:
            return False
        legal = [c for c in hand if c != top or self.rules.discard_drawn_discard]
        if not legal:
            return False
        _, after = self.best_discard(list(hand) + [top], legal, wild_rank)
        return after < self.penalty(hand, wild_rank)
