"""Observation encoding: one flat float32 buffer, laid out as named pieces.

The layout depends only on the number of players, never on the round. Every piece is built
from what the observing player may know: its own hand, the public discard pile and the
public history of each opponent (what it took from the discard pile and still holds, what it
discarded this round), sizes, scores and the round's public facts. Opponents are listed in
seat order from the observer's left. :func:`layout_table` renders the index table used in
the environment docstring, so the two cannot drift apart.
"""

from __future__ import annotations

from array import array
from functools import lru_cache
from typing import Protocol

import numpy as np

from ..engine.game import GameState

OBS_VERSION = 1
"""Bumped whenever the layout below changes; checkpoints record it."""

HAND_SCALE = 14.0
SCORE_SCALE = 100.0
MAX_SCORE = 11 * 14 * 15
"""A bound on a cumulative score: at most 14 cards of at most 15 points each in each of 11 rounds."""


class ObservationLayout:
    """Offsets of the named pieces of the observation for ``num_players`` players."""

    def __init__(self, num_players: int) -> None:
        n = num_players
        opp = n - 1
        self.num_players = n
        self.pieces: list[tuple[str, int, str]] = [
            ("hand", 52, "own hand: count of each card (0, 1, or more with several decks)"),
            ("discard_top", 52, "top card of the discard pile (one-hot; all 0 when empty)"),
            ("discard_below", 52, "counts of the discard pile below its top card"),
            ("opponent_taken", 52 * opp,
             "per opponent from the left: cards it took from the discard pile this round and still holds (counts)"),
            ("opponent_discards", 52 * opp, "per opponent from the left: cards it discarded this round (counts)"),
            ("wild_rank", 13, "wild rank of the round (one-hot, A..K)"),
            ("round", 11, "round number 1..11 (one-hot)"),
            ("phase", 2, "phase of the turn (one-hot: draw, discard)"),
            ("went_out", n, "who went out this round (one-hot, self then opponents; all 0 if nobody)"),
            ("hand_sizes", n, f"cards held, self then opponents from the left (/ {HAND_SCALE:g})"),
            ("stock_size", 1, "cards in the stock (/ cards in the shoe)"),
            ("scores", n, f"cumulative scores before this round, self then opponents (/ {SCORE_SCALE:g})"),
            ("turn", 1, "turns played this round (/ max_turns_per_round)"),
        ]
        self.offsets: dict[str, int] = {}
        pos = 0
        for name, size, _ in self.pieces:
            self.offsets[name] = pos
            pos += size
        self.size = pos
        self.zeros = bytes(4 * pos)
        # attribute access to offsets on the hot path (``layout.hand_sizes`` etc.)
        for name, start in self.offsets.items():
            setattr(self, name, start)

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The slice of ``obs`` (or a batch of them, last axis) holding piece ``name``."""
        start = self.offsets[name]
        size = next(s for n, s, _ in self.pieces if n == name)
        return obs[..., start:start + size]


@lru_cache(maxsize=None)
def get_layout(num_players: int) -> ObservationLayout:
    """The (cached) layout for ``num_players``."""
    return ObservationLayout(num_players)


def observation_size(num_players: int) -> int:
    """Length of the observation vector for ``num_players``."""
    return get_layout(num_players).size


def encode(state: GameState, seat: int) -> np.ndarray:
    """Observation of ``seat``: a pure function of ``state`` (edit the state, encode again).

    Written into a zeroed ``array("f")`` and viewed as numpy without a copy: counting cards
    in plain Python beats building index arrays for numpy at these sizes.
    """
    rules = state.rules
    n = rules.num_players
    lay = get_layout(n)
    buf = array("f", lay.zeros)
    for c in state.hands[seat]:
        buf[c] += 1.0
    pile = state.discard_pile
    if pile:
        base = lay.discard_below
        _add_counts(buf, base, pile)
        buf[base + pile[-1]] -= 1.0
        buf[lay.discard_top + pile[-1]] = 1.0
    for k in range(1, n):
        other = (seat + k) % n
        base = lay.opponent_taken + 52 * (k - 1)
        for c in state.known_taken[other]:
            buf[base + c] += 1.0
        _add_counts(buf, lay.opponent_discards + 52 * (k - 1), state.discards[other])
    buf[lay.wild_rank + state.wild_rank - 1] = 1.0
    buf[lay.round + state.round_number - 1] = 1.0
    buf[lay.phase + state.phase] = 1.0
    if state.went_out is not None:
        buf[lay.went_out + (state.went_out - seat) % n] = 1.0
    pos = lay.hand_sizes
    hands, scores = state.hands, state.scores
    for k in range(n):
        buf[pos + k] = len(hands[(seat + k) % n]) / HAND_SCALE
        buf[pos + n + 1 + k] = scores[(seat + k) % n] / SCORE_SCALE
    buf[pos + n] = len(state.stock) / rules.num_cards
    buf[pos + 2 * n + 1] = state.turn / rules.max_turns_per_round
    return np.frombuffer(buf, dtype=np.float32)


def _add_counts(buf: array, base: int, cards: list[int]) -> None:
    """Add the card counts of ``cards`` at ``buf[base:base+52]`` (one block copy for a CardList)."""
    counts = getattr(cards, "counts", None)
    if counts is not None:
        buf[base:base + 52] = counts
        return
    for c in cards:
        buf[base + c] += 1.0


def observation_bounds(num_players: int, max_turns: int, num_decks: int) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise (low, high) of the observation, for the ``Box`` space."""
    lay = get_layout(num_players)
    low = np.zeros(lay.size, dtype=np.float32)
    high = np.ones(lay.size, dtype=np.float32)
    for name in ("hand", "discard_below", "opponent_taken"):
        lay.view(high, name)[:] = num_decks
    # a card can go back and forth between players, so discards are bounded by the turn limit
    lay.view(high, "opponent_discards")[:] = max(num_decks, max_turns)
    lay.view(high, "scores")[:] = MAX_SCORE / SCORE_SCALE
    # someone may go out on the turn that reaches the limit; the N - 1 last turns still follow
    lay.view(high, "turn")[:] = (max_turns + num_players - 1) / max_turns
    return low, high


def layout_table(num_players: int) -> str:
    """Markdown index table of the layout (rows: index range, piece, meaning)."""
    return markdown_index_table(get_layout(num_players), "Piece")


class PiecesLayout(Protocol):
    """A layout of named pieces: the observation's, or the state's (``tt_env.observation.state``)."""

    pieces: list[tuple[str, int, str]]
    offsets: dict[str, int]


def markdown_index_table(lay: PiecesLayout, piece_header: str) -> str:
    """Markdown index table of a layout's pieces (rows: index range, piece, meaning)."""
    rows = [f"| Index | {piece_header} | Meaning |", "|---|---|---|"]
    for name, size, text in lay.pieces:
        start = lay.offsets[name]
        span = f"{start}" if size == 1 else f"{start} - {start + size - 1}"
        rows.append(f"| {span} | `{name}` | {text} |")
    return "\n".join(rows)
