"""The exact meld solver: the least penalty of a hand and one arrangement that reaches it.

``best_melds`` is exact for any hand of up to 40 cards (the game needs 14) from any number
of decks, wild cards included. Two backends give the same answers and raise the same errors
for bad input: the C accelerator ``_meldsolver`` (built at install time where a C compiler
exists) and the pure-Python ``melds_py`` (its docstring explains the algorithm and defines
the vocabulary). The environment variable ``TT_ENV_SOLVER``, read once at import, picks one:

- ``auto`` (default, also when unset or empty): C if built, else Python;
- ``c``: C, and an ImportError at import if it was not built;
- ``python``: Python, even where C is built.

The Python backend stops a search after ``melds_py.MAX_SEARCH_STATES`` states (a few seconds)
with a ``ValueError``: every hand of up to 16 cards fits, the hardest hands of 20 and more cards
do not (C answers them, in up to a minute for the hardest 40-card hands).

``solver_backend()`` (and the constant ``SOLVER_BACKEND``) says which is in use.
``least_penalty``, ``discard_penalties``, ``after_draw_values`` and ``draw_gains`` are the
backend's own functions, bound here with no Python wrapper in between: they are the hot path of the agents
and the solver features.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from .cards import card_value, rank_of, suit_of
from . import melds_py

SOLVER_ENV = "TT_ENV_SOLVER"
SOLVER_CHOICES = ("c", "python", "auto")


def _load_backend() -> tuple[ModuleType, str]:
    """(backend module, "c" or "python") as ``TT_ENV_SOLVER`` asks."""
    choice = os.environ.get(SOLVER_ENV, "").strip() or "auto"
    if choice not in SOLVER_CHOICES:
        raise ValueError(f"{SOLVER_ENV}={choice!r} is not allowed: use c, python or auto "
                         "(auto, the default: the C accelerator if it was built, else pure Python)")
    if choice == "python":
        return melds_py, "python"
    try:  # the C accelerator, built by `pip install` where a C compiler exists
        from . import _meldsolver  # type: ignore[attr-defined]
    except ImportError as exc:
        if choice == "c":
            raise ImportError(
                f"{SOLVER_ENV}=c asks for the C meld solver, but tt_env.engine._meldsolver is not "
                f"built ({exc}). Build it with `pip install -e .` on a machine with a C compiler "
                f"(or `python setup.py build_ext --inplace`), or set {SOLVER_ENV}=auto or python "
                "for the pure-Python solver.") from exc
        return melds_py, "python"
    return _meldsolver, "c"


_backend, SOLVER_BACKEND = _load_backend()

least_penalty = _backend.least_penalty
"""least_penalty(hand, wild_rank, aces_high=False, meld_needs_natural=False) -> int: only the
least penalty of ``hand`` (card ints; ``wild_rank`` 1..13, 0 for no wilds): the fast path for
scoring and going-out checks."""

discard_penalties = _backend.discard_penalties
"""discard_penalties(hand, wild_rank, aces_high=False, meld_needs_natural=False) ->
[(card, least penalty of ``hand`` less one copy of card)], one pair per distinct card of the
hand, sorted by card: every discard's result in one call (the sub-solves share work)."""

after_draw_values = _backend.after_draw_values
"""after_draw_values(hand, cards, wild_rank, aces_high=False, meld_needs_natural=False) ->
[for each card u of ``cards``: the deadwood of ``best_melds(hand + [u])`` less the highest value
among its unmelded cards (a wild costs its own rank's value, min(rank, 10)), or, when that
arrangement melds every card, the least penalty after the best discard of ``hand + [u]``]:
what ``expert-v0`` values each possible draw by, in one call (its inner loop)."""

draw_gains = _backend.draw_gains
"""draw_gains(hands, weights, wild_rank, aces_high=False, meld_needs_natural=False, out_bonus=0.0,
draws=None) -> [(least penalty of the hand, expected gain of one draw)], one pair per hand: over
the cards ``u`` of the hand's bit mask in ``draws`` (None: every card) whose weight is not <= 0
and whose ``after_draw_values`` ``a`` is below the penalty, the sum of ``weights[u] * (penalty - a
+ (out_bonus if a == 0 else 0.0))``, added in card order (the floats are those of that Python
loop); ``(0, 0.0)`` for a hand whose penalty is 0. ``expert-v0``'s one-draw lookahead of every
hand its candidate discards leave, in one call (their draws share one search)."""


def solver_backend() -> str:
    """``"c"`` or ``"python"``: the backend in use (``TT_ENV_SOLVER`` picks it at import)."""
    return SOLVER_BACKEND


@dataclass(frozen=True)
class MeldResult:
    """A solved hand.

    Attributes:
        deadwood: the least total penalty over every arrangement of the hand.
        melds: the melds of one arrangement reaching it, each a tuple of card ints
            (runs in slot order; wilds stand in gaps and at the ends).
        unmelded: the cards left out of every meld; their values add up to ``deadwood``.
    """

    deadwood: int
    melds: tuple[tuple[int, ...], ...]
    unmelded: tuple[int, ...]


def best_melds(hand: Sequence[int], wild_rank: int, *, aces_high: bool = False,
               meld_needs_natural: bool = False) -> MeldResult:
    """Solve ``hand`` (card ints) with ``wild_rank`` (1..13; 0 for no wilds) exactly."""
    deadwood, melds, unmelded = _backend.solve(hand, wild_rank, aces_high, meld_needs_natural)
    return MeldResult(deadwood, tuple(tuple(m) for m in melds), tuple(unmelded))


def is_valid_meld(cards: Sequence[int], wild_rank: int, *, aces_high: bool = False,
                  meld_needs_natural: bool = False) -> bool:
    """Whether ``cards`` (in any order) form one set or one run under the rules."""
    if len(cards) < 3:
        return False
    naturals = [c for c in cards if rank_of(c) != wild_rank]
    num_wilds = len(cards) - len(naturals)
    if not naturals:
        return not meld_needs_natural
    if len({rank_of(c) for c in naturals}) == 1:
        return True
    if len({suit_of(c) for c in naturals}) != 1 or len(cards) > 13:
        return False
    ranks = sorted(rank_of(c) for c in naturals)
    options = [ranks]
    if aces_high and ranks[0] == 1:
        options.append(sorted(r if r != 1 else 14 for r in ranks))
    for rs in options:
        if len(set(rs)) == len(rs) and rs[-1] - rs[0] + 1 - len(rs) <= num_wilds:
            return True
    return False


def penalty_of(cards: Sequence[int], wild_rank: int, *, aces_high: bool = False) -> int:
    """Sum of the unmelded values of ``cards`` (a wild costs its own rank's value)."""
    return sum(card_value(rank_of(c), aces_high=aces_high and rank_of(c) != wild_rank) for c in cards)
