"""Tiny ``training/batch_ppo.py`` configs shared by its tests (``test_batch_ppo*.py``)."""

from __future__ import annotations

from pathlib import Path

import torch

from models.networks import MLPPolicy
from training.common.config import load_config
from training.ppo.batch_config import BatchPPOConfig

TINY = ["total_steps=600", "num_tables=8", "rollout_steps=12", "num_minibatches=2", "update_epochs=1",
        "eval_every=300", "save_every=100", "eval_deals=1", "eval_opponents=[random-v0]", "progress=false",
        "rules.rounds=[1, 2]", "network_kwargs={channels: 8, hidden: 16}", "snapshot_every=2", "device=cpu",
        "opponents={self: 0.25, pool: 0.25, greedy-v0: 0.2, random-v0: 0.15, expert-v0: 0.15}"]


def config(tmp_path: Path, name: str, *extra: str) -> BatchPPOConfig:
    """The tiny run ``name`` under ``tmp_path``, with ``extra`` overrides."""
    return load_config(BatchPPOConfig, None, TINY + [f"run_dir={tmp_path}", f"name={name}", *extra])


def zero_value_mlp() -> MLPPolicy:
    """A small MLP whose every value is 0 (returns are then the discounted rewards alone)."""
    net = MLPPolicy(num_players=2, hidden_sizes=[16])
    torch.nn.init.zeros_(net.critic[-1].weight)
    torch.nn.init.zeros_(net.critic[-1].bias)
    return net
