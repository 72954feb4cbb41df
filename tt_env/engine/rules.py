"""The rules configuration: every option of RULES.md, validated once, frozen.

Sizes that depend on the rules (decks, hand sizes, wild ranks) are derived here from one
:class:`Rules` value, never from module constants that silently assume the defaults.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ALL_ROUNDS: tuple[int, ...] = tuple(range(1, 12))
MIN_PLAYERS, MAX_PLAYERS = 2, 8
ACES_OPTIONS = ("low", "high_or_low")
MAX_DECKS = 64
"""Upper bound of an explicit ``decks``. No table needs more: ``"auto"`` gives at most 3 (8
players in round 11), and a round draws a few hundred cards at most (200 turns by default),
so past a few decks the stock never runs dry and more decks only move the odds of a card
(by under 1/64 at 64 decks). Each deal shuffles the whole shoe: 64 decks (3,328 cards) cost
about 0.3 ms a deal, a million decks about 7 s."""


def hand_size(round_number: int) -> int:
    """Cards dealt to each player in ``round_number`` (1..11): round + 2."""
    return round_number + 2


def wild_rank(round_number: int) -> int:
    """Wild rank of ``round_number`` (1..11): round + 2, so 3s in round 1 and kings in round 11."""
    return round_number + 2


def _cards_left(decks: int, num_players: int, last_round: int) -> int:
    """Cards in the stock after dealing ``last_round`` and turning up the first discard."""
    return 52 * decks - num_players * hand_size(last_round) - 1


def auto_decks(num_players: int, last_round: int = 11) -> int:
    """Decks under ``decks="auto"``: 1 for 2 players, 2 for 3-4, else the fewest that leave N cards."""
    if num_players <= 2:
        return 1
    if num_players <= 4:
        return 2
    decks = 1
    while _cards_left(decks, num_players, last_round) < num_players:
        decks += 1
    return decks


@dataclass(frozen=True)
class Rules:
    """Every rule option of RULES.md plus the player count, with its default.

    Attributes:
        num_players: players at the table, 2..8.
        decks: ``"auto"`` (1 deck for 2 players, 2 for 3-4, more as needed beyond) or an int
            1..:data:`MAX_DECKS` (64); an explicit count too small for the last round is an
            error.
        aces: ``"low"`` (A-2-3 only) or ``"high_or_low"`` (Q-K-A too; unmelded ace costs 15).
        rounds: the rounds played, a non-empty strictly increasing tuple of 1..11.
        discard_drawn_discard: whether the card type just taken from the discard pile may be
            discarded again in the same turn.
        max_turns_per_round: turns (all players together) after which a round with nobody
            gone out ends and every hand is scored as held.
        meld_needs_natural: whether every meld needs at least one card that is not wild.

    Numpy integers (``np.int64(3)``), numpy bools and 1-d integer arrays for ``rounds`` are
    accepted and stored as plain ``int``, ``bool`` and a tuple of ``int``, so that a
    :class:`Rules` always compares, hashes and serialises (JSON) like one built from plain
    values.
    """

    num_players: int = 2
    decks: int | str = "auto"
    aces: str = "low"
    rounds: tuple[int, ...] = ALL_ROUNDS
    discard_drawn_discard: bool = False
    max_turns_per_round: int = 200
    meld_needs_natural: bool = False
    _num_decks: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("num_players", "decks", "max_turns_per_round", "discard_drawn_discard",
                     "meld_needs_natural"):
            object.__setattr__(self, name, _plain_scalar(getattr(self, name)))
        if _is_int_array(self.rounds):
            object.__setattr__(self, "rounds", tuple(int(r) for r in self.rounds))
        elif isinstance(self.rounds, (list, tuple)):
            object.__setattr__(self, "rounds", tuple(_plain_scalar(r) for r in self.rounds))
        _check_int("num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        if not isinstance(self.rounds, (list, tuple)) or not self.rounds:
            raise ValueError(
                f"rounds={self.rounds!r} is not allowed: give a non-empty, strictly increasing "
                f"list of round numbers from 1 to 11"
            )
        rounds = tuple(self.rounds)
        for r in rounds:
            _check_int("rounds", r, 1, 11, whole=rounds)
        if any(b <= a for a, b in zip(rounds, rounds[1:], strict=False)):
            raise ValueError(f"rounds={list(rounds)!r} is not allowed: it must be strictly increasing")
        object.__setattr__(self, "rounds", rounds)
        if self.aces not in ACES_OPTIONS:
            raise ValueError(f"aces={self.aces!r} is not allowed: use one of {list(ACES_OPTIONS)}")
        for name in ("discard_drawn_discard", "meld_needs_natural"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r} is not allowed: use true or false")
        _check_int("max_turns_per_round", self.max_turns_per_round, 1, None)
        needed = auto_decks(self.num_players, rounds[-1])
        if self.decks == "auto":
            decks = needed
        else:
            _check_int("decks", self.decks, 1, MAX_DECKS, extra=' or "auto"')
            decks = int(self.decks)
            if _cards_left(decks, self.num_players, rounds[-1]) < self.num_players:
                raise ValueError(
                    f"decks={decks} is too few for {self.num_players} players in round {rounds[-1]}: "
                    f"at least {needed} decks are needed to leave {self.num_players} cards in the stock"
                )
        object.__setattr__(self, "_num_decks", decks)

    @property
    def num_decks(self) -> int:
        """Decks in play, with ``"auto"`` resolved."""
        return self._num_decks

    @property
    def aces_high(self) -> bool:
        """True when an ace may also follow the king (and costs 15 unmelded)."""
        return self.aces == "high_or_low"

    @property
    def num_cards(self) -> int:
        """Cards in the shoe: 52 per deck."""
        return 52 * self._num_decks

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready form using the RULES.md option names."""
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in dataclasses.fields(self) if f.init}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Rules:
        """Rules from a mapping of option names; unknown names are rejected with the allowed ones."""
        allowed = option_names()
        unknown = sorted(set(values) - set(allowed), key=repr)  # (YAML keys may be ints too)
        if unknown:
            raise ValueError(f"unknown rule option(s) {unknown}: allowed options are {list(allowed)}")
        return cls(**dict(values))  # __post_init__ makes a list of rounds a tuple


def option_names() -> tuple[str, ...]:
    """Names of every rules field, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(Rules) if f.init)


def _plain_scalar(value: Any) -> Any:
    """A numpy integer as ``int`` and a numpy bool as ``bool``; anything else unchanged."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _is_int_array(value: Any) -> bool:
    """Whether ``value`` is a 1-d numpy array of integers."""
    return isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu"


def _check_int(name: str, value: Any, low: int, high: int | None, *, extra: str = "",
               whole: Iterable[int] | None = None) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    ok = ok and (high is None or value <= high)
    if not ok:
        shown = list(whole) if whole is not None else value
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{name}={shown!r} is not allowed: use an integer {span}{extra}")
