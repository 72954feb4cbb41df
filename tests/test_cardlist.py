"""``CardList`` keeps ``counts`` equal to the counts of its cards under every list mutation.

Hypothesis plays random sequences of list operations on a ``CardList`` and on a plain
list side by side: after each operation both hold the same cards (or both raised the same
error), and ``counts`` is the 52-long count vector of the cards.
"""

from __future__ import annotations

import copy
import json
import pickle
from array import array
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tt_env.engine.cardlist import CardList

cards = st.integers(0, 51)
card_lists = st.lists(cards, max_size=12)
indices = st.integers(-8, 8)
slices = st.builds(slice, st.none() | indices, st.none() | indices, st.none() | st.sampled_from([-2, -1, 1, 2, 3]))

OPERATIONS = st.one_of(
    st.tuples(st.just("append"), cards),
    st.tuples(st.just("pop"), indices),
    st.tuples(st.just("pop_last")),
    st.tuples(st.just("remove"), cards),
    st.tuples(st.just("extend"), card_lists),
    st.tuples(st.just("extend_iter"), card_lists),
    st.tuples(st.just("extend_self")),
    st.tuples(st.just("insert"), indices, cards),
    st.tuples(st.just("setitem"), indices, cards),
    st.tuples(st.just("setslice"), slices, card_lists),
    st.tuples(st.just("delitem"), indices),
    st.tuples(st.just("delslice"), slices),
    st.tuples(st.just("clear")),
    st.tuples(st.just("iadd"), card_lists),
    st.tuples(st.just("iadd_iter"), card_lists),
    st.tuples(st.just("iadd_self")),
    st.tuples(st.just("imul"), st.integers(-1, 3)),
    st.tuples(st.just("sort")),
    st.tuples(st.just("reverse")),
)


def run(target: list, op: tuple) -> tuple[list, str | None]:
    """Apply ``op`` to ``target``; the (possibly rebound) list and the error type raised, if any."""
    name, *args = op
    try:
        if name == "append":
            target.append(args[0])
        elif name == "pop":
            target.pop(args[0])
        elif name == "pop_last":
            target.pop()
        elif name == "remove":
            target.remove(args[0])
        elif name == "extend":
            target.extend(args[0])
        elif name == "extend_iter":
            target.extend(iter(args[0]))
        elif name == "extend_self":
            target.extend(target)
        elif name == "insert":
            target.insert(args[0], args[1])
        elif name == "setitem":
            target[args[0]] = args[1]
        elif name == "setslice":
            target[args[0]] = args[1]
        elif name == "delitem":
            del target[args[0]]
        elif name == "delslice":
            del target[args[0]]
        elif name == "clear":
            target.clear()
        elif name == "iadd":
            target += args[0]
        elif name == "iadd_iter":
            target += iter(args[0])
        elif name == "iadd_self":
            target += target
        elif name == "imul":
            target *= args[0]
        elif name == "sort":
            target.sort()
        elif name == "reverse":
            target.reverse()
        else:  # pragma: no cover - the strategy only draws the names above
            raise AssertionError(name)
    except (IndexError, ValueError) as err:
        return target, type(err).__name__
    return target, None


def assert_consistent(cl: Any, model: list[int]) -> None:
    assert isinstance(cl, CardList)
    assert list(cl) == model
    assert isinstance(cl.counts, array) and cl.counts.typecode == "f" and len(cl.counts) == 52
    assert list(cl.counts) == np.bincount(np.array(model, dtype=np.intp), minlength=52).astype(float).tolist()


@settings(max_examples=300, deadline=None)
@given(card_lists, st.lists(OPERATIONS, max_size=25))
def test_counts_follow_every_mutation(start: list[int], ops: list[tuple]) -> None:
    cl, model = CardList(start), list(start)
    assert_consistent(cl, model)
    for op in ops:
        cl, cl_error = run(cl, op)
        model, model_error = run(model, op)
        assert cl_error == model_error, op
        assert_consistent(cl, model)
        assert cl == model


@settings(max_examples=100, deadline=None)
@given(card_lists, cards)
def test_copies_are_independent_and_consistent(start: list[int], card: int) -> None:
    cl = CardList(start)
    for dup in (copy.copy(cl), copy.deepcopy(cl), pickle.loads(pickle.dumps(cl)),
                pickle.loads(pickle.dumps(cl, protocol=2)), CardList(cl)):
        assert type(dup) is CardList
        assert_consistent(dup, start)
        dup.append(card)
        assert_consistent(dup, start + [card])
        assert_consistent(cl, start), "mutating a copy left the original alone"


@settings(max_examples=100, deadline=None)
@given(card_lists)
def test_behaves_as_a_plain_list_outside(start: list[int]) -> None:
    cl = CardList(start)
    assert json.dumps(cl) == json.dumps(start)
    assert json.loads(json.dumps({"pile": cl})) == {"pile": start}
    assert cl == start and start == cl and len(cl) == len(start)
    assert cl[1:3] == start[1:3] and list(reversed(cl)) == start[::-1]
    assert isinstance(cl, list)


def test_built_from_any_iterable() -> None:
    assert_consistent(CardList(iter([5, 5, 51, 0])), [5, 5, 51, 0])
    assert_consistent(CardList(), [])
    assert_consistent(CardList(c for c in range(52)), list(range(52)))
