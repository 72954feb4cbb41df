"""Every trainer on a CUDA device, end to end (issue 23, part 1): skipped without a GPU.

Each trainer runs a tiny job with ``--device cuda`` as a user would start it (its command line),
then its checkpoint is read back on the CPU (``weights_only`` loading, CPU tensors) and, for the
PPO trainers, the run is resumed on the GPU and trained further. The GPU machine runs these
through ``benchmarks/gpu_figures.sh``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

DEVICE = os.environ.get("TT_ENV_TEST_TRAIN_DEVICE", "cuda")
"""The device the trainers run on (set it to ``cpu`` to try these tests on a machine without a GPU)."""
pytestmark = pytest.mark.skipif(DEVICE.startswith("cuda") and not torch.cuda.is_available(),
                                reason="needs a CUDA device")

ROOT = Path(__file__).resolve().parent.parent
SMALL_NET = "network_kwargs={channels: 8, hidden: 16}"


def run(*args: str, cwd: Path) -> str:
    """Run ``python *args`` from the checkout's modules; its stdout (stderr shown on failure)."""
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def sets(*items: str) -> list[str]:
    return [arg for item in items for arg in ("--set", item)]


def loads_on_cpu(path: Path, trained_steps: bool = True) -> None:
    """The checkpoint's weights are CPU tensors, read with ``weights_only=True``; a policy
    checkpoint loads as a CPU network (with its training steps, for the RL trainers)."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    tensors = [v for v in (state.values() if isinstance(state, dict) else []) if isinstance(v, torch.Tensor)]
    assert all(t.device.type == "cpu" for t in tensors)
    from models.checkpoint import load_checkpoint

    if path.with_suffix(".json").exists() and "belief" not in path.name:
        net, meta = load_checkpoint(path)
        assert next(net.parameters()).device.type == "cpu"
        assert meta["training_steps"] > 0 or not trained_steps


def test_selfplay_trains_and_resumes_on_cuda(tmp_path: Path) -> None:
    tiny = sets("total_steps=256", "num_envs=2", "rollout_steps=128", "num_minibatches=2", "update_epochs=1",
                "eval_deals=1", "eval_opponents=[greedy-v0]", "eval_every=0", "progress=false",
                "rules.rounds=[1, 2]", SMALL_NET, f"run_dir={tmp_path}", "name=sp", "save_every=128")
    run(str(ROOT / "training" / "selfplay.py"), "--config", str(ROOT / "configs" / "main_job.yaml"), *tiny,
        "--device", DEVICE, cwd=tmp_path)
    loads_on_cpu(tmp_path / "sp" / "checkpoints" / "final.pt")
    run(str(ROOT / "training" / "selfplay.py"), "--config", str(ROOT / "configs" / "main_job.yaml"), *tiny,
        *sets("total_steps=512"), "--resume", "--device", DEVICE, cwd=tmp_path)
    from models.checkpoint import load_checkpoint

    assert load_checkpoint(tmp_path / "sp" / "checkpoints" / "final.pt")[1]["training_steps"] >= 512


def test_batch_ppo_trains_and_resumes_on_cuda(tmp_path: Path) -> None:
    tiny = sets("total_steps=2000", "num_tables=64", "rollout_steps=16", "num_minibatches=2", "update_epochs=1",
                "eval_deals=1", "eval_opponents=[greedy-v0]", "eval_every=0", "progress=false",
                "rules={rounds: [1, 2]}", SMALL_NET, f"run_dir={tmp_path}", "name=bp", "save_every=1000")
    run("-m", "training.batch_ppo", "--config", str(ROOT / "configs" / "batch_ppo_default.yaml"), *tiny,
        "--device", DEVICE, cwd=ROOT)
    loads_on_cpu(tmp_path / "bp" / "checkpoints" / "final.pt")
    run("-m", "training.batch_ppo", "--config", str(ROOT / "configs" / "batch_ppo_default.yaml"), *tiny,
        *sets("total_steps=4000"), "--resume", "--device", DEVICE, cwd=ROOT)
    from models.checkpoint import load_checkpoint

    assert load_checkpoint(tmp_path / "bp" / "checkpoints" / "final.pt")[1]["training_steps"] >= 4000


def test_sb3_trains_on_cuda(tmp_path: Path) -> None:
    run(str(ROOT / "training" / "train_sb3.py"), "--device", DEVICE,
        *sets("total_steps=256", "num_envs=2", "n_steps=64", "batch_size=64", "n_epochs=1", "eval_deals=1",
              "eval_opponents=[greedy-v0]", "eval_every=0", "progress=false", "rules.rounds=[1, 2]",
              "hidden_sizes=[16, 16]", f"run_dir={tmp_path}", "name=sb3"), cwd=tmp_path)
    loads_on_cpu(tmp_path / "sb3" / "checkpoints" / "final.pt")


def test_belief_and_imitation_train_on_cuda(tmp_path: Path) -> None:
    beliefs, oracle = tmp_path / "belief.npz", tmp_path / "oracle.npz"
    run("-m", "training.belief_data", "--games", "2", "--keep", "0.3", "--seed", "4", "--quiet", "--out",
        str(beliefs), "--agents", "expert-v0", "greedy-v0", cwd=ROOT)
    run("-m", "training.train_belief", "--data", str(beliefs), "--out", str(tmp_path / "belief.pt"), "--epochs", "1",
        "--width", "8", "--blocks", "1", "--no-history", "--val-share", "0.34", "--device", DEVICE, cwd=ROOT)
    loads_on_cpu(tmp_path / "belief.pt")
    run("-m", "training.oracle_data", "--games", "1", "--rollouts", "1", "--keep", "0.2", "--out", str(oracle),
        cwd=ROOT)
    run("-m", "training.imitate", "--data", str(oracle), "--out", str(tmp_path / "warm.pt"), "--epochs", "1",
        "--channels", "8", "--blocks", "1", "--hidden", "16", "--device", DEVICE, cwd=ROOT)
    loads_on_cpu(tmp_path / "warm.pt", trained_steps=False)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_batch_ppo_rollouts_from_cuda_graphs_are_the_eager_rollouts(tmp_path: Path) -> None:
    """``cuda_graphs: true``: the rollouts, whose engine steps are replayed graphs after the
    warm-ups, equal those of eager steps, through a save and a load."""
    from models.networks import MLPPolicy
    from training.common.config import load_config
    from training.ppo.batch_collect import BatchTables
    from training.ppo.batch_config import BatchPPOConfig

    net = MLPPolicy(num_players=2, hidden_sizes=[16]).to("cuda")
    both = []
    for graphs in (False, True):
        cfg = load_config(BatchPPOConfig, None, [
            "device=cuda", "num_tables=256", "rules={rounds: [1, 2]}", "network=mlp", f"run_dir={tmp_path}",
            "opponents={self: 0.4, greedy-v0: 0.3, random-v0: 0.3}", f"cuda_graphs={str(graphs).lower()}"])
        tables = BatchTables(cfg, net, None, torch.device("cuda"))
        rollouts = [tables.collect(15, 0.99, 0.95) for _ in range(2)]
        tables.load_state_dict(tables.state_dict())
        rollouts += [tables.collect(15, 0.99, 0.95) for _ in range(2)]
        assert (tables.game._graphs is not None) == graphs
        both.append(rollouts)
    assert both[1][0] is not None and tables.game._graphs.captured == (0, 1)
    for want, got in zip(*both, strict=True):
        for key in ("x", "mask", "action", "logprob", "value", "advantage", "ret"):
            assert torch.equal(getattr(want, key), getattr(got, key)), key
