"""The go-out check's cheap filter: which hands could meld completely, without solving them.

``BatchGame.step`` solves a discarded hand (does it go out?) only where
:func:`could_meld_completely` says it could; the filter is exact in that direction, and it
drops most hands. Two layouts of the same counts: 13-bit rank masks on a CPU (few bytes a hand),
slices of ``(B, 4, 13)`` tensors elsewhere (few operations, each a kernel launch on a GPU); and
with Triton one kernel (:mod:`tt_env.batch.go_out_filter_triton`).
"""

from __future__ import annotations

import torch

from . import go_out_filter_triton
from .kernels import use_triton


def could_meld_completely(counts: torch.Tensor, wild_rank: torch.Tensor, *, backend: str = "auto") -> torch.Tensor:
    """(B,) bool: False only for hands that surely hold unmelded cards (a cheap filter, exact in
    that direction: where it says False, ``least_penalty`` is above 0). The go-out check solves
    only the other hands. Ranks are taken circularly (the ace next to the king, and below the 2),
    which only allows more melds, so the bounds below stay lower bounds under both ace rules.

    Lower bounds on the wilds a hand needs to meld completely, the largest of:

    - a natural with no other natural of its rank and none of its suit within two ranks
      ("isolated") is melded with at least two wilds of its own meld within two ranks of it: in
      a set of its rank, or in a run, where at least two of the places within two ranks of it are
      in the run and hold no natural. Isolated naturals of different suits are in different
      melds (they differ in suit and, being alone in their rank, in rank too). Two of one suit
      may share a run and its wilds (``x W W y``), but any two that are not next to each other in
      rank order are six or more ranks apart, so their wilds are apart: a suit with ``k``
      isolated naturals needs ``2 * ceil(k / 2)`` wilds, summed over the suits;
    - a natural in no meld of naturals alone (three of its suit in a row, or three naturals of
      its rank) is in a meld with a wild: one wild if there is such a natural, two if they span
      two suits and two ranks (two of them then differ in suit and in rank, so no set and no run
      holds both).

    On a CPU each suit's ranks are a 13-bit mask (bit ``r - 1`` for rank ``r``), so that the
    neighbours are shifts of a few (B, 4) integers rather than passes over every card; on other
    devices they are slices of (B, 4, 13) tensors, in a third of the operations; with the Triton
    kernel (``backend``: :data:`tt_env.batch.kernels.KERNEL_BACKENDS`, ``"auto"`` takes it on
    CUDA where Triton is installed) the masks of one kernel launch
    (:mod:`tt_env.batch.go_out_filter_triton`)."""
    if use_triton(counts.device, backend):
        return go_out_filter_triton.could_meld_completely(counts, wild_rank)
    b = counts.shape[0]
    wilds, needed, melds = (_wilds_needed_bits if counts.device.type == "cpu" else _wilds_needed_slices)(
        counts.view(b, 4, 13), wild_rank.view(b).long())
    return wilds >= torch.maximum(needed, melds)


def _wilds_needed_bits(cards: torch.Tensor, wild: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(wilds held, wilds its isolated naturals need, melds that need a wild: at least one wild
    each) of ``cards`` (B, 4, 13) for :func:`could_meld_completely`, each suit's ranks a 13-bit
    mask: few bytes a hand (the CPU's layout)."""
    b = cards.shape[0]
    has_wild = wild > 0
    wild_col = (wild - 1).clamp(min=0).view(b, 1, 1).expand(b, 4, 1)
    wilds = torch.where(has_wild, cards.gather(2, wild_col).sum(dim=(1, 2), dtype=torch.int64), 0)
    # (B, 2, 4) masks of the ranks held once or more / twice or more, per suit, wild rank left out
    powers = (1 << torch.arange(13, device=cards.device)).to(torch.float32)  # (made on the device: no host copy)
    masks = (torch.stack((cards > 0, cards > 1), dim=1).to(torch.float32) @ powers).to(torch.int32)
    naturals = ~torch.where(has_wild, 1 << (wild - 1), 0).to(torch.int32).view(b, 1, 1)
    masks &= naturals
    held, doubled = masks[:, 0], masks[:, 1]                    # (B, 4) each
    # ranks with two naturals or more: two suits hold it, or one suit holds two copies
    same_rank = doubled[:, 0] | doubled[:, 1] | doubled[:, 2] | doubled[:, 3]
    for i in range(4):
        for j in range(i + 1, 4):
            same_rank |= held[:, i] & held[:, j]
    near = torch.zeros_like(held)
    for shift in (1, 2, 11, 12):                                # +-1 and +-2 ranks, circularly
        near |= ((held << shift) | (held >> (13 - shift))) & 0x1FFF
    isolated = held & ~near & ~same_rank.unsqueeze(1)
    needed = 2 * ((_bit_count13(isolated) + 1) // 2).sum(dim=1, dtype=torch.int64)
    # naturals in a meld of naturals alone: three in a row of their suit, or three of their rank
    in_three = held & _rotate13(held, 12) & _rotate13(held, 11)     # bit r: r, r + 1, r + 2 held
    in_run = in_three | _rotate13(in_three, 1) | _rotate13(in_three, 2)
    tripled = cards.sum(dim=1, dtype=torch.int64) >= 3              # (B, 13); the wild rank is not held
    free = in_run | (tripled.to(torch.float32) @ powers).to(torch.int32).unsqueeze(1)
    costly = held & ~free                                           # (B, 4): naturals whose meld needs a wild
    suits = (costly != 0).sum(dim=1)
    ranks = _bit_count13(costly[:, 0] | costly[:, 1] | costly[:, 2] | costly[:, 3])
    # one wild per meld holding them; two melds at least when they span two suits and two ranks
    melds = torch.where((suits >= 2) & (ranks >= 2), 2, (suits >= 1).long())
    return wilds, needed, melds


def _wilds_needed_slices(cards: torch.Tensor, wild: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same as :func:`_wilds_needed_bits` with (B, 4, 13) bool tensors whose neighbours are
    slices of a ring of ranks: more bytes, a third of the operations (each a kernel launch on a GPU)."""
    b = cards.shape[0]
    is_wild = torch.arange(1, 14, device=cards.device) == wild.view(b, 1)      # (B, 13); none for wild 0
    per_rank = cards.sum(1, dtype=torch.int64)                                 # (B, 13) cards of each rank
    wilds = (per_rank * is_wild).sum(1)
    per_rank = per_rank.masked_fill(is_wild, 0)                                # naturals of each rank
    held = (cards > 0) & ~is_wild.unsqueeze(1)                                 # (B, 4, 13) naturals held
    ring = torch.cat((held[..., 11:], held, held[..., :2]), dim=2)             # rank r at r + 2, circularly
    near = ring[..., 0:13] | ring[..., 1:14] | ring[..., 3:16] | ring[..., 4:17]
    isolated = held & ~near & (per_rank < 2).unsqueeze(1)
    needed = (2 * ((isolated.sum(2) + 1) // 2)).sum(1)
    starts = ring[..., 2:15] & ring[..., 3:16] & ring[..., 4:17]               # r, r + 1, r + 2 held
    back = torch.cat((starts[..., 11:], starts), dim=2)                        # start r at r + 2
    costly = held & ~(back[..., 2:15] | back[..., 1:14] | back[..., 0:13]) & (per_rank < 3).unsqueeze(1)
    suits = costly.any(2).sum(1)
    ranks = costly.any(1).sum(1)
    melds = torch.where((suits >= 2) & (ranks >= 2), 2, (suits >= 1).long())
    return wilds, needed, melds


def _rotate13(x: torch.Tensor, k: int) -> torch.Tensor:
    """13-bit masks ``x`` rotated up by ``k`` ranks (bit ``r`` to bit ``(r + k) % 13``)."""
    return ((x << k) | (x >> (13 - k))) & 0x1FFF


def _bit_count13(x: torch.Tensor) -> torch.Tensor:
    """Set bits of each 13-bit integer of ``x`` (int32), by parallel sums of bit pairs, nibbles, bytes."""
    x = x - ((x >> 1) & 0x5555)
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    return (x & 0xFF) + (x >> 8)
