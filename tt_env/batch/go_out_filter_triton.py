"""The go-out check's filter as one fused Triton kernel (the GPU's fast path).

:func:`tt_env.batch.go_out_filter.could_meld_completely` bounds from below the wilds a hand
needs to meld completely; on a GPU its slices layout is about forty tensor operations, each a
kernel launch. Here one kernel computes the same bounds per hand, with the CPU layout's 13-bit
rank masks per suit (``_wilds_needed_bits``) held in registers: a (hands, 4) tile of masks, one
column per suit. On a CPU it runs in Triton's interpreter (the tests, against both layouts).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import torch

from .solver_triton import triton_cdiv
from .triton_build import build

if TYPE_CHECKING:  # the helpers' tl is bound by triton_build.build (Triton is optional)
    import triton.language as tl

BLOCK_HANDS = 64
"""Hands per program (not yet tuned on a GPU)."""


def _rotate13(x, k):
    """13-bit masks ``x`` rotated up by ``k`` ranks (go_out_filter._rotate13), inside a kernel."""
    return ((x << k) | (x >> (13 - k))) & 0x1FFF


def _bit_count13(x):
    """Set bits of each 13-bit mask of ``x`` (go_out_filter._bit_count13), inside a kernel."""
    x = x - ((x >> 1) & 0x5555)
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    return (x & 0xFF) + (x >> 8)


def _total(x):
    """Row sums of a (hands, 4) tile, inside a kernel (tl.sum's combine: the interpreter runs it)."""
    return tl.reduce(x, 1, tl.standard._sum_combine)


@functools.lru_cache(maxsize=None)
def _kernel(interpret: bool):
    """The filter kernel: compiled, or wrapped for the interpreter (CPU tensors)."""
    import triton.language as tl

    def filter_kernel(counts, wild_rank, could, b, BLOCK: tl.constexpr):
        rows = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        ok = rows < b
        wild = tl.load(wild_rank + rows, mask=ok, other=0).to(tl.int32)
        suit = tl.arange(0, 4)[None, :]
        held = tl.full((BLOCK, 4), 0, tl.int32)          # the naturals' ranks held, per suit
        wilds = tl.full((BLOCK,), 0, tl.int32)
        same_rank = tl.full((BLOCK,), 0, tl.int32)        # ranks with two naturals or more
        tripled = tl.full((BLOCK,), 0, tl.int32)          # ranks with three naturals or more
        for r in tl.static_range(13):
            c = tl.load(counts + rows[:, None] * 52 + suit * 13 + r, mask=ok[:, None], other=0).to(tl.int32)
            is_wild = wild == r + 1
            per_rank = _total(c)
            wilds += tl.where(is_wild, per_rank, 0)
            naturals = tl.where(is_wild, 0, per_rank)
            held |= tl.where((c > 0) & ~is_wild[:, None], 1 << r, 0)
            same_rank |= tl.where(naturals >= 2, 1 << r, 0)
            tripled |= tl.where(naturals >= 3, 1 << r, 0)
        near = _rotate13(held, 1) | _rotate13(held, 2) | _rotate13(held, 11) | _rotate13(held, 12)
        isolated = held & ~near & ~same_rank[:, None]
        needed = _total(2 * ((_bit_count13(isolated) + 1) // 2))
        in_three = held & _rotate13(held, 12) & _rotate13(held, 11)   # bit r: r, r + 1, r + 2 held
        in_run = in_three | _rotate13(in_three, 1) | _rotate13(in_three, 2)
        costly = held & ~(in_run | tripled[:, None])                  # naturals whose meld needs a wild
        suits = _total((costly != 0).to(tl.int32))
        ranks = tl.full((BLOCK,), 0, tl.int32)
        for r in tl.static_range(13):
            ranks += (_total((costly >> r) & 1) > 0).to(tl.int32)
        melds = tl.where((suits >= 2) & (ranks >= 2), 2, (suits >= 1).to(tl.int32))
        tl.store(could + rows, (wilds >= tl.maximum(needed, melds)).to(tl.int8), mask=ok)

    return build([filter_kernel], interpret, [_rotate13, _bit_count13, _total])[0]


def could_meld_completely(counts: torch.Tensor, wild_rank: torch.Tensor) -> torch.Tensor:
    """(B,) bool :func:`tt_env.batch.go_out_filter.could_meld_completely` of ``counts`` (B, 52)
    and ``wild_rank`` (B,), by one kernel launch."""
    b = counts.shape[0]
    could = torch.empty(b, dtype=torch.bool, device=counts.device)
    if b:
        _kernel(counts.device.type == "cpu")[(triton_cdiv(b, BLOCK_HANDS),)](
            counts.contiguous(), wild_rank.reshape(b).contiguous(), could.view(torch.int8), b, BLOCK=BLOCK_HANDS)
    return could
