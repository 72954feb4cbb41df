"""``tt_env.batch.buffers.ReusedArrays``: a CPU step's observations reuse memory that nobody holds,
and never memory that someone does (a tensor, a view, a numpy array or a storage made from it)."""

from __future__ import annotations

import pytest
import torch

from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchRandom
from tt_env.batch.buffers import ReusedArrays
from tt_env.engine.rules import Rules


def test_an_array_is_handed_out_again_only_once_nothing_holds_it() -> None:
    pool = ReusedArrays(size=3)
    first = pool.empty((4, 6), "float32")
    address = first.data_ptr()
    assert pool.empty((4, 6), "float32").data_ptr() != address  # first is held
    del first
    again = pool.empty((4, 6), "float32")
    assert again.data_ptr() == address and again.dtype == torch.float32 and again.shape == (4, 6)
    for keep in (lambda t: t[:, :2], lambda t: t.numpy(), lambda t: t.untyped_storage(), lambda t: t.view(-1)[3:]):
        held = keep(again)
        del again
        again = pool.empty((4, 6), "float32")
        assert again.data_ptr() != address  # held through what was kept
        del held, again
        again = pool.empty((4, 6), "float32")
        assert again.data_ptr() == address
    assert pool.empty((4, 7), "float32").data_ptr() != address and pool.empty((4, 6), "int64").dtype == torch.int64


def test_a_full_pool_keeps_what_is_held_and_replaces_what_is_not() -> None:
    pool = ReusedArrays(size=2)

    def pooled() -> set[int]:
        return {array.ctypes.data for array in pool._arrays}

    a, b = pool.empty((3,), "float32"), pool.empty((3,), "float32")
    c = pool.empty((3,), "float32")  # both held: a new array outside the pool
    assert pooled() == {a.data_ptr(), b.data_ptr()} and c.data_ptr() not in pooled()
    del b
    d = pool.empty((5,), "float32")  # the free one does not fit: the new one takes its place
    assert pooled() == {a.data_ptr(), d.data_ptr()}
    del d
    e = pool.empty((3,), "float32")
    assert pooled() == {a.data_ptr(), e.data_ptr()}
    with pytest.raises(ValueError, match="size=0 is not allowed: use an int >= 1"):
        ReusedArrays(size=0)


def test_a_held_observation_never_changes_and_a_dropped_one_is_reused() -> None:
    rules = Rules(rounds=(1, 2), max_turns_per_round=6)  # short games: final observations every few steps
    game = BatchGame(rules, 64, seed=3)
    agent = BatchRandom(rules, seed=5)
    ts = game.reset()
    kept, copies, addresses, finals = [], [], set(), 0
    for step in range(60):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
        addresses.add(ts.observation.data_ptr())
        finals += int(ts.game_over.sum())
        if step % 10 == 0:  # keep some whole, some as a view of a column slice, some final observations
            kept.append(ts.observation if step % 20 else ts.observation[:, 5:40])
            copies.append(kept[-1].clone())
        if ts.game_over.any():
            kept.append(ts.final_observation)
            copies.append(ts.final_observation.clone())
    assert finals > 0
    for held, copy in zip(kept, copies, strict=True):
        assert torch.equal(held, copy)
    assert len(addresses) < 30  # memory nobody held was handed out again


def test_a_free_array_is_reused_only_for_its_own_shape_and_dtype() -> None:
    pool = ReusedArrays(size=1)
    pool.empty((4, 6), "float32")  # dropped at once: the pool's one array is free
    for shape, dtype in (((4, 7), "float32"), ((6, 4), "float32"), ((4, 6), "int32")):
        other = pool.empty(shape, dtype)  # the free array has another shape or dtype: a new one takes its place
        assert other.shape == shape and other.dtype == getattr(torch, dtype)
        assert pool._arrays[0].shape == shape and pool._arrays[0].dtype == dtype
        del other


@pytest.mark.parametrize("size", [0, -1, True, 1.5, "2"])
def test_a_pool_size_that_is_not_an_int_of_at_least_1_is_refused(size) -> None:
    with pytest.raises(ValueError, match=f"size={size!r} is not allowed: use an int >= 1"):
        ReusedArrays(size=size)


def test_a_pool_of_one_array_reuses_it() -> None:
    pool = ReusedArrays(size=1)
    address = pool.empty((3,), "float32").data_ptr()  # dropped at once
    assert pool.empty((3,), "float32").data_ptr() == address
