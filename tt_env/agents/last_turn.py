"""The last turn after someone went out, solved exactly: take the discard or draw from the stock?

On that turn a player draws, discards and is scored: nothing it does later can change its
penalty. So the choice is a one-step expectation, computed exactly with the meld solver:

* taking the discard: the least penalty of ``hand + [top]`` after its best legal discard;
* drawing from the stock: the mean over the unseen cards (weighted by the copies unseen) of
  the least penalty of ``hand + [u]`` after its best discard.

``expert-v0`` plays this turn greedily and takes the discard whenever it lowers its penalty,
ignoring what a stock draw would be worth on average (it can only help: the drawn card can be
thrown back). Measured, that costs it about 2 points a game at 2 players (docs/training.md, "What made
the learned agents beat expert-v0"); the agents built on expert-v0 (``ismcts-v0`` and the networks with expert
features, option ``exact_last_turn``) play this turn with :func:`last_turn_scores` instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.game import DRAW_STOCK, TAKE_DISCARD
from ..engine.melds import discard_penalties, least_penalty
from ..engine.rules import Rules
from ..observation.decode import ObservationView


def expected_penalties(hand: Sequence[int], top: int, weights: Sequence[float], wild: int, *,
                       aces_high: bool = False, meld_needs_natural: bool = False,
                       discard_drawn_discard: bool = False) -> tuple[float, float]:
    """``(expected penalty after a stock draw, penalty after taking top)``, each with its best discard.

    ``weights[u]`` is the chance that the stock's top card is card type ``u`` (they sum to 1, or
    are all zero when nothing is unseen: the stock draw then counts as keeping the hand).
    """
    hand = list(hand)
    after_take = dict(discard_penalties(hand + [top], wild, aces_high, meld_needs_natural))
    if not discard_drawn_discard and len(after_take) > 1:
        del after_take[top]  # the card type just taken may not be thrown back (as in the game's mask)
    take = float(min(after_take.values()))
    stock, total = 0.0, 0.0
    for u, w in enumerate(weights):
        if w > 0.0:
            stock += w * min(p for _, p in discard_penalties(hand + [u], wild, aces_high, meld_needs_natural))
            total += w
    if total == 0.0:
        stock = float(least_penalty(hand, wild, aces_high, meld_needs_natural))
    return stock, take


def last_turn_scores(view: ObservationView, rules: Rules) -> list[tuple[int, float]]:
    """``[(action, expected penalty)]`` of the stock draw and of taking the discard, best
    (lowest) first; on a tie the stock comes first. For a draw decision of the last turn
    with both draws legal."""
    weights = view.unseen_weights(rules.num_decks)
    stock, take = expected_penalties(view.hand, view.discard_top, weights, view.wild_rank,
                                     aces_high=rules.aces_high, meld_needs_natural=rules.meld_needs_natural,
                                     discard_drawn_discard=rules.discard_drawn_discard)
    return sorted([(DRAW_STOCK, stock), (TAKE_DISCARD, take)], key=lambda x: x[1])
