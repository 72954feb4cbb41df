"""Pure-Python exact meld solver: the fallback when the C accelerator is not built.

``tt_env.engine.melds`` uses it when the extension ``_meldsolver`` is missing, or always with
``TT_ENV_SOLVER=python``. The two backends have the same five entry points, give the same
answers (``solve`` the same arrangement, card for card) and raise the same errors (same
types, same messages) for bad input:

- ``least_penalty(hand, wild_rank, aces_high=False, meld_needs_natural=False) -> int``
- ``discard_penalties(...) -> [(card, least penalty of the hand less one copy of card)]``,
  one pair per distinct card of the hand, sorted by card
- ``solve(...) -> (deadwood, melds as lists of card ints, unmelded card ints)``
- ``after_draw_values(hand, cards, wild_rank, aces_high=False, meld_needs_natural=False)
  -> [int]``: ``expert-v0``'s value of each draw, and ``draw_gains(hands, weights, wild_rank,
  aces_high=False, meld_needs_natural=False, out_bonus=0.0, draws=None) -> [(penalty, gain)]``:
  its expected gain of one draw, for several hands (see the functions)

Input (checked in this order): ``wild_rank`` an int, not a bool, in 0..13 (0: no wilds);
``hand`` an iterable of at most ``MAX_CARDS`` (40) cards, each an int, not a bool, in 0..51;
for ``after_draw_values`` and each hand of ``draw_gains``, at most 39 (the drawn card makes
40); then ``cards`` an iterable of card ints (any number), or ``weights`` 52 real numbers,
``out_bonus`` a real number and ``draws`` None or one int in 0..2**52 - 1 per hand.

Work: this backend (only) stops a search after ``MAX_SEARCH_STATES`` (150,000) memoised states
(a few seconds) with a ``ValueError`` that says so. Every hand of up to 16 cards fits (the bound
below); the hardest hands of 20 and more cards do not, where C answers (in up to a minute).

Terminology (used throughout the engine):

- **natural**: a card that is not of this round's wild rank.
- **wild**: a card of the wild rank; it may stand for any card in a meld.
- **set**: three or more cards of one rank (suits may repeat with several decks).
- **run**: three or more cards of one suit in consecutive slots, each rank at most once,
  at most 13 long; a wild fills an empty slot or extends an end.
- **meld**: a set or a run. **deadwood** (or **penalty**): the value of the cards left out.
- **room**: how many more wilds a meld can take: a set always has room, a run 13 - length.

The algorithm: a memoised depth-first search over the natural cards in card order
(suit-major, rank ascending). The first remaining card ``c`` is either deadwood, or in a
set with a choice of the other cards of its rank, or the lowest natural of a run in its suit
(every lower card of its suit is already placed), or, with aces high, the top of a run ending
in an ace. A set of ``k`` naturals needs ``max(0, 3 - k)`` wilds; a run needs one wild per
empty slot plus padding to three. Every arrangement of the hand is one path of this search,
so the minimum is exact. Wilds left at the end join a meld with room, or form an all-wild set
(three or more, unless ``meld_needs_natural``); the rest are deadwood at the wild rank's
value. A state is (remaining counts of the hand's card types, wilds left, room saturated at
the hand's wild count); the hand less one card is such a state too (one count lower, or one
wild fewer), so ``discard_penalties`` solves every discard in one shared memo.

The C accelerator runs this same search for ``solve`` and for hands outside its fast path;
most of its least penalties come from a table-driven method with the same answers
(``meld_fast.c`` explains it).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

from .cards import card_value
from .meld_inputs import (ALL_DRAWS, MAX_CARDS, as_sequence, check_cards, check_draws, check_input,  # noqa: F401
                          check_room_for_a_draw, check_wild, real_number)

Melds = list[list[int]]
MAX_SEARCH_STATES = 150_000
"""States one search of this backend may memoise (a few seconds) before it gives up with a
``ValueError``. A hand of n naturals and w wilds has at most 2**n * (w + 1)**2 states, so every
hand of up to 16 cards fits (the game's hold at most 14, 15 with a draw); most larger ones do
too, but some of 20 and more cards do not (the C backend, which has no such stop, takes seconds to
a minute for the hardest 40-card hands)."""


def _too_hard(size: int, wilds: int) -> str:
    return (f"this hand of {size} cards ({wilds} wild) needs more than the {MAX_SEARCH_STATES:,} search states "
            f"the pure-Python meld solver allows itself (a few seconds): every hand of up to 16 cards fits (the game's "
            f"hold at most 15); for larger ones use the C accelerator (built by pip install where a C compiler "
            f"exists; TT_ENV_SOLVER=c)")


# --------------------------------------------------------------------------- the search
class _Search:
    """The memoised search over one hand (see the module docstring)."""

    def __init__(self, cards: list[int], wild_rank: int, aces_high: bool, meld_needs_natural: bool) -> None:
        self.wilds = [c for c in cards if c % 13 + 1 == wild_rank]
        counts: dict[int, int] = {}
        for c in cards:
            if c % 13 + 1 != wild_rank:
                counts[c] = counts.get(c, 0) + 1
        self.types = sorted(counts)
        self.type_at = {t: i for i, t in enumerate(self.types)}
        self.start = tuple(counts[t] for t in self.types)
        self.num_wilds = len(self.wilds)
        self.wild_value = card_value(wild_rank) if 1 <= wild_rank <= 13 else 0
        self.values = [card_value(t % 13 + 1, aces_high=aces_high) for t in self.types]
        self.aces_high = aces_high
        self.meld_needs_natural = meld_needs_natural
        self.memo: dict[tuple[tuple[int, ...], int, int], int] = {}
        self.size = len(cards)

    def best(self, rem: tuple[int, ...], w: int, room: int) -> int:
        """Least penalty of the naturals ``rem`` with ``w`` wilds, ``room`` in the melds so far.

        Room beyond the wilds left changes nothing (leaves compare room with wilds; wilds only
        decrease and room only grows below a state), so the key holds ``min(room, w)``, as in C.
        """
        key = (rem, w, room if room < w else w)
        value = self.memo.get(key)
        if value is None:
            if len(self.memo) >= MAX_SEARCH_STATES:
                raise ValueError(_too_hard(self.size, self.num_wilds))
            if not any(rem):
                if w == 0 or room >= w or (not self.meld_needs_natural and w >= 3):
                    value = 0
                else:
                    value = (w - room) * self.wild_value
            else:
                value = min(local + self.best(child, cw, croom)
                            for local, _, child, cw, croom in self.options(rem, w, room))
            self.memo[key] = value
        return value

    def options(self, rem: tuple[int, ...], w: int, room: int):
        """Every (local cost, meld or None, child remainder, child wilds, child room)."""
        types, type_at, num_wilds = self.types, self.type_at, self.num_wilds
        t0 = next(i for i, n in enumerate(rem) if n)
        card = types[t0]
        suit, rank = card // 13, card % 13 + 1
        lst = list(rem)
        lst[t0] -= 1
        yield self.values[t0], ("dead", [t0]), tuple(lst), w, room
        # sets: some copies of c plus any choice of the other cards of its rank
        others = [type_at[s * 13 + rank - 1] for s in range(suit + 1, 4)
                  if s * 13 + rank - 1 in type_at and rem[type_at[s * 13 + rank - 1]]]
        for pick in _choices([rem[t0]] + [rem[t] for t in others], first_min=1):
            need = max(0, 3 - sum(pick))
            if need <= w:
                child = list(rem)
                members: list[int] = []
                for t, k in zip([t0] + others, pick, strict=True):
                    child[t] -= k
                    members += [t] * k
                yield 0, ("set", members, need), tuple(child), w - need, num_wilds
        # runs with c as the lowest natural, then (aces high) runs ending in c as a high ace
        for positions, gaps in _runs(rem, t0, suit, rank, w, type_at, up=True):
            yield from _run_option(rem, positions, gaps, w, room, num_wilds, suit, type_at)
        if self.aces_high and rank == 1:
            for positions, gaps in _runs(rem, t0, suit, 14, w, type_at, up=False):
                yield from _run_option(rem, positions, gaps, w, room, num_wilds, suit, type_at)

    def without(self, card: int) -> tuple[tuple[int, ...], int]:
        """(remainder, wilds) of the whole hand less one copy of ``card``."""
        t = self.type_at.get(card)
        if t is None:  # a wild
            return self.start, self.num_wilds - 1
        rem = list(self.start)
        rem[t] -= 1
        return tuple(rem), self.num_wilds


# --------------------------------------------------------------------------- entry points
def least_penalty(hand: Iterable[int], wild_rank: int, aces_high: bool = False,
                  meld_needs_natural: bool = False) -> int:
    """The least penalty of ``hand`` over every arrangement."""
    cards, wild = check_input(hand, wild_rank)
    search = _Search(cards, wild, bool(aces_high), bool(meld_needs_natural))
    return search.best(search.start, search.num_wilds, 0)


def discard_penalties(hand: Iterable[int], wild_rank: int, aces_high: bool = False,
                      meld_needs_natural: bool = False) -> list[tuple[int, int]]:
    """[(card, least penalty of the hand less one copy of card)] for each distinct card, by card."""
    cards, wild = check_input(hand, wild_rank)
    search = _Search(cards, wild, bool(aces_high), bool(meld_needs_natural))
    return [(card, search.best(*search.without(card), 0)) for card in sorted(set(cards))]


def solve(hand: Iterable[int], wild_rank: int, aces_high: bool = False,
          meld_needs_natural: bool = False) -> tuple[int, Melds, list[int]]:
    """Least penalty of ``hand``, one best arrangement and its unmelded cards."""
    cards, wild = check_input(hand, wild_rank)
    return _arrange(_Search(cards, wild, bool(aces_high), bool(meld_needs_natural)))


def after_draw_values(hand: Iterable[int], cards: Iterable[int], wild_rank: int, aces_high: bool = False,
                      meld_needs_natural: bool = False) -> list[int]:
    """For each card ``u`` of ``cards``: the least penalty of ``hand + [u]`` less the highest
    unmelded value of ``solve``'s arrangement (a wild costs its own rank's value, min(rank,
    10)), or, when that arrangement melds every card, the least penalty after the best
    discard. ``expert-v0`` values a draw by it (an upper bound of the penalty after drawing
    ``u`` and discarding best, exact when fully melded)."""
    held, wild = check_input(hand, wild_rank)
    check_room_for_a_draw(held, "after_draw_values")
    drawn = check_cards(cards, "cards")
    return _after_draw_values(held, drawn, wild, bool(aces_high), bool(meld_needs_natural))


def draw_gains(hands: Iterable[Iterable[int]], weights: Iterable[float], wild_rank: int, aces_high: bool = False,
               meld_needs_natural: bool = False, out_bonus: float = 0.0,
               draws: Iterable[int] | None = None) -> list[tuple[int, float]]:
    """Per hand, (its least penalty, the expected gain of one draw): the sum, over the cards ``u``
    of its mask in ``draws`` (None: every card) with ``weights[u]`` not <= 0, of ``weights[u] *
    (penalty - a + (out_bonus if a == 0 else 0))`` where ``a``, the ``after_draw_values`` of
    ``u``, is below the penalty; added up in card order; ``(0, 0.0)`` when the penalty is 0.
    ``expert-v0``'s lookahead, for every hand its discards would leave at once."""
    wild = check_wild(wild_rank)
    items = as_sequence(hands, "hands must be a sequence of hands (each a sequence of card ints)")
    held = []
    for i, hand in enumerate(items):
        try:
            cards = check_cards(hand, "hand", MAX_CARDS)
            check_room_for_a_draw(cards, "draw_gains")
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"hands[{i}]: {exc}") from None
        held.append(cards)
    chances = as_sequence(weights, "weights must be a sequence of 52 numbers (one per card int)")
    if len(chances) != 52:
        raise ValueError(f"weights has {len(chances)} entries: it takes one per card int, 52")
    chances = [real_number(w, f"weights[{u}] = {w!r}") for u, w in enumerate(chances)]
    bonus = real_number(out_bonus, f"out_bonus={out_bonus!r}")
    masks = [ALL_DRAWS] * len(held) if draws is None else check_draws(draws, len(held))
    aces_high, meld_needs_natural = bool(aces_high), bool(meld_needs_natural)
    out = []
    for cards, mask in zip(held, masks, strict=True):
        search = _Search(cards, wild, aces_high, meld_needs_natural)
        penalty = search.best(search.start, search.num_wilds, 0)
        if penalty == 0:
            out.append((0, 0.0))
            continue
        drawn = [u for u in range(52) if mask >> u & 1 and not chances[u] <= 0.0]
        gain = 0.0
        for u, a in zip(drawn, _after_draw_values(cards, drawn, wild, aces_high, meld_needs_natural), strict=True):
            if a < penalty:
                gain += chances[u] * (penalty - a + (bonus if a == 0 else 0.0))
        out.append((penalty, gain))
    return out


def _after_draw_values(held: list[int], drawn: list[int], wild: int, aces_high: bool,
                       meld_needs_natural: bool) -> list[int]:
    values = [min(c % 13 + 1, 10) if c % 13 + 1 == wild else card_value(c % 13 + 1, aces_high=aces_high)
              for c in range(52)]
    out = []
    for u in drawn:
        search = _Search(held + [u], wild, aces_high, meld_needs_natural)
        total, _, dead = _arrange(search)
        if dead:
            out.append(total - max(values[c] for c in dead))
        else:
            out.append(min(search.best(*search.without(c), 0) for c in set(held + [u])))
    return out


def _arrange(search: _Search) -> tuple[int, Melds, list[int]]:
    """``solve``'s answer: walk one best path of the search, laying out each meld."""
    types, aces_high, meld_needs_natural = search.types, search.aces_high, search.meld_needs_natural
    total = search.best(search.start, search.num_wilds, 0)
    melds: Melds = []
    kinds: list[str | int] = []
    dead: list[int] = []
    spare = search.wilds[::-1]  # popped from the end: wilds are used in hand order, as in C
    rem, w, room, target = search.start, search.num_wilds, 0, total
    while any(rem):
        for local, meld, child, cw, croom in search.options(rem, w, room):
            if local + search.best(child, cw, croom) == target:
                break
        kind = meld[0]
        if kind == "dead":
            dead.append(types[meld[1][0]])
            target -= local
        elif kind == "set":
            melds.append([types[t] for t in meld[1]] + [spare.pop() for _ in range(meld[2])])
            kinds.append("set")
        else:
            run_cards, top = _lay_run(meld[1], meld[2], types, spare, aces_high)
            melds.append(run_cards)
            kinds.append(top)
        rem, w, room = child, cw, croom
    _place_leftover_wilds(melds, kinds, spare, dead, meld_needs_natural, 14 if aces_high else 13)
    return total, melds, dead


def _choices(limits: list[int], first_min: int):
    """Every tuple of counts 0..limit (the first at least ``first_min``), in the C search's
    order: lexicographic, the first count the most significant (so ties between equally good
    sets go the same way in both backends, and ``solve`` returns the same arrangement)."""
    return itertools.product(range(first_min, limits[0] + 1), *(range(limit + 1) for limit in limits[1:]))


def _runs(rem, t0, suit, start, w, type_at, *, up: bool):
    """(positions, gaps) of every run of naturals starting at ``start``, two or more long."""
    def extend(positions, gaps, last, taken):
        if len(positions) >= 2:
            yield list(positions), gaps
        step = 1 if up else -1
        p = last + step
        while 2 <= p <= 13:
            g = gaps + abs(p - last) - 1
            if g > w:
                break
            t = type_at.get(suit * 13 + p - 1)
            if t is not None and rem[t] - taken.get(t, 0) > 0:
                taken[t] = taken.get(t, 0) + 1
                yield from extend(positions + [(p, t)], g, p, taken)
                taken[t] -= 1
            p += step
    yield from extend([(start, t0)], 0, start, {t0: 1})


def _run_option(rem, positions, gaps, w, room, num_wilds, suit, type_at):
    ps = [p for p, _ in positions]
    length = max(ps) - min(ps) + 1
    need = gaps + max(0, 3 - length)
    if need <= w:
        child = list(rem)
        for _, t in positions:
            child[t] -= 1
        new_room = min(num_wilds, room + 13 - max(3, length))
        yield 0, ("run", positions, need), tuple(child), w - need, new_room


def _lay_run(positions, need, types, spare, aces_high) -> tuple[list[int], int]:
    """Cards of a run in slot order (wilds in the gaps, padding above, or below at the top), and its top slot."""
    slots = dict(positions)
    lo, hi = min(slots), max(slots)
    cards = [types[slots[p]] if p in slots else spare.pop() for p in range(lo, hi + 1)]
    pad = need - (hi - lo + 1 - len(slots))
    top = 14 if aces_high else 13
    while pad and hi < top:
        cards.append(spare.pop())
        hi, pad = hi + 1, pad - 1
    return [spare.pop() for _ in range(pad)] + cards, hi


def _place_leftover_wilds(melds, kinds, spare, dead, meld_needs_natural, top_slot) -> None:
    """Put unused wilds where the solver's leaf rule says they go.

    ``spare`` holds the unused wilds, the next to place last (they go in hand order, as in C).
    ``kinds[i]`` is ``"set"`` or, for a run, the slot of its highest card; a wild joins a run
    above its top when there is a slot there, else below its low end, so runs stay in slot order.
    """
    if not spare:
        return
    sets = [m for m, k in zip(melds, kinds, strict=True) if k == "set"]
    if sets:
        sets[0].extend(reversed(spare))
        spare.clear()
        return
    room = sum(13 - len(m) for m in melds)
    if room < len(spare) and len(spare) >= 3 and not meld_needs_natural:
        melds.append(spare[::-1])
        spare.clear()
        return
    for i, m in enumerate(melds):
        while spare and len(m) < 13:
            if kinds[i] < top_slot:
                m.append(spare.pop())
                kinds[i] += 1
            else:
                m.insert(0, spare.pop())
    dead.extend(reversed(spare))
    spare.clear()
