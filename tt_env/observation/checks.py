"""Checks that an observation vector can come from a game, block by block, before search trusts it.

:func:`tt_env.search.determinize` builds a full game from a seat's observation. An observation
that no game produces (a corrupt vector, a tampered file, the rules of another table) must be
refused with :class:`InconsistentObservation` naming the piece at fault, quickly and whatever
the values: before anything is allocated from them (a count of -1e8 would otherwise ask for
gigabytes), and never with a numpy error from deep inside.

:func:`read_observation` checks every piece of ``tt_env.observation``'s layout against what
:func:`~tt_env.observation.encode` can write under the given rules and returns the values
determinize works from: the count pieces integral in [0, decks] (an opponent's discards in
[0, turn]), the one-hot pieces exactly one-hot (the top of the discard pile and who went out
may be all zero; the wild rank must be the round's), the scaled scalars exactly what encode
writes for an integer in range (hand sizes, stock, scores, turn). :func:`check_world` is the
last guard: the world built must encode to the observation exactly, and give the same action
mask, so nothing inconsistent gets through even where the piecewise checks do not look.
:func:`check_vector` is the cheap subset that needs no rules, for agents that decode
observations (``tt_env.observation.decode``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ..engine import game
from ..engine.rules import MAX_DECKS, Rules, hand_size, wild_rank
from .encoding import HAND_SCALE, MAX_SCORE, SCORE_SCALE, ObservationLayout, encode, get_layout
from .sizes import SIZE_FORMULA, players_of_size

_MAX_COUNT = 2 ** 24
"""Above it float32 no longer holds every whole number: no count an observation carries comes near."""


class InconsistentObservation(ValueError):
    """The observation cannot come from a game under the given rules (wrong rules or a corrupt vector)."""


class ObservedTable(NamedTuple):
    """The checked values of one observation (opponents from the observer's left), as ``determinize`` uses them.

    ``rows`` holds the count pieces as int64 rows of 52: the hand, the top of the discard pile
    (one-hot or zero), the pile below it, each opponent's taken cards, then each opponent's
    discards; ``row_sums`` their totals. ``hand`` .. ``discarded`` are views of ``rows``.
    """

    rows: np.ndarray
    row_sums: list[int]
    hand: np.ndarray
    top: int | None
    below: np.ndarray
    taken: np.ndarray
    discarded: np.ndarray
    round_number: int
    phase: int
    went_out: int | None
    sizes: list[int]
    stock_size: int
    scores: list[int]
    turn: int


def piece_at(lay: ObservationLayout, index: int) -> str:
    """``'name'[i]``: the piece of the layout holding vector index ``index``, and the index within it."""
    for name, size, _ in lay.pieces:
        start = lay.offsets[name]
        if start <= index < start + size:
            return f"{name}[{index - start}]"
    return f"index {index}"  # pragma: no cover - callers pass indices inside the layout


def as_vector(observation: np.ndarray | Mapping[str, Any], action_mask: np.ndarray | None
              ) -> tuple[np.ndarray, np.ndarray | None]:
    """(the observation as a float32 array, the action mask or None) from a vector or the env's dict."""
    if isinstance(observation, Mapping):
        if "observation" not in observation:
            raise InconsistentObservation(f"an observation dict needs the key 'observation' (and optionally "
                                          f"'action_mask'); it has {sorted(map(str, observation))[:10]}")
        if action_mask is None:
            action_mask = observation.get("action_mask")
        observation = observation["observation"]
    try:
        obs = np.asarray(observation, dtype=np.float32)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InconsistentObservation(f"the observation is not a vector of numbers: {exc}") from None
    if action_mask is not None:
        try:
            action_mask = np.asarray(action_mask)
        except (TypeError, ValueError) as exc:  # pragma: no cover - asarray takes nearly anything
            raise InconsistentObservation(f"the action mask is not an array: {exc}") from None
        if action_mask.shape != (game.NUM_ACTIONS,) or action_mask.dtype.kind not in "biuf":
            raise InconsistentObservation(f"an action mask has {game.NUM_ACTIONS} numbers (0 or 1), one per "
                                          f"action id; got shape {action_mask.shape} and dtype {action_mask.dtype}")
    return obs, action_mask


def _check_range(obs: np.ndarray, lay: ObservationLayout) -> None:
    """Every entry finite and in [0, :data:`_MAX_COUNT`] (one min and one max: NaN fails both)."""
    if obs.min() >= 0.0 and obs.max() <= _MAX_COUNT:
        return
    finite = np.isfinite(obs)
    i = int(np.flatnonzero(~finite | (obs < 0) | (obs > _MAX_COUNT))[0])
    what = "finite" if not finite[i] else f"in 0..{_MAX_COUNT}"
    raise InconsistentObservation(f"observation {piece_at(lay, i)} is {obs[i]}: every entry must be {what}")


def _count_region(obs: np.ndarray, lay: ObservationLayout, high: np.ndarray | float) -> np.ndarray:
    """The count pieces (hand .. opponent_discards) as int64, each checked a whole number in 0..``high``.

    ``fmax``/``fmin`` clip NaN to 0 and infinities to the bounds, so one comparison with the
    clipped whole numbers finds every bad entry, with no numpy warning on the way.
    """
    block = obs[lay.hand:lay.wild_rank]
    counts = np.fmin(np.fmax(block, 0.0), high).astype(np.int64)
    bad = counts != block
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        limit = high if np.isscalar(high) else high[i]
        raise InconsistentObservation(f"observation {piece_at(lay, lay.hand + i)} is {block[i]}: a card count "
                                      f"there is a whole number in 0..{limit:g} under these rules")
    return counts


def checked_counts(obs: np.ndarray, lay: ObservationLayout) -> np.ndarray:
    """The count pieces of ``obs`` as int64 after the checks that need no rules: every entry finite and
    in range, every count whole, the hand's at most :data:`~tt_env.engine.rules.MAX_DECKS` copies."""
    _check_range(obs, lay)
    counts = _count_region(obs, lay, float(_MAX_COUNT))
    if counts[:52].max() > MAX_DECKS:
        card = int(counts[:52].argmax())
        raise InconsistentObservation(f"observation hand[{card}] is {counts[card]}: no table has more than "
                                      f"{MAX_DECKS} decks")
    return counts


def check_vector(observation: np.ndarray) -> np.ndarray:
    """``observation`` (one vector) as an array, checked as far as no rules are needed
    (:func:`checked_counts`); raises :class:`InconsistentObservation` (a ``ValueError``) naming the
    piece at fault."""
    obs = np.asarray(observation)
    n = players_of_size(obs.shape[-1]) if obs.ndim == 1 else None
    if n is None or obs.dtype.kind not in "biuf":
        raise InconsistentObservation(f"an observation of shape {obs.shape} and dtype {obs.dtype} is not a "
                                      f"three_thirteen_v0 observation (one vector of numbers, length {SIZE_FORMULA} "
                                      f"for N = 2..8 players)")
    checked_counts(obs, get_layout(n))
    return obs


def _one_hot(values: list[float], name: str, *, required: bool) -> int | None:
    """The index of the single 1 in ``values`` (all 0 gives None, allowed unless ``required``)."""
    ones = values.count(1.0)
    if ones > 1 or ones + values.count(0.0) != len(values) or (required and not ones):
        what = "exactly one 1" if required else "at most one 1"
        raise InconsistentObservation(f"observation piece '{name}' is {values}: it must be one-hot ({what}, "
                                      f"the rest 0)")
    return values.index(1.0) if ones else None


def _exact_quotients(scale: float, high: int) -> dict[float, int]:
    """``{float32(k / scale): k}`` for k in 0..high: what encode writes for each k (as a Python float)."""
    return {float(np.float32(k / scale)): k for k in range(high, -1, -1)}


_HAND_SIZES = _exact_quotients(HAND_SCALE, 15)
_SCORES = _exact_quotients(SCORE_SCALE, MAX_SCORE)
_TABLE_LIMIT = 4096
"""Turn limits up to this get a lookup table of their exact quotients; larger ones are computed."""


class _Limits(NamedTuple):
    """What a valid observation's pieces may hold under one set of rules (cached per rules)."""

    count_high: np.ndarray
    scalars: list[tuple[str, float, int, dict[float, int] | None]]
    """Per scaled entry from ``hand_sizes`` on: (its name, scale, largest whole number, table or None)."""


@lru_cache(maxsize=64)
def _limits(rules: Rules) -> _Limits:
    n, decks = rules.num_players, rules.num_decks
    lay = get_layout(n)
    high = np.full(lay.wild_rank - lay.hand, decks, dtype=np.float32)
    high[lay.discard_top - lay.hand:lay.discard_top - lay.hand + 52] = 1
    max_turn = rules.max_turns_per_round + n - 1
    high[lay.opponent_discards - lay.hand:] = max_turn
    turns = _exact_quotients(rules.max_turns_per_round, max_turn) if max_turn <= _TABLE_LIMIT else None
    scalars = ([(f"hand_sizes[{k}]", HAND_SCALE, 15, _HAND_SIZES) for k in range(n)]
               + [("stock_size[0]", rules.num_cards, rules.num_cards, _exact_quotients(rules.num_cards,
                                                                                        rules.num_cards))]
               + [(f"scores[{k}]", SCORE_SCALE, MAX_SCORE, _SCORES) for k in range(n)]
               + [("turn[0]", rules.max_turns_per_round, max_turn, turns)])
    return _Limits(high, scalars)


def _quotient(value: float, scale: float, high: int) -> int | None:
    """The whole ``k`` in 0..high with ``float32(k / scale) == value``, or None."""
    if not math.isfinite(value):
        return None
    k = int(round(value * scale))
    return k if 0 <= k <= high and float(np.float32(k / scale)) == value else None


def _scaled_ints(values: list[float], limits: _Limits) -> list[int]:
    """The whole numbers encode wrote as ``values`` (the entries from ``hand_sizes`` on)."""
    ks = [table.get(v) if table is not None else _quotient(v, scale, high)
          for v, (_, scale, high, table) in zip(values, limits.scalars, strict=True)]
    if None in ks:
        i = ks.index(None)
        name, scale, high, _ = limits.scalars[i]
        raise InconsistentObservation(f"observation {name} is {values[i]}: encode writes k / {scale:g} there for "
                                      f"a whole number k in 0..{high}")
    return ks


def read_observation(obs: np.ndarray, rules: Rules) -> ObservedTable:
    """The values of ``obs`` (a float32 vector from :func:`as_vector`), each checked against what
    ``encode`` can write under ``rules``; :class:`InconsistentObservation` names the first bad piece."""
    n = rules.num_players
    lay = get_layout(n)
    if obs.shape != (lay.size,):
        raise InconsistentObservation(f"observation of shape {obs.shape} does not fit {n} players: expected "
                                      f"({lay.size},)")
    limits = _limits(rules)
    opp = n - 1

    # ---- the one-hot pieces and the scaled scalars (after the counts in the layout)
    tail = obs[lay.wild_rank:].tolist()
    at = lay.wild_rank
    round_index = _one_hot(tail[lay.round - at:lay.round - at + 11], "round", required=True)
    round_number = round_index + 1
    if round_number not in rules.rounds:
        raise InconsistentObservation(f"round {round_number} is not played under rules.rounds={list(rules.rounds)}")
    wild_index = _one_hot(tail[:13], "wild_rank", required=True)
    if wild_index + 1 != wild_rank(round_number):
        raise InconsistentObservation(f"observation piece 'wild_rank' says rank {wild_index + 1} is wild, but in "
                                      f"round {round_number} rank {wild_rank(round_number)} is")
    phase = _one_hot(tail[lay.phase - at:lay.phase - at + 2], "phase", required=True)
    went_out = _one_hot(tail[lay.went_out - at:lay.went_out - at + n], "went_out", required=False)
    ints = _scaled_ints(tail[lay.hand_sizes - at:], limits)
    sizes, stock_size, scores, turn = ints[:n], ints[n], ints[n + 1:2 * n + 1], ints[2 * n + 1]
    if max(sizes) > hand_size(round_number) + 1:
        raise InconsistentObservation(f"observation piece 'hand_sizes' says {sizes} cards: in round {round_number} "
                                      f"a hand holds {hand_size(round_number)}, one more before a discard")

    # ---- the count pieces
    rows = _count_region(obs, lay, limits.count_high).reshape(3 + 2 * opp, 52)
    row_sums = rows.sum(axis=1).tolist()
    if row_sums[1] > 1:
        raise InconsistentObservation(f"observation piece 'discard_top' holds cards "
                                      f"{np.flatnonzero(rows[1]).tolist()}: the top is one card or none")
    top = int(rows[1].argmax()) if row_sums[1] else None
    if top is None and row_sums[2]:
        raise InconsistentObservation("observation piece 'discard_below' holds cards under an empty top: a "
                                      "non-empty discard pile has a top card")
    seen_discards = sum(row_sums[3 + opp:])
    if seen_discards > turn:
        raise InconsistentObservation(f"observation piece 'opponent_discards' counts {seen_discards} discards, "
                                      f"more than the {turn} turns played")
    return ObservedTable(rows, row_sums, rows[0], top, rows[2], rows[3:3 + opp], rows[3 + opp:], round_number,
                         phase, went_out, sizes, stock_size, scores, turn)


def check_world(world: game.GameState, obs: np.ndarray, action_mask: np.ndarray | None) -> None:
    """The last guard of ``determinize``: ``world`` encodes to ``obs`` for seat 0 and, when the
    observer is to move, gives ``action_mask`` exactly."""
    got = encode(world, 0)
    if got.tobytes() != obs.tobytes() and not np.array_equal(got, obs):  # bytes: the fast path
        i = int(np.flatnonzero(got != obs)[0])
        raise InconsistentObservation(f"observation {piece_at(get_layout(world.rules.num_players), i)} is {obs[i]}, "
                                      f"but every game its other pieces fit has {got[i]} there")
    if action_mask is None:
        return
    mask = game.action_mask(world)
    if (mask.tobytes() != action_mask.tobytes() or action_mask.dtype != mask.dtype) \
            and not np.array_equal(mask, action_mask):
        legal = np.flatnonzero(mask).tolist()
        raise InconsistentObservation(f"the action mask allows {np.flatnonzero(action_mask).tolist()}, but the "
                                      f"observation's position allows {legal}")
