"""Decode an observation vector into what a scripted agent reasons about.

Agents read only the observation (never the game state), so this is the one place that
knows the layout of ``tt_env.observation`` from an agent's side. Opponents are indexed
from the observer's left (0 = the next player), as in the observation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .checks import checked_counts
from .encoding import HAND_SCALE, SCORE_SCALE, get_layout
from .sizes import num_players_of

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

    def unseen_weights(self, num_decks: int) -> list[float]:
        """Chance that a stock draw is each card type: its unseen copies (of ``num_decks``) over
        all unseen copies; all zero when nothing is unseen."""
        unseen = np.maximum(num_decks - self.seen_counts(), 0)
        total = int(unseen.sum())
        return (unseen / total).tolist() if total > 0 else [0.0] * 52


@lru_cache(maxsize=None)
def _scales(num_players: int) -> np.ndarray:
    """float32 factors of the pieces from ``hand_sizes`` to ``scores``: sizes, stock (1), scores."""
    n = num_players
    return np.array([HAND_SCALE] * n + [1.0] + [SCORE_SCALE] * n, dtype=np.float32)


def decode_observation(observation: np.ndarray) -> ObservationView:
    """The :class:`ObservationView` of a ``three_thirteen_v0`` observation vector.

    The count pieces (hand to opponents' discards, adjacent in the layout) are rounded in one
    numpy call, and the short pieces after them are read as one Python list: agents decode
    every observation they act on, so this is on their hot path. A vector no game can produce
    (non-finite or negative entries, fractional or impossible counts) raises
    :class:`~tt_env.observation.checks.InconsistentObservation`, a ``ValueError``
    (:func:`~tt_env.observation.checks.checked_counts`).
    """
    obs = np.asarray(observation)
    if obs.ndim != 1 or obs.dtype.kind not in "biuf":
        raise ValueError(f"decode_observation takes one observation vector of numbers, got shape {obs.shape} "
                         f"and dtype {obs.dtype}")
    n = num_players_of(obs)
    lay = get_layout(n)
    opp = n - 1
    counts = checked_counts(obs, lay)  # hand .. opponent_discards
    hand_counts = counts[:52]
    if hand_counts.max(initial=0) <= 1:
        hand = np.flatnonzero(hand_counts).tolist()
    else:
        hand = np.repeat(_CARD_IDS, hand_counts).tolist()
    top_block = obs[lay.discard_top:lay.discard_top + 52]
    top = int(top_block.argmax()) if top_block.any() else None
    below = counts[lay.discard_below - lay.hand:lay.discard_below - lay.hand + 52]
    taken_at, discards_at = lay.opponent_taken - lay.hand, lay.opponent_discards - lay.hand
    taken = counts[taken_at:taken_at + 52 * opp].reshape(opp, 52)
    disc = counts[discards_at:discards_at + 52 * opp].reshape(opp, 52)
    scaled = (obs[lay.hand_sizes:lay.scores + n] * _scales(n)).tolist()  # float32 products, as before
    tail = obs[lay.wild_rank:lay.hand_sizes].tolist()  # wild rank, round, phase, went out
    at = lay.wild_rank
    wild_block, round_block = tail[:13], tail[lay.round - at:lay.round - at + 11]
    went = tail[lay.went_out - at:lay.went_out - at + n]
    return ObservationView(
        num_players=n,
        hand=hand,
        wild_rank=wild_block.index(max(wild_block)) + 1,
        round_number=round_block.index(max(round_block)) + 1,
        phase=int(tail[lay.phase - at + 1] > 0.5),
        discard_top=top,
        discard_below=below,
        opponent_taken=taken,
        opponent_discards=disc,
        hand_sizes=[int(round(x)) for x in scaled[:n]],
        went_out=went.index(max(went)) if any(went) else None,
        stock_fraction=scaled[n],
        scores=[int(round(x)) for x in scaled[n + 1:]],
        turn_fraction=float(obs[lay.turn]),
    )
