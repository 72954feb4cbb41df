"""CleanRL's clipped PPO losses on one minibatch: the one place both PPO updates take them from
(``training.ppo.update`` for ``selfplay.py``, ``training.batch_ppo`` for the batched trainer)."""

from __future__ import annotations

from typing import NamedTuple

import torch


class PPOLosses(NamedTuple):
    """One minibatch's losses (with gradients) and its diagnostics (without); all 0-d tensors."""

    policy: torch.Tensor
    value: torch.Tensor
    entropy: torch.Tensor
    approx_kl: torch.Tensor
    clipfrac: torch.Tensor


def clipped_ppo_losses(logprob: torch.Tensor, old_logprob: torch.Tensor, advantage: torch.Tensor,
                       entropy: torch.Tensor, value: torch.Tensor, old_value: torch.Tensor,
                       returns: torch.Tensor, clip_coef: float) -> PPOLosses:
    """The clipped policy loss on minibatch-normalised advantages, the clipped value loss and the
    mean entropy (CleanRL's ``ppo.py``); ``approx_kl`` is the ``(r - 1) - log r`` estimator and
    ``clipfrac`` the share of ratios outside the clip range. A minibatch of one row keeps its raw
    advantage (the std of one sample is undefined)."""
    log_ratio = logprob - old_logprob
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()
        clipfrac = ((ratio - 1.0).abs() > clip_coef).float().mean()
    a = advantage
    if a.numel() > 1:
        a = (a - a.mean()) / (a.std() + 1e-8)
    policy = torch.max(-a * ratio, -a * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
    v_clipped = old_value + (value - old_value).clamp(-clip_coef, clip_coef)
    value_loss = 0.5 * torch.max((value - returns) ** 2, (v_clipped - returns) ** 2).mean()
    return PPOLosses(policy, value_loss, entropy.mean(), approx_kl, clipfrac)
