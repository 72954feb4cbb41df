"""Pure-Python exact meld solver: the fallback when the C accelerator is not built.

Terminology (used throughout the engine):

- **natural**: a card that is not of this round's wild rank.
- **wild**: a card of the wild rank; it may stand for any card in a meld.
- **set**: three or more cards of one rank (suits may repeat with several decks).
- **run**: three or more cards of one suit in consecutive slots, each rank at most once,
  at most 13 long; a wild fills an empty slot or extends an end.
- **meld**: a set or a run. **deadwood** (or **penalty**): the value of the cards left out.
- **room**: how many more wilds a meld can take: a set always has room, a run 13 - length.

The algorithm (mirrored line for line by ``_meldsolver.c``): a memoised depth-first search
over the natural cards in card order (suit-major, rank ascending). The first remaining
card ``c`` is either deadwood, or in a set with a choice of the other cards of its rank, or
the lowest natural of a run in its suit (every lower card of its suit is already placed),
or, with aces high, the top of a run ending in an ace. A set of ``k`` naturals needs
``max(0, 3 - k)`` wilds; a run needs one wild per empty slot plus padding to three. Every
arrangement of the hand is one path of this search, so the minimum is exact. Wilds left
at the end join a meld with room, or form an all-wild set (three or more, unless
``meld_needs_natural``); the rest are deadwood at the wild rank's value.
"""

from __future__ import annotations

from functools import lru_cache

from .cards import card_value

Melds = list[list[int]]


def solve(hand: list[int], wild_rank: int, aces_high: bool = False,
          meld_needs_natural: bool = False) -> tuple[int, Melds, list[int]]:
    """Least penalty of ``hand``, one best arrangement and its unmelded cards."""
    wilds = [c for c in hand if c % 13 + 1 == wild_rank]
    counts: dict[int, int] = {}
    for c in hand:
        if c % 13 + 1 != wild_rank:
            counts[c] = counts.get(c, 0) + 1
    types = sorted(counts)
    type_at = {t: i for i, t in enumerate(types)}
    num_wilds = len(wilds)
    wild_value = card_value(wild_rank) if 1 <= wild_rank <= 13 else 0

    def value(i: int) -> int:
        return card_value(types[i] % 13 + 1, aces_high=aces_high)

    def options(rem: tuple[int, ...], w: int, room: int):
        """Every (local cost, meld or None, child remainder, child wilds, child room)."""
        t0 = next(i for i, n in enumerate(rem) if n)
        card = types[t0]
        suit, rank = card // 13, card % 13 + 1
        lst = list(rem)
        lst[t0] -= 1
        yield value(t0), ("dead", [t0]), tuple(lst), w, room
        # sets: some copies of c plus any choice of the other cards of its rank
        others = [type_at[s * 13 + rank - 1] for s in range(suit + 1, 4)
                  if s * 13 + rank - 1 in type_at and rem[type_at[s * 13 + rank - 1]]]
        for pick in _choices([rem[t0]] + [rem[t] for t in others], first_min=1):
            total = sum(pick)
            need = max(0, 3 - total)
            if need <= w:
                child = list(rem)
                members: list[int] = []
                for t, k in zip([t0] + others, pick):
                    child[t] -= k
                    members += [t] * k
                yield 0, ("set", members, need), tuple(child), w - need, num_wilds
        # runs with c as the lowest natural, then (aces high) runs ending in c as a high ace
        for positions, gaps in _runs(rem, t0, suit, rank, w, type_at, up=True):
            yield from _run_option(rem, positions, gaps, w, room, num_wilds, suit, type_at)
        if aces_high and rank == 1:
            for positions, gaps in _runs(rem, t0, suit, 14, w, type_at, up=False):
                yield from _run_option(rem, positions, gaps, w, room, num_wilds, suit, type_at)

    @lru_cache(maxsize=None)
    def best(rem: tuple[int, ...], w: int, room: int) -> int:
        if not any(rem):
            if w == 0 or room >= w or (not meld_needs_natural and w >= 3):
                return 0
            return (w - room) * wild_value
        return min(local + best(child, cw, croom) for local, _, child, cw, croom in options(rem, w, room))

    start = tuple(counts[t] for t in types)
    total = best(start, num_wilds, 0)
    melds: Melds = []
    kinds: list[str | int] = []
    dead: list[int] = []
    spare = list(wilds)
    rem, w, room, target = start, num_wilds, 0, total
    while any(rem):
        for local, meld, child, cw, croom in options(rem, w, room):
            if local + best(child, cw, croom) == target:
                break
        kind = meld[0]
        if kind == "dead":
            dead.append(types[meld[1][0]])
            target -= local
        elif kind == "set":
            melds.append([types[t] for t in meld[1]] + [spare.pop() for _ in range(meld[2])])
            kinds.append("set")
        else:
            cards, top = _lay_run(meld[1], meld[2], types, spare, aces_high)
            melds.append(cards)
            kinds.append(top)
        rem, w, room = child, cw, croom
    _place_leftover_wilds(melds, kinds, spare, dead, meld_needs_natural, 14 if aces_high else 13)
    return total, melds, dead


def _choices(limits: list[int], first_min: int):
    """Every tuple of counts 0..limit (the first at least ``first_min``)."""
    if not limits:
        yield ()
        return
    for rest in _choices(limits[1:], 0):
        for k in range(first_min, limits[0] + 1):
            yield (k, *rest)


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

    ``kinds[i]`` is ``"set"`` or, for a run, the slot of its highest card; a wild joins a run
    above its top when there is a slot there, else below its low end, so runs stay in slot order.
    """
    if not spare:
        return
    sets = [m for m, k in zip(melds, kinds) if k == "set"]
    if sets:
        sets[0].extend(spare)
        spare.clear()
        return
    room = sum(13 - len(m) for m in melds)
    if room < len(spare) and len(spare) >= 3 and not meld_needs_natural:
        melds.append(list(spare))
        spare.clear()
        return
    for i, m in enumerate(melds):
        while spare and len(m) < 13:
            if kinds[i] < top_slot:
                m.append(spare.pop())
                kinds[i] += 1
            else:
                m.insert(0, spare.pop())
    dead.extend(spare)
    spare.clear()
