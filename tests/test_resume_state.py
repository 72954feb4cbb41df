"""A damaged or edited resume state is refused in one line, and SB3's resume restores every generator (issue 19)."""

from __future__ import annotations

import hashlib
import json
import random

import numpy as np
import pytest
import torch

from models.checkpoint import CheckpointError, attachment_path, serialize_state
from training import selfplay
from training.resume import STATE, TENSORS, history_problem
from training.run_utils import RunDir

from test_resume import config, sb3_config, snapshot


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished tiny self-play run (its latest.pt holds the resume state), copied per test."""
    root = tmp_path_factory.mktemp("finished")
    selfplay.train(config(root, "run", "total_steps=256", "eval_every=128"))
    return root


@pytest.fixture
def run_copy(tmp_path, finished):
    import shutil

    shutil.copytree(finished / "run", tmp_path / "run")
    return tmp_path


def rewrite_attachment(latest, name: str, data: bytes) -> None:
    """Replace attachment ``name`` of ``latest`` and record its new hash (an edit that passes the sha check)."""
    attachment_path(latest, name).write_bytes(data)
    side = latest.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["attachments"][name].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    side.write_text(json.dumps(meta))


def edit_state(root, change) -> None:
    latest = root / "run" / "checkpoints" / "latest.pt"
    state = json.loads(attachment_path(latest, STATE).read_text())
    change(state)
    rewrite_attachment(latest, STATE, json.dumps(state).encode())


CASES = [
    (lambda s: s.update(history={"step": 128}), r"is damaged: history=\{'step': 128\} is not allowed"),
    (lambda s: s.update(history="x"), "is damaged: history='x' is not allowed"),
    (lambda s: s.update(step=-5), "is damaged: step=-5 is not allowed"),
    (lambda s: s.update(step="256"), "is damaged: step='256' is not allowed"),
    (lambda s: s.update(step=True), "is damaged: step=True is not allowed"),
    (lambda s: s.pop("update"), "is damaged: it has no 'update'"),
    (lambda s: s.update(update=-1), "is damaged: update=-1 is not allowed"),
    (lambda s: s.update(play=[]), r"is damaged: play=\[\] is not allowed"),
    (lambda s: s.update(config=None), "is damaged: config=None is not allowed"),
    (lambda s: s.update(last_eval=999), "is damaged: last_eval=999 is after step=256"),
    (lambda s: s.update(next_eval="soon"), "is damaged: next_eval='soon' is not allowed"),
    (lambda s: s["history"].reverse(), r"history\[1\] is at step 128, which is not after the evaluation before it"),
    (lambda s: s["history"][0].update(step=10 ** 6), r"history\[0\] is at step 1000000"),
    (lambda s: s["history"][0].pop("results"), r"history\[0\] is not an evaluation"),
    (lambda s: s["history"][0]["results"][0].pop("opponent"), r"history\[0\].results\[0\] has a missing or wrong "
                                                              r"opponent"),
    (lambda s: s["history"][0]["results"].append(7), r"history\[0\].results\[1\] is not a mapping"),
    (lambda s: s["play"]["tables"][0].update(actions=[99, 99]), r"does not fit this run \("),
    (lambda s: s["play"]["tables"][0].update(seed=-3), r"does not fit this run \("),
    (lambda s: s["play"].pop("tables"), r"does not fit this run \(KeyError"),
    (lambda s: s["play"].update(rng={"bit_generator": "PCG64", "state": 5}), r"does not fit this run \("),
    (lambda s: s["play"]["tables"].pop(), "the resume state has 1 tables, the run 2"),
]


@pytest.mark.parametrize("change,message", CASES)
def test_a_tampered_resume_state_is_refused_and_the_run_is_untouched(run_copy, change, message):
    edit_state(run_copy, change)
    before = snapshot(run_copy / "run")
    with pytest.raises(CheckpointError, match=message) as info:
        selfplay.train(config(run_copy, "run", "total_steps=512", "eval_every=128"), resume=True)
    assert "\n" not in str(info.value)
    assert snapshot(run_copy / "run") == before


def test_a_deeply_nested_or_non_json_state_is_refused(run_copy):
    latest = run_copy / "run" / "checkpoints" / "latest.pt"
    cfg = config(run_copy, "run", "total_steps=512")
    for data, message in ((b"[" * 100000 + b"]" * 100000, "nested too deeply"), (b"\xff\xfe", "not UTF-8"),
                          (b"{", "is not valid JSON")):
        rewrite_attachment(latest, STATE, data)
        with pytest.raises(CheckpointError, match=message):
            selfplay.train(cfg, resume=True)


def test_missing_or_mismatched_tensors_are_refused(run_copy):
    latest = run_copy / "run" / "checkpoints" / "latest.pt"
    tensors = torch.load(attachment_path(latest, TENSORS), weights_only=True)
    cfg = config(run_copy, "run", "total_steps=512")
    rewrite_attachment(latest, TENSORS, serialize_state({k: v for k, v in tensors.items() if k != "update_rng"}))
    with pytest.raises(CheckpointError, match=r"is damaged: its tensors lack \['update_rng'\]"):
        selfplay.train(cfg, resume=True)
    rewrite_attachment(latest, TENSORS, serialize_state({**tensors, "torch_rng": torch.zeros(3)}))
    with pytest.raises(CheckpointError, match=r"does not fit this run \((TypeError|RuntimeError): "):
        selfplay.train(cfg, resume=True)


def test_the_command_line_refuses_a_tampered_state_in_one_line(run_copy, capsys):
    from test_resume import TINY

    edit_state(run_copy, lambda s: s.update(history={}))
    argv = [a for item in TINY + [f"run_dir={run_copy}", "name=run", "total_steps=512", "eval_every=128"]
            for a in ("--set", item)]
    with pytest.raises(SystemExit) as info:
        selfplay.main(argv + ["--resume"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert "is damaged: history={} is not allowed" in err.strip().splitlines()[-1]


def test_history_problem_accepts_what_runs_write():
    ok = [{"step": 128, "results": [{"opponent": "greedy-v0", "deals": 1, "games": 2, "score_diff": -1.5,
                                     "ci95": None, "win_rate": 0.5}]},
          {"step": 256, "results": []}]
    assert history_problem(ok, 256) is None
    assert history_problem(ok, 255) is not None
    assert history_problem([{"step": 0, "results": []}], 0) is None


def test_sb3_a_tampered_state_is_refused(tmp_path):
    from training import train_sb3

    train_sb3.train(sb3_config(tmp_path, "total_steps=128", "eval_every=0"))
    latest = tmp_path / "sb3" / "checkpoints" / "latest.pt"
    state = json.loads(attachment_path(latest, STATE).read_text())
    for key, value, message in (("np_rng", [1], r"np_rng=\[1\] is not allowed"), ("n_updates", -1, "n_updates=-1"),
                                ("history", 3, "history=3 is not allowed")):
        rewrite_attachment(latest, STATE, json.dumps({**state, key: value}).encode())
        with pytest.raises(CheckpointError, match=message):
            train_sb3.train(sb3_config(tmp_path, "total_steps=256", "eval_every=0"), resume=True)
    rewrite_attachment(latest, STATE, json.dumps({**state, "np_rng": {"bit_generator": "MT19937"}}).encode())
    with pytest.raises(CheckpointError, match=r"does not fit this run \(KeyError"):
        train_sb3.train(sb3_config(tmp_path, "total_steps=256", "eval_every=0"), resume=True)


def test_sb3_resume_restores_numpys_global_generator_and_the_others(tmp_path):
    """What SB3 and the environments draw from (numpy's global generator, Python's, torch's) continues exactly."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training import train_sb3
    from training.resume import StopSignals, load_latest

    cfg = sb3_config(tmp_path)

    def model():
        env = DummyVecEnv([train_sb3.make_env(cfg, 0, 0)])
        return MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, policy_kwargs={
            "net_arch": {"pi": [16, 16], "vf": [16, 16]}, "activation_fn": torch.nn.Tanh})

    run = RunDir(cfg.run_dir, cfg.name)
    run.create(overwrite=False)
    try:
        callback = train_sb3.RunCallback(cfg, run, StopSignals(), {"step": 0, "next_eval": 256, "last_eval": None})
        callback.model = model()
        np.random.seed(11), random.seed(12), torch.manual_seed(13)
        safe = callback.capture()
        expected = (np.random.random(4).tolist(), random.random(), torch.rand(3).tolist())
        callback.save(safe)  # (building the exported copy draws from torch's generator)
        np.random.seed(99), random.seed(99), torch.manual_seed(99)  # what happens before a resume
        tensors, saved = load_latest(run, train_sb3.TRAINER, train_sb3.STATE_KEYS, train_sb3.TENSOR_KEYS)
        train_sb3._restore(model(), tensors, saved)
        assert np.random.random(4).tolist() == expected[0], "numpy's global generator was not restored"
        assert random.random() == expected[1], "Python's generator was not restored"
        assert torch.rand(3).tolist() == expected[2], "torch's generator was not restored"
    finally:
        run.release()
