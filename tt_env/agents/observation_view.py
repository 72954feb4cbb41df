"""Decode an observation vector into what a scripted agent reasons about.

Agents read only the observation (never the game state), so this is the one place that
knows the layout of ``tt_env.observation`` from an agent's side. Opponents are indexed
from the observer's left (0 = the next player), as in the observation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..observation import HAND_SCALE, SCORE_SCALE, get_layout
from .base import num_players_of

_CARD_IDS = np.arange(52)


@dataclass
class ObservationView:
    """One seat's view of the table, decoded from its observation vector.

    Attributes:
        num_players: players at the table.
        hand: own cards as card ints (a card held twice, with several decks, appears twice).
        wild_rank: the round's wild rank (3..13).
        round_number: the round, 1..11.
        phase: 0 draw, 1 discard.
        discard_top: the top card of the discard pile, or None when it is empty.
        discard_below: (52,) counts of the discard pile under its top card.
        opponent_taken: (N-1, 52) counts of the cards each opponent took from the discard
            pile this round and still holds.
        opponent_discards: (N-1, 52) counts of the cards each opponent discarded this round.
        hand_sizes: cards held, self first then the opponents from the left.
        went_out: relative seat of the player who went out this round (0 = self), or None.
        stock_fraction: cards in the stock over the cards in the shoe.
        scores: cumulative scores before this round, self first then the opponents.
        turn_fraction: turns played this round over ``max_turns_per_round``.
    """

    num_players: int
    hand: list[int]
    wild_rank: int
    round_number: int
    phase: int
    discard_top: int | None
    discard_below: np.ndarray
    opponent_taken: np.ndarray
    opponent_discards: np.ndarray
    hand_sizes: list[int]
    went_out: int | None
    stock_fraction: float
    scores: list[int]
    turn_fraction: float

    def seen_counts(self) -> np.ndarray:
        """(52,) counts of the cards this seat knows the place of: own hand, discard pile,
        and the cards opponents are known to hold."""
        seen = self.discard_below + self.opponent_taken.sum(axis=0)
        seen = seen.copy()
        for c in self.hand:
            seen[c] += 1
        if self.discard_top is not None:
            seen[self.discard_top] += 1
        return seen


def decode_observation(observation: np.ndarray) -> ObservationView:
    """The :class:`ObservationView` of a ``three_thirteen_v0`` observation vector."""
    obs = np.asarray(observation)
    if obs.ndim != 1:
        raise ValueError(f"decode_observation takes one observation vector, got shape {obs.shape}")
    n = num_players_of(obs)
    lay = get_layout(n)
    opp = n - 1
    hand_counts = np.rint(obs[lay.hand:lay.hand + 52]).astype(np.int64)
    if hand_counts.max(initial=0) <= 1:
        hand = np.flatnonzero(hand_counts).tolist()
    else:
        hand = np.repeat(_CARD_IDS, hand_counts).tolist()
    top_block = obs[lay.discard_top:lay.discard_top + 52]
    top = int(top_block.argmax()) if top_block.any() else None
    below = np.rint(obs[lay.discard_below:lay.discard_below + 52]).astype(np.int64)
    taken = np.rint(obs[lay.opponent_taken:lay.opponent_taken + 52 * opp]).astype(np.int64).reshape(opp, 52)
    disc = np.rint(obs[lay.opponent_discards:lay.opponent_discards + 52 * opp]).astype(np.int64).reshape(opp, 52)
    went = obs[lay.went_out:lay.went_out + n]
    sizes = obs[lay.hand_sizes:lay.hand_sizes + n] * HAND_SCALE
    scores = obs[lay.scores:lay.scores + n] * SCORE_SCALE
    return ObservationView(
        num_players=n,
        hand=hand,
        wild_rank=int(obs[lay.wild_rank:lay.wild_rank + 13].argmax()) + 1,
        round_number=int(obs[lay.round:lay.round + 11].argmax()) + 1,
        phase=int(obs[lay.phase + 1] > 0.5),
        discard_top=top,
        discard_below=below,
        opponent_taken=taken,
        opponent_discards=disc,
        hand_sizes=[int(round(float(x))) for x in sizes],
        went_out=int(went.argmax()) if went.any() else None,
        stock_fraction=float(obs[lay.stock_size]),
        scores=[int(round(float(x))) for x in scores],
        turn_fraction=float(obs[lay.turn]),
    )
