"""The full state of a game as one float32 vector: ``env.state()`` for centralized critics (MAPPO, QMIX).

Unlike an observation (:mod:`tt_env.observation`), it shows every hand and the stock, and lists
seats in absolute order (seat 0 first), not from a player's point of view; it is the same for
every agent. It holds everything the rules act on (:func:`decode_state` gives it back as plain
values, and every player's observation follows from it, tested), except two orders: the stock
and the discard pile under its top card are given as counts, as no player can know the stock's
order, a stock is a shuffled pile, and the order under the top only feeds the shuffle of a
refill. The layout depends only on the number of players; :func:`state_layout_table` renders
the table of the environment docstring.

Never give it to a policy that acts: it holds the other players' hidden cards.
"""

from __future__ import annotations

from array import array
from functools import lru_cache
from typing import Any

import numpy as np

from ..engine.game import GameState
from ..engine.rules import Rules
from ..engine.rules import wild_rank as round_wild_rank
from .encoding import _add_counts, markdown_index_table

STATE_VERSION = 1
"""Bumped whenever the layout below changes."""

SCORE_SCALE = 100.0


class StateLayout:
    """Offsets of the named pieces of the state vector for ``num_players`` players."""

    def __init__(self, num_players: int) -> None:
        n = num_players
        self.num_players = n
        self.pieces: list[tuple[str, int, str]] = [
            ("hands", 52 * n, "every seat's hand, seat 0 first: count of each card"),
            ("stock", 52, "the stock: count of each card (its order is not part of the state)"),
            ("discard_top", 52, "top card of the discard pile (one-hot; all 0 when empty)"),
            ("discard_below", 52, "counts of the discard pile below its top card"),
            ("known_taken", 52 * n, "per seat from seat 0: cards it took from the discard pile this round and "
                                    "still holds (counts)"),
            ("discards", 52 * n, "per seat from seat 0: cards it discarded this round (counts)"),
            ("taken_this_turn", 52, "the card type just taken from the discard pile, which the mover may not "
                                    "discard this turn (one-hot; all 0 when none)"),
            ("wild_rank", 13, "wild rank of the round (one-hot, A..K)"),
            ("round", 11, "round number 1..11 (one-hot)"),
            ("phase", 2, "phase of the turn (one-hot: draw, discard)"),
            ("current_player", n, "seat to move (one-hot)"),
            ("dealer", n, "dealer of this round (one-hot)"),
            ("went_out", n, "seat that went out this round (one-hot; all 0 if nobody)"),
            ("scores", n, f"cumulative scores before this round, seat 0 first (/ {SCORE_SCALE:g})"),
            ("turn", 1, "turns played this round (/ max_turns_per_round)"),
            ("game_over", 1, "1 once the last round is scored, else 0"),
        ]
        self.offsets: dict[str, int] = {}
        self.sizes: dict[str, int] = {}
        pos = 0
        for name, size, _ in self.pieces:
            self.offsets[name], self.sizes[name] = pos, size
            pos += size
        self.size = pos
        self.zeros = bytes(4 * pos)

    def view(self, state: np.ndarray, name: str) -> np.ndarray:
        """The slice of ``state`` (or of a batch of them, last axis) holding piece ``name``."""
        start = self.offsets[name]
        return state[..., start:start + self.sizes[name]]


@lru_cache(maxsize=None)
def get_state_layout(num_players: int) -> StateLayout:
    """The (cached) state layout for ``num_players``."""
    return StateLayout(num_players)


def state_size(num_players: int) -> int:
    """Length of the state vector for ``num_players``."""
    return get_state_layout(num_players).size


def encode_state(state: GameState) -> np.ndarray:
    """The state vector of ``state`` (a pure function of it).

    Written into a zeroed ``array("f")`` and viewed as numpy without a copy, as
    :func:`tt_env.observation.encode` does: counting cards in plain Python is the fast way here.
    """
    n = state.rules.num_players
    lay = get_state_layout(n)
    off = lay.offsets
    buf = array("f", lay.zeros)
    for seat in range(n):
        for base, cards in ((off["hands"], state.hands[seat]), (off["known_taken"], state.known_taken[seat])):
            base += 52 * seat
            for c in cards:
                buf[base + c] += 1.0
        _add_counts(buf, off["discards"] + 52 * seat, state.discards[seat])
    base = off["stock"]
    for c in state.stock:
        buf[base + c] += 1.0
    pile = state.discard_pile
    if pile:
        base = off["discard_below"]
        _add_counts(buf, base, pile)
        buf[base + pile[-1]] -= 1.0
        buf[off["discard_top"] + pile[-1]] = 1.0
    if state.taken_this_turn is not None:
        buf[off["taken_this_turn"] + state.taken_this_turn] = 1.0
    buf[off["wild_rank"] + state.wild_rank - 1] = 1.0
    buf[off["round"] + state.round_number - 1] = 1.0
    buf[off["phase"] + state.phase] = 1.0
    buf[off["current_player"] + state.current_player] = 1.0
    buf[off["dealer"] + state.dealer] = 1.0
    if state.went_out is not None:
        buf[off["went_out"] + state.went_out] = 1.0
    base = off["scores"]
    for seat, score in enumerate(state.scores):
        buf[base + seat] = score / SCORE_SCALE
    buf[off["turn"]] = state.turn / state.rules.max_turns_per_round
    buf[off["game_over"]] = float(state.game_over)
    return np.frombuffer(buf, dtype=np.float32)


def state_bounds(num_players: int, max_turns: int, num_decks: int) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise (low, high) of the state vector, for the ``Box`` of ``env.state_space``."""
    lay = get_state_layout(num_players)
    low = np.zeros(lay.size, dtype=np.float32)
    high = np.ones(lay.size, dtype=np.float32)
    for name in ("hands", "stock", "discard_below", "known_taken"):
        lay.view(high, name)[:] = num_decks
    # a card can go back and forth between players, so discards are bounded by the turn limit
    lay.view(high, "discards")[:] = max(num_decks, max_turns)
    lay.view(high, "scores")[:] = 11 * 14 * 15 / SCORE_SCALE  # at most 14 cards of at most 15 points, 11 rounds
    lay.view(high, "turn")[:] = (max_turns + num_players - 1) / max_turns  # the last turns after the limit
    return low, high


def _cards(counts: np.ndarray) -> list[int]:
    """The sorted card list of a 52-count block."""
    return [int(c) for c in np.repeat(np.arange(52), np.rint(counts).astype(np.int64))]


def _seat(one_hot: np.ndarray) -> int | None:
    hot = np.flatnonzero(one_hot)
    return int(hot[0]) if hot.size else None


def decode_state(vector: np.ndarray, rules: Rules) -> dict[str, Any]:
    """The game facts a state vector holds, as plain values (card lists sorted; the inverse of
    :func:`encode_state` up to the order of the cards in each place and of the stock)."""
    n = rules.num_players
    lay = get_state_layout(n)
    vector = np.asarray(vector, dtype=np.float64)
    if vector.shape != (lay.size,):
        raise ValueError(f"a state vector for {n} players has shape ({lay.size},), got {vector.shape}")
    per_seat = {name: lay.view(vector, name).reshape(n, 52) for name in ("hands", "known_taken", "discards")}
    round_number = _seat(lay.view(vector, "round"))
    return {
        "hands": [_cards(h) for h in per_seat["hands"]],
        "stock": _cards(lay.view(vector, "stock")),
        "discard_top": _seat(lay.view(vector, "discard_top")),
        "discard_below": _cards(lay.view(vector, "discard_below")),
        "known_taken": [_cards(k) for k in per_seat["known_taken"]],
        "discards": [_cards(d) for d in per_seat["discards"]],
        "taken_this_turn": _seat(lay.view(vector, "taken_this_turn")),
        "round_number": None if round_number is None else round_number + 1,
        "wild_rank": (_seat(lay.view(vector, "wild_rank")) or 0) + 1,
        "phase": _seat(lay.view(vector, "phase")),
        "current_player": _seat(lay.view(vector, "current_player")),
        "dealer": _seat(lay.view(vector, "dealer")),
        "went_out": _seat(lay.view(vector, "went_out")),
        "scores": [int(round(s * SCORE_SCALE)) for s in lay.view(vector, "scores")],
        "turn": int(round(float(lay.view(vector, "turn")[0]) * rules.max_turns_per_round)),
        "game_over": bool(lay.view(vector, "game_over")[0]),
    }


def state_facts(state: GameState) -> dict[str, Any]:
    """The same facts as :func:`decode_state`, read from a :class:`GameState` (for comparisons)."""
    pile = list(state.discard_pile)
    return {
        "hands": [sorted(h) for h in state.hands], "stock": sorted(state.stock),
        "discard_top": pile[-1] if pile else None, "discard_below": sorted(pile[:-1]),
        "known_taken": [sorted(k) for k in state.known_taken], "discards": [sorted(d) for d in state.discards],
        "taken_this_turn": state.taken_this_turn, "round_number": state.round_number,
        "wild_rank": round_wild_rank(state.round_number), "phase": state.phase,
        "current_player": state.current_player, "dealer": state.dealer, "went_out": state.went_out,
        "scores": list(state.scores), "turn": state.turn, "game_over": state.game_over,
    }


def state_layout_table(num_players: int) -> str:
    """Markdown index table of the state layout (rows: index range, piece, meaning)."""
    return markdown_index_table(get_state_layout(num_players), "State piece")
