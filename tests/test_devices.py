"""A device for every trainer (issue 23, part 1): ``device: auto | cpu | cuda[:k]`` and ``--device``.

One helper (``training.common.device``) parses, checks and resolves the value, so every trainer gives
the same message for a bad value or a missing CUDA device (one line, exit status 2). Each
trainer's quick path runs with ``--device cpu`` and ``--device auto`` on tiny settings; on a
machine without a GPU, ``--device cuda`` is refused before anything is written. These tests
run on the CPU; what holds on CUDA is in ``docs/devices.md``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from training import batch_ppo, imitate, main_job, selfplay, train_belief, train_sb3
from training.ppo.batch_config import BatchPPOConfig
from training.common.config import ConfigError, SB3Config, SelfPlayConfig, load_config
from training.common.device import (check_device, check_resume_device, cuda_rng_state, resolve_device, restore_cuda_rng,
                             to_cpu)
from training.common.resume import STATE, TENSORS

ROOT = Path(__file__).resolve().parents[1]
BAD = "device='gpu' is not allowed: use auto, cpu, cuda or cuda:K"
NO_CUDA = "device='cuda' is not allowed: it is not available here"
no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a CUDA device")

SELFPLAY = ["total_steps=128", "num_envs=2", "rollout_steps=64", "num_minibatches=2", "update_epochs=1",
            "eval_every=0", "eval_deals=1", "eval_opponents=[random-v0]", "progress=false", "rules.rounds=[1]",
            "network=mlp", "network_kwargs={hidden_sizes: [16]}"]
SB3 = ["total_steps=64", "num_envs=1", "n_steps=32", "batch_size=32", "n_epochs=1", "eval_every=0", "eval_deals=1",
       "eval_opponents=[random-v0]", "progress=false", "rules.rounds=[1]", "hidden_sizes=[8]", "vec_env=dummy"]
BATCH = ["total_steps=64", "num_tables=4", "rollout_steps=8", "num_minibatches=2", "update_epochs=1", "eval_every=0",
         "eval_deals=1", "eval_opponents=[random-v0]", "progress=false", "rules.rounds=[1]",
         "network_kwargs={channels: 4, hidden: 8}"]


def cli(args: list[str]) -> list[str]:
    """``--set`` for each item."""
    return [a for item in args for a in ("--set", item)]


def refused(capsys, main, argv) -> str:
    """The one line a command prints when it refuses ``argv`` (exit status 2, no traceback)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def baselines_cli():
    spec = importlib.util.spec_from_file_location("baselines_cli_devices", ROOT / "benchmarks" / "baselines.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- the helper
@pytest.mark.parametrize("value", ["gpu", "CUDA", "cuda:", "cuda:-1", "cuda:x", "mps", "", None, 0, "cpu:0"])
def test_a_bad_value_is_one_clear_error(value):
    with pytest.raises(ConfigError, match=r"is not allowed: use auto, cpu, cuda or cuda:K \(auto: cuda when"):
        check_device(value)
    with pytest.raises(ConfigError, match="is not allowed: use auto, cpu, cuda or cuda:K"):
        resolve_device(value)


def test_auto_is_cuda_when_available_else_cpu():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == torch.device("cpu")


@no_gpu
@pytest.mark.parametrize("value", ["cuda", "cuda:0", "cuda:3"])
def test_a_missing_cuda_device_is_refused(value):
    with pytest.raises(ConfigError, match=rf"device='{value}' is not allowed: it is not available here.*"
                                          r"use auto, cpu, cuda or cuda:K"):
        resolve_device(value)


def test_a_missing_cuda_index_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == torch.device("cuda:0") and resolve_device("auto").type == "cuda"
    with pytest.raises(ConfigError, match=r"device='cuda:3' is not allowed: .*1 CUDA device\(s\), cuda:0\.\.cuda:0: "
                                          r"use auto, cpu, cuda or cuda:K"):
        resolve_device("cuda:3")


def test_the_refusal_says_what_this_machine_can_use(monkeypatch):
    """Without CUDA the message says so and what that leaves (auto or cpu); with fewer CUDA devices
    than asked, which there are, and no such hint (the same words as the engine's device check)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError) as refused:
        resolve_device("cuda")
    assert str(refused.value).endswith("this machine has no CUDA device (torch.cuda.is_available() is False): use "
                                       "auto, cpu, cuda or cuda:K (auto: cuda when torch.cuda.is_available(), else "
                                       "cpu); here that means auto or cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(ConfigError) as refused:
        resolve_device("cuda:2")
    assert "here that means" not in str(refused.value)


def test_saved_tensors_go_to_the_cpu_and_cpu_ones_are_untouched():
    t = torch.arange(3)
    nested = {"a": t, "b": [t, (t, 1)], "c": "x"}
    out = to_cpu(nested)
    assert out["a"] is t and out["b"][0] is t and out["b"][1][0] is t and out["b"][1][1] == 1 and out["c"] == "x"
    assert cuda_rng_state(torch.device("cpu")) == {}
    restore_cuda_rng({"cuda_rng": [torch.zeros(3, dtype=torch.uint8)]}, torch.device("cpu"))  # nothing on a CPU


def test_a_run_resumes_on_the_device_type_it_trained_on():
    check_resume_device("cpu", torch.device("cpu"), "auto")
    check_resume_device(None, torch.device("cpu"), "cpu")  # saved before devices: a CPU run
    with pytest.raises(ConfigError, match="--resume cannot change the device type: the run trained on 'cuda', "
                                          "device='cpu' gives 'cpu'; resume with --set device=cuda"):
        check_resume_device("cuda", torch.device("cpu"), "cpu")


# ---------------------------------------------------------------- configs
@pytest.mark.parametrize("cls", [SelfPlayConfig, SB3Config, BatchPPOConfig])
def test_every_training_config_takes_device(tmp_path, cls):
    path = tmp_path / "c.yaml"
    path.write_text("device: cpu\n")
    assert load_config(cls, path).device == "cpu"
    assert cls().device == "auto" and "device" in cls().to_dict()
    path.write_text("device: cuda:1\n")  # the form is checked when read; the GPU when the run starts
    assert load_config(cls, path).device == "cuda:1"
    path.write_text("device: gpu\n")
    with pytest.raises(ConfigError, match=BAD):
        load_config(cls, path)


def test_the_baselines_config_takes_device_and_says_where_each_algorithm_trains(tmp_path, monkeypatch):
    from training.baselines.common import RunContext
    from training.baselines.config import BaselinesConfig, algo_device
    from training.baselines.ours import sb3_config, selfplay_config

    path = tmp_path / "b.yaml"
    path.write_text("device: cpu\nsteps: 10\n")
    cfg = load_config(BaselinesConfig, path)
    assert cfg.device == "cpu" and BaselinesConfig().device == "auto"
    assert {a: algo_device(cfg, a) for a in ("ppo", "rlcard-dmc")} == {"ppo": "cpu", "rlcard-dmc": "cpu"}
    with pytest.raises(ConfigError, match=BAD):
        load_config(BaselinesConfig, None, ["device=gpu"])
    ctx = RunContext(seed=0, num_players=2, work_dir=tmp_path, device="cpu")
    ppo = {"network": "mlp", "anneal_lr": False}
    assert selfplay_config(ppo, ctx, 100).device == "cpu" and sb3_config({}, ctx, 100).device == "cpu"
    with pytest.raises(ConfigError, match=r"hyperparameters.ppo: \['device'\] are set by the benchmark"):
        selfplay_config({**ppo, "device": "cpu"}, ctx, 100)
    # on a machine with a GPU: auto puts the CPU-only libraries on the CPU; an explicit cuda is refused for them
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    auto = load_config(BaselinesConfig, None, ["device=auto"])
    assert [algo_device(auto, a) for a in ("ppo", "openspiel-dqn", "openspiel-nfsp", "rlcard-dmc", "rllib-ppo")] == \
        ["cuda", "cuda", "cpu", "cpu", "cpu"]
    explicit = load_config(BaselinesConfig, None, ["device=cuda:1"])
    assert algo_device(explicit, "tianshou-dqn") == "cuda:1"
    with pytest.raises(ConfigError, match=r"device='cuda:1' is not allowed for rlcard-dmc: it trains on the CPU only"):
        algo_device(explicit, "rlcard-dmc")


# ---------------------------------------------------------------- every command line refuses the same way
def _commands(tmp_path):
    data = ["--data", str(tmp_path / "none.npz"), "--out", str(tmp_path / "x.pt")]
    return {"selfplay": (selfplay.main, cli([f"run_dir={tmp_path}"])),
            "sb3": (train_sb3.main, cli([f"run_dir={tmp_path}"])),
            "batch_ppo": (batch_ppo.main, cli([f"run_dir={tmp_path}"])),
            "train_belief": (train_belief.main, data),
            "imitate": (imitate.main, data),
            "baselines": (lambda argv: baselines_cli().main(argv), ["--out", str(tmp_path / "bench")]),
            "main_job": (main_job.main, cli([f"run_dir={tmp_path}"]))}


@pytest.mark.parametrize("name", ["selfplay", "sb3", "batch_ppo", "train_belief", "imitate", "baselines", "main_job"])
def test_every_cli_refuses_a_bad_device_in_one_line(tmp_path, capsys, name):
    main, argv = _commands(tmp_path)[name]
    assert BAD in refused(capsys, main, [*argv, "--device", "gpu"])
    assert not (tmp_path / "selfplay").exists() and not (tmp_path / "bench").exists()


@no_gpu
@pytest.mark.parametrize("name", ["selfplay", "sb3", "batch_ppo", "train_belief", "imitate", "baselines", "main_job"])
def test_every_cli_refuses_cuda_without_a_gpu_in_one_line(tmp_path, capsys, name):
    main, argv = _commands(tmp_path)[name]
    line = refused(capsys, main, [*argv, "--device", "cuda"])
    assert NO_CUDA in line and "use auto, cpu, cuda or cuda:K" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


# ---------------------------------------------------------------- each trainer's quick path on cpu and auto
@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_selfplay_trains_on_the_device(tmp_path, device):
    selfplay.main(cli(SELFPLAY + [f"run_dir={tmp_path}", "name=sp"]) + ["--device", device])
    run = tmp_path / "sp"
    expected = resolve_device(device).type
    assert f"device: {device}" in (run / "config.yaml").read_text()
    assert json.loads((run / "checkpoints" / f"latest.{STATE}").read_text())["device_type"] == expected
    tensors = torch.load(run / "checkpoints" / f"latest.{TENSORS}", weights_only=True, map_location="cpu")
    assert ("cuda_rng" in tensors) == (expected == "cuda")
    weights = torch.load(run / "checkpoints" / "final.pt", weights_only=True)
    assert all(t.device.type == "cpu" for t in weights.values())


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_sb3_trains_on_the_device(tmp_path, device):
    train_sb3.main(cli(SB3 + [f"run_dir={tmp_path}", "name=sb3"]) + ["--device", device])
    run = tmp_path / "sb3"
    assert f"device: {device}" in (run / "config.yaml").read_text()
    saved = json.loads((run / "checkpoints" / f"latest.{STATE}").read_text())
    assert saved["device_type"] == resolve_device(device).type
    assert (run / "checkpoints" / "final.pt").exists()


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_batch_ppo_trains_on_the_device(tmp_path, device):
    batch_ppo.main(cli(BATCH + [f"run_dir={tmp_path}", "name=bp"]) + ["--device", device])
    saved = json.loads((tmp_path / "bp" / "checkpoints" / f"latest.{STATE}").read_text())
    assert saved["device_type"] == resolve_device(device).type


def test_selfplay_resume_on_the_cpu_is_unchanged_by_the_device_key(tmp_path):
    """``device: cpu`` and a resume with ``--device cpu``: the weights equal an uninterrupted run's."""
    base = SELFPLAY + ["total_steps=128", "anneal_lr=false", f"run_dir={tmp_path}"]
    selfplay.main(cli(base + ["name=whole"]) + ["--device", "cpu"])
    selfplay.main(cli(base + ["name=parts", "total_steps=64"]) + ["--device", "cpu"])
    selfplay.main(cli(base + ["name=parts"]) + ["--device", "cpu", "--resume"])
    a = torch.load(tmp_path / "whole" / "checkpoints" / "final.pt", weights_only=True)
    b = torch.load(tmp_path / "parts" / "checkpoints" / "final.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def belief_data_file(tmp_path_factory):
    from training import belief_data

    out = tmp_path_factory.mktemp("belief") / "d.npz"
    belief_data.main(["--games", "3", "--keep", "0.3", "--seed", "4", "--quiet", "--out", str(out),
                      "--agents", "expert-v0", "greedy-v0"])  # as tests/test_belief_tools.py
    return out


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_train_belief_trains_on_the_device(tmp_path, belief_data_file, device):
    from models.belief import load_belief

    out = tmp_path / "b.pt"
    train_belief.main(["--data", str(belief_data_file), "--out", str(out), "--epochs", "1", "--width", "4",
                       "--blocks", "1", "--val-share", "0.5", "--device", device])
    belief = load_belief(out)
    assert next(belief.net.parameters()).device.type == "cpu"
    assert json.loads(out.with_suffix(".json").read_text())["extra"]["args"]["device"] == device


def _oracle_file(path: Path, n: int = 24) -> Path:
    """A tiny oracle file: positions of expert self-play, the second candidate worth 20 points more."""
    from training import oracle_data
    from tt_env.agents.expert import ExpertAgent
    from tt_env.agents.ismcts import expert_scores
    from tt_env.engine import Rules, game
    from tt_env.observation import encode

    rules = Rules(rounds=(5,))
    expert, rng, rows = ExpertAgent(rules), np.random.default_rng(0), []
    while len(rows) < n:
        state = game.new_game(rules, rng)
        while not state.game_over and len(rows) < n:
            obs, mask = encode(state, state.current_player), game.action_mask(state)
            prior = expert_scores(expert, obs, mask)
            if len(prior) > 1:
                rows.append((obs, mask.copy(), [a for a, _ in prior[:2]], np.array([0.0, 20.0]), 5, state.phase))
            game.apply(state, prior[0][0])
    arrays = oracle_data.to_arrays(rows, 2)
    np.savez(path, meta=np.array(json.dumps({"rules": rules.to_dict()})), **arrays)
    return path


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_imitate_trains_on_the_device(tmp_path, capsys, device):
    from models.checkpoint import load_checkpoint

    data = _oracle_file(tmp_path / "o.npz")
    out = tmp_path / "warm.pt"
    imitate.main(["--data", str(data), "--out", str(out), "--epochs", "1", "--batch", "8", "--channels", "4",
                  "--hidden", "8", "--blocks", "0", "--device", device])
    net, meta = load_checkpoint(out, num_players=2)
    assert meta["extra"]["args"]["device"] == device and next(net.parameters()).device.type == "cpu"


def test_imitate_fit_is_the_same_on_cpu_given_as_a_name_or_a_device(tmp_path):
    data = imitate.load_oracle(_oracle_file(tmp_path / "o.npz"))
    common = dict(net_kwargs={"channels": 4, "hidden": 8, "blocks": 0, "expert_features": True,
                              "solver_features": True},
                  epochs=1, batch=8, lr=1e-3, temperature=2.0, validation=0.25, seed=0, log=lambda *_: None)
    a, _ = imitate.fit(data, device="cpu", **common)
    b, _ = imitate.fit(data, device=torch.device("cpu"), **common)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))
