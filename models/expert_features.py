"""What ``expert-v0`` thinks of each action, as network input: the warm start of learned agents.

For each observation (and from it alone: the expert reads nothing else) this computes the
scores ``expert-v0`` ranks its moves by (:func:`tt_env.agents.ismcts.expert_scores`):

* discard phase: for each candidate discard (the expert's pool: the few discards within its
  margin of the least penalty) the value of the hand left plus the cost of feeding the next
  player, relative to the best candidate; which cards are in the pool; which discard goes out;
* draw phase: the expert value of drawing from the stock minus that of taking the discard;
  on the last turn after someone went out, with ``exact_last_turn``, the exact expected
  penalty of the stock draw minus that of taking the discard
  (:func:`tt_env.agents.last_turn.last_turn_scores`: expert-v0 plays that turn greedily,
  which costs it about 2 points a game), else expert-v0's own choice there.

A network whose logits fall with the relative score and rise with the draw difference (the
direct paths of :class:`models.networks.CardNet` with ``expert_features``) plays exactly as
``expert-v0`` does before training, so PPO starts from the expert and learns where it errs:
the score, the stage of the round, what the opponents collect.
"""

from __future__ import annotations

import numpy as np

from tt_env.agents.expert import ExpertAgent
from tt_env.agents.last_turn import last_turn_scores
from tt_env.engine.game import DISCARD_BASE, NUM_ACTIONS, TAKE_DISCARD
from tt_env.engine.rules import Rules
from tt_env.observation import decode_observation, get_layout

EXPERT_SCALE = 10.0
"""Points per unit of the expert features (the scores are in points of penalty)."""
NUM_EXPERT_PLANES = 3   # in the expert's pool, score relative to the pool's best, goes out
NUM_EXPERT_SCALARS = 2  # draw: (value of the stock - value of taking the discard), a draw decision is open
OUT_OF_POOL = 3.0
"""Relative score given to legal discards outside the pool (the expert never plays them)."""


class ExpertFeaturizer:
    """Computes the expert features of observations under fixed rules (one expert-v0 inside)."""

    def __init__(self, num_players: int, aces_high: bool = False, meld_needs_natural: bool = False,
                 exact_last_turn: bool = False, rules: Rules | None = None) -> None:
        """``rules``: the game's, when it is known (its turn limit, decks and
        ``discard_drawn_discard`` are the expert's too); else a full game of this scoring."""
        rules = rules or Rules(num_players=num_players, aces="high_or_low" if aces_high else "low",
                               meld_needs_natural=meld_needs_natural)
        self.num_players = num_players
        self.rules = rules
        self.exact_last_turn = bool(exact_last_turn)
        self.expert = ExpertAgent(rules)
        self.layout = get_layout(num_players)

    def __call__(self, obs: np.ndarray, masks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(planes (B, 3, 52), scalars (B, 2))`` for a batch of observations ``(B, obs_size)``.

        ``masks`` are the legal actions (all zero for a seat not to move: features stay zero);
        without them they are inferred from the observation, which does not show the card
        just taken from the discard pile (the expert then counts it among the discards).
        """
        from tt_env.agents.ismcts import expert_scores

        batch = obs.shape[0]
        planes = np.zeros((batch, NUM_EXPERT_PLANES, 52), dtype=np.float32)
        scalars = np.zeros((batch, NUM_EXPERT_SCALARS), dtype=np.float32)
        lay = self.layout
        for i in range(batch):
            o = obs[i]
            mask = _mask_of(o, lay) if masks is None else np.asarray(masks[i]).astype(np.int8)
            if not mask.any():
                continue
            scores = expert_scores(self.expert, o, mask)
            if mask[0] or mask[TAKE_DISCARD]:
                if mask[0] and mask[TAKE_DISCARD]:
                    if len(scores) == 2:
                        by_action = dict(scores)
                        diff = (by_action[0] - by_action[TAKE_DISCARD]) / EXPERT_SCALE
                    elif self.exact_last_turn:  # the last turn, solved exactly
                        by_action = dict(last_turn_scores(decode_observation(o), self.rules))
                        diff = (by_action[0] - by_action[TAKE_DISCARD]) / EXPERT_SCALE
                    else:  # the last turn: the expert decided outright
                        diff = OUT_OF_POOL if scores[0][0] == TAKE_DISCARD else -OUT_OF_POOL
                    scalars[i, 0] = float(np.clip(diff, -OUT_OF_POOL, OUT_OF_POOL))
                    scalars[i, 1] = 1.0
                continue
            best = scores[0][1]
            legal = np.flatnonzero(mask[DISCARD_BASE:])
            planes[i, 1, legal] = OUT_OF_POOL
            for action, score in scores:
                card = action - DISCARD_BASE
                planes[i, 0, card] = 1.0
                if score <= -1e8:  # it goes out
                    planes[i, 2, card] = 1.0
                    planes[i, 1, card] = 0.0
                else:
                    planes[i, 1, card] = min((score - best) / EXPERT_SCALE, OUT_OF_POOL)
        return planes, scalars


def _mask_of(obs: np.ndarray, lay) -> np.ndarray:
    """The legal actions implied by an observation of the seat to move (default discard ban aside)."""
    phase_discard = obs[lay.phase + 1] > 0.5
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    hand = np.flatnonzero(np.rint(obs[lay.hand:lay.hand + 52]) > 0)
    if phase_discard:
        mask[DISCARD_BASE + hand] = 1
        return mask
    top = obs[lay.discard_top:lay.discard_top + 52]
    mask[0] = 1
    mask[TAKE_DISCARD] = int(top.any())
    return mask
