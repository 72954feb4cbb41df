"""``tt_env.batch.random_keys``: the batched engine's counter-based random numbers.

A seed's games are part of what a user keeps (a published result names its seed), so the seed's
fold is pinned here, and the draws are checked for what the engine relies on: permutations,
bounds, and streams that do not depend on the other tables."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tt_env.batch.random_keys import (
    MASK32,
    mix32,
    seed_words,
    shuffle_order,
    shuffle_prefix,
    stream_base,
    uniform_below,
)


@pytest.mark.parametrize("seed", [0, 1, 12345, 2 ** 32 - 1])
def test_a_32_bit_seed_is_its_own_fold(seed):
    assert seed_words(seed) == seed


@pytest.mark.parametrize("low,high", [(0, 1), (7, 3), (MASK32, MASK32), (123456789, 2 ** 31 + 5)])
def test_a_64_bit_seed_folds_both_halves(low, high):
    """The low word first, then each higher word mixed in after a hash of the fold so far: games
    of seeds that differ only above bit 32 differ, and every version plays the same games for a seed."""
    seed = high << 32 | low
    assert seed_words(seed) == int(mix32(torch.tensor(low + 0x1E3779B1))) ^ high
    assert seed_words(seed) != seed_words(low)


def test_high_words_do_not_deal_the_games_of_small_seeds():
    """``k << 32`` (and ``worker << 32 | base``) is not seed ``k``'s fold, nor any small seed's."""
    small = {seed_words(k) for k in range(4096)}
    assert not small & {seed_words(k << 32) for k in range(1, 4096)}
    assert not small & {seed_words(k << 64) for k in range(1, 4096)}
    assert len({seed_words(w << 32 | b) for w in range(64) for b in range(64)}) == 64 * 64


def test_seeds_that_are_not_non_negative_ints_are_refused():
    for bad in (-1, 1.5, True, "3", np.int64(-2), np.bool_(True), np.float64(3.0), None):
        with pytest.raises(ValueError, match=r"is not allowed: use an int >= 0$"):
            seed_words(bad)  # type: ignore[arg-type]


def test_numpy_int_seeds_are_their_ints():
    """A seed drawn with numpy (``rng.integers``) deals the same games as the same Python int."""
    for seed in (0, 7, 2 ** 40 + 3):
        assert seed_words(np.int64(seed)) == seed_words(seed)
    assert seed_words(np.uint32(2 ** 32 - 1)) == 2 ** 32 - 1


def python_mix32(x: int) -> int:
    """The mixer in plain Python ints, 32-bit steps written out (the engine's is int64 tensor code)."""
    x &= MASK32
    for shift, multiplier in ((16, 0x7FEB352D), (15, 0x2C1B3C6D), (16, 0x297A2D39)):
        x = ((x ^ (x >> shift)) * multiplier) & MASK32
    return x ^ (x >> 15)


def test_mix32_is_the_32_bit_mixer():
    """Every value the tensor code gives is the 32-bit mixer's: the hash behind every seed's games."""
    values = [0, 1, 2, 0x1E3779B1, 2 ** 31, MASK32 - 1, MASK32, 2 ** 32 + 5, 2 ** 40 + 123]
    assert mix32(torch.tensor(values)).tolist() == [python_mix32(v) for v in values]
    assert python_mix32(1) == 0x4D70D15E  # pinned once more, should the two ever drift together


def test_mix32_stays_in_32_bits_and_spreads_neighbours():
    x = torch.arange(4096, dtype=torch.int64) + (2 ** 32 - 2048)   # crosses the 32-bit wrap
    h = mix32(x)
    assert int(h.min()) >= 0 and int(h.max()) <= MASK32
    assert h.unique().numel() == x.numel()                          # a bijection on 32 bits
    assert 0.45 < float((h & 1).float().mean()) < 0.55              # neighbours do not share a low bit


def test_shuffles_are_permutations_per_row_and_depend_only_on_their_own_row():
    bases = stream_base(seed_words(7), torch.arange(6), torch.zeros(6, dtype=torch.int64))
    order = shuffle_order(bases, 52)
    assert torch.equal(order.sort(dim=1).values, torch.arange(52).expand(6, 52))
    assert len({tuple(r) for r in order.tolist()}) == 6
    alone = shuffle_order(bases[3:4], 52)                           # the same row, without the others
    assert torch.equal(alone[0], order[3])
    later = stream_base(seed_words(7), torch.arange(6), torch.ones(6, dtype=torch.int64))
    assert not torch.equal(shuffle_order(later, 52), order)         # the counter moves the stream


def test_shuffle_prefix_orders_only_the_first_length_entries():
    bases = stream_base(seed_words(3), torch.arange(5), torch.zeros(5, dtype=torch.int64))
    length = torch.tensor([0, 1, 10, 30, 52])
    order = shuffle_prefix(bases, 52, length)
    for row, n in enumerate(length.tolist()):
        assert sorted(order[row, :n].tolist()) == list(range(n))
        assert order[row, n:].tolist() == list(range(n, 52))
    assert order[4].tolist() != list(range(52))


def test_uniform_below_covers_its_range_evenly():
    bases = stream_base(seed_words(11), torch.arange(60_000), torch.zeros(60_000, dtype=torch.int64))
    draws = uniform_below(bases, 6, salt=5)
    counts = torch.bincount(draws, minlength=6)
    assert counts.numel() == 6 and int(counts.min()) > 9_500 and int(counts.max()) < 10_500
    bounds = torch.tensor([1, 2, 3] * 20_000)
    assert bool((uniform_below(bases, bounds, salt=5) < bounds).all())
    assert not torch.equal(uniform_below(bases, 6, salt=6), draws)  # the salt picks another draw


def test_seeds_a_golden_multiple_apart_do_not_deal_shifted_copies():
    """``mix32(table * _GOLDEN + seed)`` alone made seed ``s + d * _GOLDEN`` at table ``t - d`` the
    same stream as seed ``s`` at table ``t``: seeds 0 and 41233 dealt the same games, 5,473
    tables apart (41233 = 5473 * _GOLDEN mod 2**32)."""
    golden = 0x1E3779B1
    tables = torch.arange(6000, dtype=torch.int64)
    counters = torch.zeros(6000, dtype=torch.int64)
    for d in (5473, 1, 100):
        partner = (d * golden) & 0xFFFFFFFF
        a = stream_base(0, tables[d:], counters[d:])
        b = stream_base(partner, tables[:-d], counters[:-d])
        assert (a == b).float().mean() < 0.001, d
    assert (5473 * golden) & 0xFFFFFFFF == 41233
