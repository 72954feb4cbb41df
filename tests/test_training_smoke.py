"""Tiny training runs of both scripts, reproducibility, and every player count (issue 4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from models.checkpoint import load_checkpoint
from training.common.config import SelfPlayConfig, load_config
from training.selfplay import train

ROOT = Path(__file__).resolve().parent.parent
TINY = ["total_steps=256", "num_envs=4", "rollout_steps=128", "num_minibatches=2", "update_epochs=1",
        "eval_deals=1", "eval_opponents=[greedy-v0]", "eval_every=0", "progress=false", "rules.rounds=[1, 2]",
        "network_kwargs={channels: 8, hidden: 16}"]


def check_run_dir(path: Path) -> None:
    assert (path / "config.yaml").exists()
    assert list((path / "tb").rglob("events.out.tfevents.*")), "no TensorBoard events written"
    assert (path / "learning_curve.png").stat().st_size > 1000
    assert (path / "eval.json").exists()
    net, meta = load_checkpoint(path / "checkpoints" / "final.pt", num_players=2)
    assert meta["training_steps"] >= 256 and meta["evaluation"]["results"]


@pytest.mark.slow
def test_selfplay_script_runs(tmp_path):
    args = [sys.executable, str(ROOT / "training" / "selfplay.py"), "--config", str(ROOT / "configs" / "main_job.yaml")]
    for item in TINY + [f"run_dir={tmp_path}", "name=tiny", "snapshot_every=1", "pool_prob=0.5"]:
        args += ["--set", item]
    out = subprocess.run(args, check=True, capture_output=True, text=True, cwd=tmp_path)
    assert "steps/s during learning" in out.stdout
    check_run_dir(tmp_path / "tiny")


@pytest.mark.slow
def test_sb3_script_runs(tmp_path):
    args = [sys.executable, str(ROOT / "training" / "train_sb3.py")]
    for item in ["total_steps=256", "num_envs=2", "n_steps=64", "batch_size=64", "n_epochs=1", "eval_deals=1",
                 "eval_opponents=[greedy-v0]", "eval_every=0", "progress=false", "rules.rounds=[1, 2]",
                 "hidden_sizes=[16, 16]", f"run_dir={tmp_path}", "name=tiny_sb3"]:
        args += ["--set", item]
    subprocess.run(args, check=True, capture_output=True, text=True, cwd=tmp_path)
    check_run_dir(tmp_path / "tiny_sb3")


def test_sb3_export_matches_the_sb3_policy():
    import gymnasium
    from sb3_contrib import MaskablePPO

    from training.common.config import SB3Config
    from training.train_sb3 import to_mlp_policy

    cfg = SB3Config(hidden_sizes=[16, 16])
    env = gymnasium.make("tt_env/ThreeThirteen-v0", opponents=["random-v0"])
    model = MaskablePPO("MlpPolicy", env, seed=0, policy_kwargs={"net_arch": {"pi": [16, 16], "vf": [16, 16]},
                                                                  "activation_fn": torch.nn.Tanh})
    net = to_mlp_policy(model, cfg)
    obs, info = env.reset(seed=0)
    obs_t = torch.as_tensor(obs[None])
    with torch.no_grad():
        sb3_dist = model.policy.get_distribution(obs_t, action_masks=info["action_mask"][None].astype(bool))
        sb3_value = model.policy.predict_values(obs_t)
        dist, value = net(obs[None], info["action_mask"][None])
    assert torch.allclose(sb3_dist.distribution.probs, dist.probs, atol=1e-6)
    assert torch.allclose(sb3_value.squeeze(-1), value, atol=1e-6)


def test_seeded_selfplay_is_reproducible(tmp_path):
    weights = []
    for run in ("a", "b"):
        cfg = load_config(SelfPlayConfig, None, TINY + [f"run_dir={tmp_path}", f"name={run}", "total_steps=128",
                                                        "selfplay_prob=0.5", "opponents=[greedy-v0, random-v0]"])
        train(cfg)
        net, _ = load_checkpoint(tmp_path / run / "checkpoints" / "final.pt")
        weights.append(net.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


@pytest.mark.parametrize("num_players", [3, 4])
def test_selfplay_any_player_count(tmp_path, num_players):
    cfg = load_config(SelfPlayConfig, None, TINY + [f"run_dir={tmp_path}", "name=n", f"num_players={num_players}",
                                                    "total_steps=128", "snapshot_every=1", "pool_prob=0.5",
                                                    "network=mlp", "network_kwargs={hidden_sizes: [16]}"])
    run = train(cfg)
    net, meta = load_checkpoint(run.checkpoints / "final.pt", num_players=num_players)
    assert meta["rules"]["num_players"] == num_players
