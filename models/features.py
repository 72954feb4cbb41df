"""Card-structure input of :class:`models.networks.CardNet`, computed from the observation alone.

The observation is split into its 52-card blocks, each reshaped to suit-by-rank ``(4, 13)``
planes (runs are rows, sets are columns), and the remaining global features. Optionally
(``solver_features``) the exact meld solver of the rules engine adds what a rummy player
computes in their head, for the hand in view (the hand, plus the top discard in the draw
phase): the least penalty left after discarding each held card. These are pure functions of
the observation (own hand, top discard, wild rank, phase), so they add no hidden
information; they spare the network from having to learn the meld arithmetic.
"""

from __future__ import annotations

import numpy as np

from tt_env.engine.melds import discard_penalties, least_penalty
from tt_env.observation import get_layout

PENALTY_SCALE = 50.0
# unmelded value of each card position (A 1, 2..10, J Q K 10), scaled to 0..1, for the value plane
_RANK_VALUES = np.array([min(r, 10) for r in range(1, 14)], dtype=np.float32) / 10.0
VALUE_PLANE = np.tile(_RANK_VALUES, 4).reshape(4, 13)

NUM_SOLVER_PLANES = 3   # held-in-view, penalty after discarding the card, same relative to the best
NUM_SOLVER_SCALARS = 3  # penalty of the hand now, best penalty after a discard, their difference


def card_blocks(num_players: int) -> int:
    """Number of 52-card blocks at the start of the observation (hand, top, pile, 2 per opponent)."""
    return 3 + 2 * (num_players - 1)


def split_observation(obs: np.ndarray, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """``(planes (B, blocks, 4, 13), globals (B, G))`` of a batch of observations."""
    k = card_blocks(num_players)
    planes = obs[:, :52 * k].reshape(-1, k, 4, 13)
    return planes, obs[:, 52 * k:]


def solver_features(obs: np.ndarray, num_players: int, aces_high: bool = False,
                    meld_needs_natural: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(planes (B, 3, 52), scalars (B, 3))`` of meld-solver features for a batch of observations."""
    lay = get_layout(num_players)
    batch = obs.shape[0]
    planes = np.zeros((batch, NUM_SOLVER_PLANES, 52), dtype=np.float32)
    scalars = np.zeros((batch, NUM_SOLVER_SCALARS), dtype=np.float32)
    hands = np.rint(obs[:, lay.hand:lay.hand + 52]).astype(np.int64)
    tops = obs[:, lay.discard_top:lay.discard_top + 52]
    wilds = obs[:, lay.wild_rank:lay.wild_rank + 13].argmax(axis=1) + 1
    draw_phase = obs[:, lay.phase] > 0.5
    for i in range(batch):
        counts = hands[i]
        hand = np.repeat(np.arange(52), counts).tolist()
        wild = int(wilds[i])
        now = least_penalty(hand, wild, aces_high, meld_needs_natural)
        view = list(hand)
        top = -1
        if draw_phase[i] and tops[i].any():
            top = int(tops[i].argmax())
            view.append(top)
        best = now
        first = True
        for c, p in discard_penalties(view, wild, aces_high, meld_needs_natural):
            if c == top:
                continue  # the card just taken may not be discarded again (default rules)
            planes[i, 0, c] = 1.0
            planes[i, 1, c] = p / PENALTY_SCALE
            if first or p < best:
                best, first = p, False
        held = planes[i, 0] > 0
        planes[i, 2, held] = planes[i, 1, held] - best / PENALTY_SCALE
        scalars[i] = (now / PENALTY_SCALE, best / PENALTY_SCALE, (now - best) / PENALTY_SCALE)
    return planes, scalars
