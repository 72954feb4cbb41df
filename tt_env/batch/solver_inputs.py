"""The batched meld solver's inputs: wild ranks and ``prefix`` as tensors (types and shapes, no
wait on the device), and the value checks of ``check=True``, the one read of the device that
keeps the tensor programs to the hands they are exact for (:mod:`tt_env.batch.solver`)."""

from __future__ import annotations

import numpy as np
import torch

INT_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
"""The integer dtypes the solver takes for counts, wild ranks and ``prefix``."""


def prefix_tensor(prefix: torch.Tensor | None, device: torch.device) -> torch.Tensor | None:
    """``prefix`` checked (a one-element integer tensor on ``device``) and flattened to (1,) int64."""
    if prefix is None:
        return None
    if not isinstance(prefix, torch.Tensor) or prefix.dtype not in INT_DTYPES or prefix.numel() != 1:
        what = (f"a {prefix.dtype} tensor of shape {tuple(prefix.shape)}" if isinstance(prefix, torch.Tensor)
                else type(prefix).__name__)
        raise TypeError(f"prefix must be a one-element integer torch tensor (hands wanted from the front), not {what}")
    if prefix.device != device:
        raise ValueError(f"prefix is on {prefix.device}: put it on the device of counts ({device})")
    return prefix.reshape(1).long()


def wild_tensor(wild_rank: torch.Tensor | int, b: int, device: torch.device) -> torch.Tensor:
    """``wild_rank`` as a (B,) int64 tensor on ``device`` (shape and type checked, not values)."""
    if isinstance(wild_rank, torch.Tensor):
        if wild_rank.dtype not in INT_DTYPES:
            raise TypeError(f"wild_rank must be an integer tensor or an int, not {wild_rank.dtype}")
        if wild_rank.dim() == 0:
            return wild_rank.to(device=device, dtype=torch.long).expand(b)
        if tuple(wild_rank.shape) != (b,):
            raise ValueError(f"wild_rank has shape {tuple(wild_rank.shape)}: it must be ({b},), one per hand")
        return wild_rank.to(device=device, dtype=torch.long)
    if isinstance(wild_rank, bool) or not isinstance(wild_rank, (int, np.integer)):
        raise TypeError(f"wild_rank must be an integer tensor or an int, not {type(wild_rank).__name__}")
    if not 0 <= int(wild_rank) <= 13:
        raise ValueError(f"wild_rank={int(wild_rank)} is not allowed: use 1..13 (or 0 for no wilds)")
    return torch.full((b,), int(wild_rank), dtype=torch.long, device=device)


def check_values(counts: torch.Tensor, wild: torch.Tensor, decks: int, max_cards: int) -> None:
    """The value checks of ``check=True`` (they synchronise with the device)."""
    c = counts.long()
    sizes = c.sum(1)
    bad_count = ((c < 0) | (c > decks)).any(1)
    bad_size = sizes > max_cards
    bad_wild = (wild < 0) | (wild > 13)
    if not bool((bad_count | bad_size | bad_wild).any()):  # host: the one read of check=True
        return
    if bool(bad_count.any()):  # host: only on the way to raising
        i = int(bad_count.nonzero()[0])  # host: only on the way to raising
        card = int(((c[i] < 0) | (c[i] > decks)).nonzero()[0])  # host: only on the way to raising
        raise ValueError(f"counts[{i}] has {int(c[i, card])} of card {card}: counts must be 0..{decks} (decks={decks}, "
                         f"the rules' num_decks unless decks= says more; the solver is exact only there)")
    if bool(bad_size.any()):  # host: only on the way to raising
        i = int(bad_size.nonzero()[0])  # host: only on the way to raising
        raise ValueError(f"counts[{i}] holds {int(sizes[i])} cards, more than max_cards={max_cards}: raise max_cards")
    i = int(bad_wild.nonzero()[0])  # host: only on the way to raising
    raise ValueError(f"wild_rank[{i}]={int(wild[i])} is not allowed: use 1..13 (or 0 for no wilds)")
