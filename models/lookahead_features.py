"""One-draw lookahead features of :class:`models.networks.CardNet` (``lookahead_features``): pure solver quantities.

Each is a function of the observation alone, computed by the engine's meld solver with no
scripted agent's weights, bonuses or decisions in it (the scripted agents are not imported):

* the chance that the next stock draw is each card type: the copies of it not in view (own
  hand, discard pile, cards opponents are known to hold from the discard pile), of the
  ``num_decks`` decks, over all such copies (:func:`unseen_weights`);
* for each legal discard ``c`` (in the draw phase: each card of hand + top discard but the top,
  what taking the discard and throwing ``c`` would leave): the expected least penalty of the
  hand left after one more draw and its best discard, ``penalty - E_u[max(0, penalty -
  a_u)]`` with ``a_u`` the engine's ``after_draw_values`` of drawing ``u`` (the least penalty
  after the draw and the best discard, exact when one arrangement leaves at most the discarded
  card unmelded, an upper bound otherwise), from one ``draw_gains`` call with ``out_bonus=0``;
  the same relative to the best discard; and the chance that the next draw lets that hand go
  out (``a_u == 0``; 1 for a discard that goes out now), from a second call with
  ``out_bonus=1`` (the bonus is a unit to count the outs with, not a weight: the difference
  of the two gains is the chance);
* in the draw phase: the expected least penalty after a stock draw and the best discard (the
  same quantity for the hand as it is), the least penalty after taking the discard and the best
  legal discard minus it (positive: the stock is worth more, one step ahead; on the last turn
  after someone went out this is the exact choice up to the bound above), and the chance
  that the stock draw lets the hand go out.

These are what a rummy player estimates by counting outs; the network still has to learn how
much one draw ahead is worth at each stage of the round, what the opponents collect and when
to go out.
"""

from __future__ import annotations

import bisect

import numpy as np

from tt_env.engine.melds import after_draw_values, discard_penalties, least_penalty
from tt_env.observation import get_layout

from .features import PENALTY_SCALE

NUM_LOOKAHEAD_PLANES = 3   # expected penalty after the next draw, same relative to the best, chance to go out
NUM_LOOKAHEAD_SCALARS = 3  # draw phase: expected penalty after a stock draw, take minus stock, chance to go out


def unseen_weights(obs: np.ndarray, num_players: int, num_decks: int) -> np.ndarray:
    """``(B, 52)`` chance that a stock draw is each card type: its copies not in view over all of
    them (all zero where every copy is in view)."""
    lay = get_layout(num_players)
    seen = obs[:, lay.hand:lay.hand + 52] + obs[:, lay.discard_top:lay.discard_top + 52] + \
        obs[:, lay.discard_below:lay.discard_below + 52]
    taken = obs[:, lay.opponent_taken:lay.opponent_taken + 52 * (num_players - 1)]
    seen = np.rint(seen + taken.reshape(len(obs), num_players - 1, 52).sum(axis=1))
    unseen = np.maximum(num_decks - seen, 0.0)
    total = unseen.sum(axis=1, keepdims=True)
    return np.divide(unseen, total, out=np.zeros_like(unseen, dtype=np.float64), where=total > 0)


def lookahead_features(obs: np.ndarray, masks: np.ndarray | None, num_players: int, num_decks: int,
                       aces_high: bool = False, meld_needs_natural: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(planes (B, 3, 52), scalars (B, 3))`` for a batch of observations ``(B, obs_size)``.

    ``masks`` (``(B, 54)``, the legal actions) pick the legal discards of a discard decision
    (the card just taken from the discard pile may not be thrown back, and the observation does
    not show which it was); without them, or for a row with no legal discard, every card of the
    hand counts.
    """
    lay = get_layout(num_players)
    batch = obs.shape[0]
    planes = np.zeros((batch, NUM_LOOKAHEAD_PLANES, 52), dtype=np.float32)
    scalars = np.zeros((batch, NUM_LOOKAHEAD_SCALARS), dtype=np.float32)
    weights = unseen_weights(obs, num_players, num_decks)
    counts = np.rint(obs[:, lay.hand:lay.hand + 52]).astype(np.int64)
    tops = obs[:, lay.discard_top:lay.discard_top + 52]
    draw_phase = (obs[:, lay.phase] > 0.5) & tops.any(axis=1)
    top_cards = np.where(draw_phase, tops.argmax(axis=1), -1).tolist()
    wilds = (obs[:, lay.wild_rank:lay.wild_rank + 13].argmax(axis=1) + 1).tolist()
    legal = None if masks is None else np.asarray(masks)[:, 2:] > 0
    for i in range(batch):
        hand = np.repeat(np.arange(52), counts[i]).tolist()
        wild, top, w = wilds[i], top_cards[i], weights[i].tolist()
        view = hand
        if top >= 0:
            view = list(hand)
            bisect.insort(view, top)
        left = dict(discard_penalties(view, wild, aces_high, meld_needs_natural))
        if top >= 0:
            left.pop(top, None)  # the card just taken may not be thrown back (default rules)
        elif legal is not None and legal[i].any():
            left = {c: p for c, p in left.items() if legal[i, c]}
        if not left:
            continue
        cards = list(left)
        hands, penalties = [], [left[c] for c in cards]
        for c in cards:
            rest = list(view)
            rest.remove(c)
            hands.append(rest)
        if top >= 0:  # the stock draw: the hand as it is
            hands.append(hand)
            penalties.append(least_penalty(hand, wild, aces_high, meld_needs_natural))
        draws = np.flatnonzero(weights[i] > 0)
        chance = weights[i, draws].tolist()
        draws = draws.tolist()
        expected, out_chance = [], []
        for rest, penalty in zip(hands, penalties, strict=True):
            if penalty == 0 or not draws:
                expected.append(float(penalty))
                out_chance.append(1.0 if penalty == 0 else 0.0)
                continue
            gain = out = 0.0
            for w, a in zip(chance, after_draw_values(rest, draws, wild, aces_high, meld_needs_natural), strict=True):
                if a < penalty:
                    gain += w * (penalty - a)
                    if a == 0:
                        out += w
            expected.append(penalty - gain)
            out_chance.append(out)
        k = len(cards)
        best = min(expected[:k])
        planes[i, 0, cards] = np.asarray(expected[:k]) / PENALTY_SCALE
        planes[i, 1, cards] = (np.asarray(expected[:k]) - best) / PENALTY_SCALE
        planes[i, 2, cards] = out_chance[:k]
        if top >= 0:
            stock = expected[k]
            scalars[i] = (stock / PENALTY_SCALE, (min(penalties[:k]) - stock) / PENALTY_SCALE, out_chance[k])
    return planes, scalars
