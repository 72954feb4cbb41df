"""Run folders and --resume, in process (issue 9.2): refusal, overwrite, failed starts, exact resumes.

A stop is asked for the way a user does, with SIGINT, raised from inside the run at a chosen
point; ``tests/test_signals.py`` sends real signals to a training subprocess.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import torch

from models.checkpoint import load_checkpoint, read_metadata
from training import selfplay
from training.common import evaluations
from training.common.config import ConfigError, SelfPlayConfig, load_config
from training.common.resume import STATE, TENSORS
from training.common.run_utils import RunExistsError, RunFolderError

TINY = ["total_steps=1024", "num_envs=2", "rollout_steps=128", "num_minibatches=2", "update_epochs=1",
        "eval_every=512", "save_every=256", "eval_deals=1", "eval_opponents=[greedy-v0]", "progress=false",
        "rules.rounds=[1, 2]", "network=mlp", "network_kwargs={hidden_sizes: [16]}", "snapshot_every=2",
        "pool_prob=0.5", "selfplay_prob=0.5", "opponents=[greedy-v0, random-v0]", "device=cpu"]


def config(tmp_path, name, *extra) -> SelfPlayConfig:
    return load_config(SelfPlayConfig, None, TINY + [f"run_dir={tmp_path}", f"name={name}", *extra])


def weights(run_path: Path, tag: str = "final") -> dict:
    return torch.load(run_path / "checkpoints" / f"{tag}.pt", weights_only=True)


def tb_scalars(run_path: Path, tag: str, sub: str = "") -> list[tuple[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_path / "tb" / sub))
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def sigint_on_call(monkeypatch, module, name: str, call: int) -> None:
    """SIGINT this process when ``module.name`` is called for the ``call``-th time (1-based)."""
    real = getattr(module, name)
    count = {"n": 0}

    def wrapper(*args, **kwargs):
        count["n"] += 1
        if count["n"] == call:
            signal.raise_signal(signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run of TINY."""
    path = tmp_path_factory.mktemp("reference")
    return selfplay.train(config(path, "ref")).path


@pytest.mark.parametrize("where", ["update", "evaluation", "final evaluation"])
def test_a_stopped_run_resumes_bit_identically(tmp_path, monkeypatch, capsys, reference, where):
    if where == "update":
        sigint_on_call(monkeypatch, selfplay, "ppo_update", 3)  # during the 3rd update
    else:  # at the first evaluation (step 512), or at the last (1024: trained to the end, not yet evaluated)
        sigint_on_call(monkeypatch, evaluations, "evaluate_agent", 1 if where == "evaluation" else 2)
    run = selfplay.train(config(tmp_path, "cut"))
    monkeypatch.undo()
    out = capsys.readouterr().out
    assert run.stopped_by == signal.SIGINT
    stopped_at = json.loads(run.latest.with_suffix(".json").read_text())["training_steps"]
    assert stopped_at == {"update": 384, "evaluation": 512, "final evaluation": 1024}[where]
    assert f"stopped at step {stopped_at} of 1024" in out and "--resume" in out
    assert not (run.checkpoints / "final.pt").exists()
    resumed = selfplay.train(config(tmp_path, "cut"), resume=True)
    assert resumed.stopped_by is None
    ref, got = weights(reference), weights(run.path)
    assert all(torch.equal(ref[k], got[k]) for k in ref), "resumed run differs from the uninterrupted one"
    assert json.loads((run.path / "eval.json").read_text()) == json.loads((reference / "eval.json").read_text())
    assert [h["step"] for h in json.loads((run.path / "eval.json").read_text())] == [512, 1024]
    for tag in ("charts/learning_rate", "charts/episodic_return", "losses/value_loss", "eval/greedy-v0/score_diff"):
        assert tb_scalars(run.path, tag) == tb_scalars(reference, tag), tag


def test_the_learning_rate_decays_linearly_over_the_updates(reference):
    """anneal_lr (the default): update k of 8 trains at learning_rate x (1 - (k - 1) / 8)."""
    rates = [value for _, value in tb_scalars(reference, "charts/learning_rate")]
    assert rates == pytest.approx([3e-4 * (1 - k / 8) for k in range(8)], rel=1e-6)


def test_latest_is_saved_every_save_every_steps_and_at_evaluations(tmp_path, monkeypatch):
    steps = []
    real = selfplay.save_latest
    monkeypatch.setattr(selfplay, "save_latest", lambda *a, **kw: (steps.append(kw["step"]), real(*a, **kw)))
    selfplay.train(config(tmp_path, "saves", "save_every=256", "eval_every=384"))
    assert steps == [0, 256, 384, 640, 768, 1024]  # start, periodic, evaluation, periodic, evaluation, end


def test_tensorboard_steps_written_after_the_last_save_are_purged(tmp_path, monkeypatch, reference):
    from torch.utils.tensorboard import SummaryWriter

    sigint_on_call(monkeypatch, selfplay, "ppo_update", 3)
    run = selfplay.train(config(tmp_path, "cut"))
    monkeypatch.undo()
    # what a SIGKILL after logging but before the next save leaves: steps beyond latest.pt
    writer = SummaryWriter(str(run.tb))
    for step in (512, 640):
        writer.add_scalar("charts/learning_rate", -1.0, step)
    writer.close()
    selfplay.train(config(tmp_path, "cut"), resume=True)
    assert tb_scalars(run.path, "charts/learning_rate") == tb_scalars(reference, "charts/learning_rate")


def test_the_resume_state_is_plain_tensors_and_json(tmp_path, monkeypatch):
    sigint_on_call(monkeypatch, selfplay, "ppo_update", 2)
    run = selfplay.train(config(tmp_path, "cut"))
    monkeypatch.undo()
    tensors = torch.load(run.checkpoints / f"latest.{TENSORS}", weights_only=True)
    assert set(tensors) == {"optimizer", "torch_rng", "update_rng", "pool"} and len(tensors["pool"]) == 1
    state = json.loads((run.checkpoints / f"latest.{STATE}").read_text())
    assert state["step"] == 256 and state["update"] == 2 and len(state["play"]["tables"]) == 2
    assert state["play"]["rng"]["bit_generator"] == "PCG64"


def test_a_finished_run_can_be_trained_longer(tmp_path, capsys):
    cfg = config(tmp_path, "ext", "total_steps=512")
    selfplay.train(cfg)
    assert json.loads((tmp_path / "ext" / "checkpoints" / "final.json").read_text())["training_steps"] == 512
    capsys.readouterr()
    saved_config = (tmp_path / "ext" / "config.yaml").read_text()
    selfplay.train(cfg, resume=True)
    assert "nothing to do" in capsys.readouterr().out
    selfplay.train(config(tmp_path, "ext", "total_steps=512", "save_every=128"), resume=True)  # config.yaml kept
    assert "nothing to do" in capsys.readouterr().out
    assert (tmp_path / "ext" / "config.yaml").read_text() == saved_config
    with pytest.raises(ConfigError, match=r"--resume cannot change rollout_steps: the run has rollout_steps=128"):
        selfplay.train(config(tmp_path, "ext", "total_steps=1024", "rollout_steps=64"), resume=True)
    run = selfplay.train(config(tmp_path, "ext", "total_steps=1024"), resume=True)
    meta = json.loads((run.checkpoints / "final.json").read_text())
    assert meta["training_steps"] == 1024
    assert [h["step"] for h in json.loads((run.path / "eval.json").read_text())] == [512, 1024]
    steps = [s for s, _ in tb_scalars(run.path, "charts/learning_rate")]
    assert steps == list(range(128, 1025, 128))
    assert "total_steps: 1024" in (run.path / "config.yaml").read_text()


@pytest.mark.parametrize("override,key", [
    ("network_kwargs={hidden_sizes: [32]}", "network_kwargs"),
    ("network=cardnet|network_kwargs={channels: 8, hidden: 16}", "network"),
    ("rules.aces=high_or_low", "rules"),
    ("reward_mode=win", "reward_mode"),
    ("seed=5", "seed"),
    ("num_envs=4", "num_envs"),
    ("opponents=[greedy-v0]", "opponents"),
    ("eval_deals=2", "eval_deals"),
])
def test_resume_refuses_keys_that_change_what_was_learned(tmp_path, override, key):
    cfg = config(tmp_path, "frozen", "total_steps=128", "eval_every=0")
    selfplay.train(cfg)
    before = sorted(p.name for p in (tmp_path / "frozen").rglob("*"))
    with pytest.raises(ConfigError, match=rf"^--resume cannot change {key}: the run has {key}=.*, the command "
                                          rf"line gives {key}="):
        changed = override.split("|")
        selfplay.train(config(tmp_path, "frozen", "total_steps=128", "eval_every=0", *changed), resume=True)
    assert sorted(p.name for p in (tmp_path / "frozen").rglob("*")) == before


def test_a_folder_holding_a_run_is_refused(tmp_path, capsys):
    cfg = config(tmp_path, "twice", "total_steps=128", "eval_every=0")
    selfplay.train(cfg)
    with pytest.raises(RunExistsError, match=r"already holds a run: add --resume to continue it, or --overwrite"):
        selfplay.train(cfg)
    argv = [a for item in TINY + [f"run_dir={tmp_path}", "name=twice", "total_steps=128"] for a in ("--set", item)]
    with pytest.raises(SystemExit) as info:
        selfplay.main(argv)
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert info.value.code == 2
    assert str(tmp_path / "twice") in err and "--resume" in err and "--overwrite" in err
    (tmp_path / "twice" / "main_job_eval.json").write_text("[]")  # the old run's, not this one's
    selfplay.main(argv + ["--overwrite"])
    assert not (tmp_path / "twice" / "main_job_eval.json").exists()
    assert (tmp_path / "twice" / "checkpoints" / "final.pt").exists()


def test_other_folders_are_never_overwritten(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("precious")
    for overwrite in (False, True):
        with pytest.raises(RunFolderError, match="exists and is not a run folder"):
            selfplay.train(config(tmp_path, "mine", "total_steps=128"), overwrite=overwrite)
    assert (tmp_path / "mine" / "thesis.tex").read_text() == "precious"
    with pytest.raises(RunFolderError, match=r"--resume: nothing to resume in .*it holds no run"):
        selfplay.train(config(tmp_path, "nothing"), resume=True)
    assert not (tmp_path / "nothing").exists()


def test_a_latest_checkpoint_without_resume_state_is_refused_in_one_line(tmp_path):
    from models import build_network
    from models.checkpoint import save_checkpoint
    from training import train_sb3
    from tt_env.engine.rules import Rules

    selfplay.train(config(tmp_path, "old", "total_steps=128", "eval_every=0"))
    with pytest.raises(ValueError, match=r"is a run of 'training/selfplay.py': resume it with that script"):
        train_sb3.train(sb3_config(tmp_path, "name=old"), resume=True)
    save_checkpoint(tmp_path / "old" / "checkpoints" / "latest.pt", build_network("mlp", num_players=2,
                    hidden_sizes=[16]), obs_version=1, rules=Rules().to_dict(), training_steps=128)
    with pytest.raises(ValueError, match=r"holds no resume state \(saved by an older version\?\)"):
        selfplay.train(config(tmp_path, "old", "total_steps=256"), resume=True)


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_run_that_fails_to_start_changes_nothing(tmp_path):
    from models import build_network
    from models.checkpoint import save_checkpoint
    from tt_env.engine.rules import Rules

    other = save_checkpoint(tmp_path / "big.pt", build_network("mlp", num_players=2, hidden_sizes=[64]),
                            obs_version=1, rules=Rules().to_dict(), training_steps=1)
    three = save_checkpoint(tmp_path / "three.pt", build_network("mlp", num_players=3, hidden_sizes=[16]),
                            obs_version=1, rules=Rules(num_players=3).to_dict(), training_steps=1)
    with pytest.raises(ConfigError, match=r"init_checkpoint=.*big.pt' does not fit network='mlp'"):
        selfplay.train(config(tmp_path, "new", f"init_checkpoint={other}"))
    with pytest.raises(ValueError, match="player count mismatch"):
        selfplay.train(config(tmp_path, "new", f"init_checkpoint={three}"))
    assert not (tmp_path / "new").exists()
    selfplay.train(config(tmp_path, "old", "total_steps=128", "eval_every=0"))
    before = snapshot(tmp_path / "old")
    with pytest.raises(ConfigError, match="does not fit network"):
        selfplay.train(config(tmp_path, "old", "total_steps=128", f"init_checkpoint={other}"), overwrite=True)
    assert snapshot(tmp_path / "old") == before


def test_a_missing_init_checkpoint_stops_a_new_run_but_not_a_resumed_one(tmp_path):
    """A new run reads ``init_checkpoint`` before its folder is touched (``--overwrite`` deletes
    nothing); a resumed run's weights are its own, so its init checkpoint may have moved since."""
    import shutil

    selfplay.train(config(tmp_path, "a", "total_steps=128", "eval_every=0"))
    start = tmp_path / "start.pt"
    shutil.copy(tmp_path / "a" / "checkpoints" / "final.pt", start)
    shutil.copy(tmp_path / "a" / "checkpoints" / "final.json", start.with_suffix(".json"))
    selfplay.train(config(tmp_path, "b", "total_steps=128", "eval_every=0", f"init_checkpoint={start}"))
    before = snapshot(tmp_path / "b")
    start.unlink()
    with pytest.raises(ConfigError, match=r"^init_checkpoint='.*start.pt': checkpoint '.*start.pt' does not exist$"):
        selfplay.train(config(tmp_path, "b", "total_steps=128", f"init_checkpoint={start}"), overwrite=True)
    assert snapshot(tmp_path / "b") == before
    run = selfplay.train(config(tmp_path, "b", "total_steps=256", "eval_every=0", f"init_checkpoint={start}"),
                         resume=True)
    assert read_metadata(run.checkpoints / "final.pt")["training_steps"] >= 256


def test_an_init_checkpoint_that_learned_other_scoring_is_refused(tmp_path):
    """Its sidecar's ``aces`` went unchecked: a network of one scoring trained on another's games."""
    selfplay.train(config(tmp_path, "high", "total_steps=128", "eval_every=0", "rules.aces=high_or_low"))
    start = tmp_path / "high" / "checkpoints" / "final.pt"
    with pytest.raises(ConfigError, match=r"^init_checkpoint='.*final.pt': .*trained with aces='high_or_low', but the "
                                          r"game has aces='low'"):
        selfplay.train(config(tmp_path, "low", "total_steps=128", f"init_checkpoint={start}"))
    assert not (tmp_path / "low").exists()
    selfplay.build_net(config(tmp_path, "also-high", "rules.aces=high_or_low", f"init_checkpoint={start}"))


def test_init_checkpoint_starts_from_its_weights(tmp_path):
    selfplay.train(config(tmp_path, "a", "total_steps=128", "eval_every=0"))
    start = tmp_path / "a" / "checkpoints" / "final.pt"
    net = selfplay.build_net(config(tmp_path, "b", f"init_checkpoint={start}"))
    saved, _ = load_checkpoint(start)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), saved.state_dict().values(), strict=True))


# ---------------------------------------------------------------- train_sb3.py and main_job.py
SB3_TINY = ["total_steps=768", "num_envs=2", "n_steps=64", "batch_size=64", "n_epochs=1", "eval_every=256",
            "save_every=128", "eval_deals=1", "eval_opponents=[greedy-v0]", "progress=false", "rules.rounds=[1, 2]",
            "hidden_sizes=[16, 16]", "vec_env=dummy", "device=cpu"]


def sb3_config(tmp_path, *extra):
    from training.common.config import SB3Config

    return load_config(SB3Config, None, SB3_TINY + [f"run_dir={tmp_path}", "name=sb3", *extra])


def test_sb3_resumes_from_the_start_of_the_interrupted_rollout(tmp_path, monkeypatch, capsys):
    from training import train_sb3

    sigint_on_call(monkeypatch, train_sb3.RunCallback, "_on_rollout_start", 4)  # in rollout 4: steps 384..512
    run = train_sb3.train(sb3_config(tmp_path))
    monkeypatch.undo()
    assert run.stopped_by == signal.SIGINT and "stopped at step 384 of 768" in capsys.readouterr().out
    saved = json.loads((run.checkpoints / f"latest.{STATE}").read_text())
    assert saved["step"] == 384 and [h["step"] for h in saved["history"]] == [256]
    tensors = torch.load(run.checkpoints / f"latest.{TENSORS}", weights_only=True)
    assert set(tensors) == {"policy", "optimizer", "torch_rng"}
    with pytest.raises(ConfigError, match=r"--resume cannot change hidden_sizes: the run has hidden_sizes=\[16, 16\]"):
        train_sb3.train(sb3_config(tmp_path, "hidden_sizes=[32]"), resume=True)
    train_sb3.train(sb3_config(tmp_path), resume=True)
    assert json.loads((run.checkpoints / "final.json").read_text())["training_steps"] == 768
    assert [h["step"] for h in json.loads((run.path / "eval.json").read_text())] == [256, 512, 768]
    assert [s for s, _ in tb_scalars(run.path, "time/fps", "ppo_1")] == list(range(128, 769, 128))
    # a finished run trains longer with --resume --set total_steps=N
    train_sb3.train(sb3_config(tmp_path, "total_steps=1024"), resume=True)
    assert [h["step"] for h in json.loads((run.path / "eval.json").read_text())] == [256, 512, 768, 1024]
    assert [s for s, _ in tb_scalars(run.path, "time/fps", "ppo_1")] == list(range(128, 1025, 128))
    capsys.readouterr()
    train_sb3.train(sb3_config(tmp_path, "total_steps=1024"), resume=True)  # trained and evaluated there
    assert "nothing to do" in capsys.readouterr().out
    assert [h["step"] for h in json.loads((run.path / "eval.json").read_text())] == [256, 512, 768, 1024]


@pytest.mark.slow
def test_main_job_refuses_a_second_run_and_resumes_to_evaluate(tmp_path, capsys):
    from training import main_job

    argv = [a for s in TINY + ["total_steps=128", "eval_every=0", f"run_dir={tmp_path}"] for a in ("--set", s)]
    selfplay.train(config(tmp_path, "main_job", "total_steps=128", "eval_every=0"))
    with pytest.raises(SystemExit) as info:
        main_job.main(argv + ["--deals", "1", "--workers", "1"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert info.value.code == 2
    assert (f"run folder '{tmp_path / 'main_job'}' already holds a run: add --resume to continue it, or "
            f"--overwrite to delete it and start again; or --skip-training to only evaluate it") in err
    main_job.main(argv + ["--resume", "--deals", "1", "--workers", "1"])
    out = capsys.readouterr().out
    assert "nothing to do" in out and "Duplicate evaluation" in out
    assert (tmp_path / "main_job" / "main_job_eval.json").exists()
