"""Counter-based random numbers for the batched engine: one stream per table, the same on every device.

A table's shuffles come from a hash of (seed, table index, a per-table counter), never from a
generator shared by the batch. So a table plays the same games whatever the other tables do,
on a CPU and on a GPU alike, and a step needs no generator state on the host. The hash is a
32-bit integer mixer (the "lowbias32" family) written in int64 tensor arithmetic that never
overflows: every multiplier is below 2**31 and every value is masked to 32 bits first.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

MASK32 = 0xFFFFFFFF
_GOLDEN = 0x1E3779B1
_STREAM = 0x05EBCA6B
_POSITION = 0x42B2AE35


def mix32(x: torch.Tensor) -> torch.Tensor:
    """A well-mixed 32-bit hash of each element of ``x`` (int64 holding values below 2**32)."""
    x = x & MASK32
    x = ((x ^ (x >> 16)) * 0x7FEB352D) & MASK32
    x = ((x ^ (x >> 15)) * 0x2C1B3C6D) & MASK32
    x = ((x ^ (x >> 16)) * 0x297A2D39) & MASK32
    return x ^ (x >> 15)


def seed_words(seed: int) -> int:
    """A non-negative int ``seed`` (numpy's too) folded to 32 bits: a seed below 2**32 is itself;
    each higher 32-bit word is mixed in after a hash of the words below it, so that seeds such
    as ``k << 32`` or ``worker << 32 | base`` do not deal the games of small seeds."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)):
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed={seed!r} is not allowed: use an int >= 0")
    folded = seed & MASK32
    seed >>= 32
    while seed:
        folded = mix32(folded + _GOLDEN) ^ (seed & MASK32)
        seed >>= 32
    return folded


def stream_base(seed32: int, tables: torch.Tensor, counters: torch.Tensor) -> torch.Tensor:
    """(B,) hash of each table's (seed, index, counter): the root of one draw of random numbers.

    The seed goes in twice: ``tables * _GOLDEN + seed32`` alone is the same for seed ``s + d *
    _GOLDEN`` at table ``t - d`` (mod 2**32), so such seeds (41233 and 0, say) dealt the same games
    shifted by ``d`` tables; mixed in again after the first hash, they no longer line up."""
    h = mix32(mix32(tables * _GOLDEN + seed32) ^ seed32)
    return mix32(h ^ ((counters & MASK32) * _STREAM & MASK32))


def shuffle_order(base: torch.Tensor, size: int) -> torch.Tensor:
    """(B, size) a uniformly random permutation of ``0..size-1`` per row, from its ``base`` hash.

    Sorting 32-bit hash keys with the position in the low bits: the keys are distinct, so the
    order is exact and the same on every device and sort implementation."""
    positions = torch.arange(size, device=base.device, dtype=torch.int64)
    keys = mix32(base.unsqueeze(1) + positions * _POSITION) * 256 + positions
    return keys.argsort(dim=1)


def uniform_below(base: torch.Tensor, bound: torch.Tensor | int, salt: int) -> torch.Tensor:
    """(B,) an int uniform in ``0..bound-1`` (bias below 2**-24 for bounds up to 256)."""
    return mix32(base + salt) % bound


def shuffle_prefix(base: torch.Tensor, size: int, length: torch.Tensor) -> torch.Tensor:
    """(B, size) per row a uniformly random order of ``0..length-1`` in its first ``length``
    entries (the other positions follow, in order)."""
    positions = torch.arange(size, device=base.device, dtype=torch.int64)
    keys = mix32(base.unsqueeze(1) + positions * _POSITION) * 256 + positions
    keys = torch.where(positions.unsqueeze(0) < length.unsqueeze(1), keys, (1 << 41) + positions)
    return keys.argsort(dim=1)
