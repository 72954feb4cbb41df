"""TEMPORARY development stand-in (replaced by the batched solver branch): loops the scalar solver."""
from __future__ import annotations
import torch
from ..engine.melds import least_penalty as _scalar
from ..engine.rules import Rules


def least_penalty(counts: torch.Tensor, wild_rank: torch.Tensor | int, rules: Rules) -> torch.Tensor:
    c = counts.cpu().long().tolist()
    w = wild_rank.cpu().tolist() if isinstance(wild_rank, torch.Tensor) else [wild_rank] * len(c)
    out = []
    for row, wr in zip(c, w):
        hand = [card for card, k in enumerate(row) for _ in range(k)]
        out.append(_scalar(hand, wr, rules.aces_high, rules.meld_needs_natural))
    return torch.tensor(out, dtype=torch.int64, device=counts.device)
