"""The learning half of ``training/selfplay.py``: the rollout buffer and the clipped PPO update.

Transitions are stored per learner decision; each knows the index of the next transition of
its trajectory (a (table, seat) pair), so advantages (GAE) follow each trajectory through a
rollout in which many tables and seats interleave. The update is CleanRL's, with masks (its
losses: ``training.ppo.losses``).
"""

from __future__ import annotations

import numpy as np
import torch

from models.networks import PolicyValueNet
from training.common.config import SelfPlayConfig
from training.ppo.losses import clipped_ppo_losses


class Buffer:
    """Learner transitions of one rollout; each knows the index of its trajectory's next one."""

    def __init__(self) -> None:
        self.x, self.mask, self.action, self.logprob, self.value = [], [], [], [], []
        self.reward, self.next_value, self.done, self.next_idx = [], [], [], []

    def __len__(self) -> int:
        return len(self.action)

    def add(self, x, mask, action, logprob, value, prev: int = -1) -> int:
        """Append a transition (open until :meth:`close`); ``prev``: its trajectory's previous one."""
        idx = len(self.action)
        for lst, v in ((self.x, x), (self.mask, mask), (self.action, action), (self.logprob, logprob),
                       (self.value, value), (self.reward, 0.0), (self.next_value, 0.0), (self.done, 1.0),
                       (self.next_idx, -1)):
            lst.append(v)
        if prev >= 0:
            self.next_idx[prev] = idx
        return idx

    def close(self, idx: int, reward: float, next_value: float, done: bool) -> None:
        self.reward[idx], self.next_value[idx], self.done[idx] = reward, next_value, float(done)

    def advantages(self, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """GAE along each trajectory (``next_idx`` links), and the returns."""
        n = len(self)
        value = np.asarray(self.value, dtype=np.float64)
        delta = (np.asarray(self.reward) + gamma * (1 - np.asarray(self.done)) * np.asarray(self.next_value)
                 - value)
        adv = np.zeros(n)
        for i in range(n - 1, -1, -1):
            j = self.next_idx[i]
            adv[i] = delta[i] + (gamma * lam * adv[j] if j >= 0 and not self.done[i] else 0.0)
        return adv.astype(np.float32), (adv + value).astype(np.float32)


def ppo_update(net: PolicyValueNet, optimizer: torch.optim.Optimizer, buf: Buffer, cfg: SelfPlayConfig,
               gen: torch.Generator, train_policy: bool = True) -> dict[str, float]:
    """Clipped PPO on one rollout (CleanRL's update, with masks and per-trajectory advantages);
    with ``train_policy=False`` only the value head learns (a critic warm-up: the policy, and the
    trunk it shares with the value, stay exactly as they are)."""
    adv_np, ret_np = buf.advantages(cfg.gamma, cfg.gae_lambda)
    device = next(net.parameters()).device  # the rollout, built on the CPU, moves to the network's device
    x = torch.as_tensor(np.stack(buf.x), device=device)
    masks = torch.as_tensor(np.stack(buf.mask), device=device)
    actions = torch.as_tensor(buf.action, device=device)
    old_logprob = torch.as_tensor(buf.logprob, dtype=torch.float32, device=device)
    old_value = torch.as_tensor(buf.value, dtype=torch.float32, device=device)
    adv, ret = torch.as_tensor(adv_np, device=device), torch.as_tensor(ret_np, device=device)
    n = len(buf)
    mb = max(1, n // cfg.num_minibatches)
    stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")}
    for _ in range(cfg.update_epochs):
        order = torch.randperm(n, generator=gen).to(device)  # drawn on the CPU generator: the same on every device
        for start in range(0, n - mb + 1, mb):
            idx = order[start:start + mb]
            _, logprob, entropy, value = net.get_action_and_value(x[idx], masks[idx], actions[idx])
            losses = clipped_ppo_losses(logprob, old_logprob[idx], adv[idx], entropy, value, old_value[idx],
                                        ret[idx], cfg.clip_coef)
            pg_loss, v_loss, ent = losses.policy, losses.value, losses.entropy
            stats["approx_kl"].append(float(losses.approx_kl))
            stats["clipfrac"].append(float(losses.clipfrac))
            loss = cfg.vf_coef * v_loss
            if train_policy:
                loss = loss + pg_loss - cfg.ent_coef * ent
            optimizer.zero_grad()
            loss.backward()
            if not train_policy:  # no gradient, so Adam leaves them alone: the policy cannot move
                value_params = {id(p) for p in net.value_head_parameters()}
                for param in net.parameters():
                    if id(param) not in value_params:
                        param.grad = None
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            optimizer.step()
            stats["policy_loss"].append(float(pg_loss.detach()))
            stats["value_loss"].append(float(v_loss.detach()))
            stats["entropy"].append(float(ent.detach()))
    var_y = float(ret.var())
    stats_out = {k: float(np.mean(v)) for k, v in stats.items()}
    stats_out["explained_variance"] = float("nan") if var_y == 0 else 1 - float((ret - old_value).var()) / var_y
    return stats_out
