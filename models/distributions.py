"""A categorical distribution over the 54 actions that owns the legal-action mask.

Illegal actions get logit ``MASKED_LOGIT`` (-1e8, sb3-contrib's ``MaskableCategorical``
value), so their probability is exactly 0 in float32, they are never sampled, and they add
nothing to the entropy (their ``p * log p`` terms are set to 0 rather than ``0 * -1e8``).
"""

from __future__ import annotations

import torch

MASKED_LOGIT = -1e8


class MaskedCategorical:
    """Categorical over ``logits`` restricted to ``mask`` (bool or 0/1, same shape).

    Every row of ``mask`` needs at least one legal action; a row without one raises
    ``ValueError`` (it means the policy was asked to act out of turn).
    """

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor) -> None:
        mask = mask.to(torch.bool)
        if mask.shape != logits.shape:
            raise ValueError(f"mask shape {tuple(mask.shape)} differs from logits shape {tuple(logits.shape)}")
        if not bool(mask.any(dim=-1).all()):
            raise ValueError("a mask row has no legal action: the policy was asked to act out of turn")
        self.mask = mask
        masked = torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))
        self.logits = masked - masked.logsumexp(dim=-1, keepdim=True)
        self.probs = self.logits.exp()

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """One action per row, drawn with ``generator`` (illegal actions have probability 0)."""
        return torch.multinomial(self.probs, 1, generator=generator).squeeze(-1)

    def mode(self) -> torch.Tensor:
        """The most probable legal action per row."""
        return self.logits.argmax(dim=-1)

    def log_prob(self, action: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        """Entropy over the legal actions only."""
        plogp = torch.where(self.mask, self.probs * self.logits, torch.zeros_like(self.probs))
        return -plogp.sum(dim=-1)
