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
from training.common.resume import STATE, TENSORS, history_problem
from training.common.run_utils import RunDir

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


@pytest.mark.parametrize("entry", [{"step": "ten", "results": []}, {"step": -3, "results": []},
                                   {"step": 1.5, "results": []}, {"step": 5, "results": {}}, {"step": 5}, [5, []]])
def test_history_problem_names_each_malformed_entry(entry):
    """Each part of an entry is checked on its own: a dict whose step is not a count is refused, not compared."""
    assert history_problem([entry], 10) == "history[0] is not an evaluation ({'step': int >= 0, 'results': [...]})"


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
    from training.common.evaluations import EvalSchedule
    from training.common.resume import StopSignals, load_latest

    cfg = sb3_config(tmp_path)

    def model():
        env = DummyVecEnv([train_sb3.make_env(cfg, 0, 0)])
        return MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, seed=0, policy_kwargs={
            "net_arch": {"pi": [16, 16], "vf": [16, 16]}, "activation_fn": torch.nn.Tanh})

    run = RunDir(cfg.run_dir, cfg.name)
    run.create(overwrite=False)
    try:
        callback = train_sb3.RunCallback(cfg, run, StopSignals(), 0, EvalSchedule.start(256))
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


# ---------------------------------------------------------------- the helpers, one by one (mutation testing)
def test_the_value_checks():
    from training.common.resume import is_count, is_count_or_none, is_dict, is_list, is_number, is_number_or_none, is_str

    assert is_count(0) and is_count(5) and not is_count(-1) and not is_count(True) and not is_count(1.0)
    assert is_number(1.5) and is_number(-2) and not is_number(False) and not is_number("1")
    assert is_count_or_none(None) and is_count_or_none(3) and not is_count_or_none(-3) and not is_count_or_none("3")
    assert is_number_or_none(None) and is_number_or_none(0.5) and not is_number_or_none("x")
    assert is_dict({}) and not is_dict([]) and is_list([]) and not is_list({}) and is_str("") and not is_str(1)


def test_a_state_saved_before_any_evaluation_passes_the_check():
    from training.common.resume import check_state

    state = {"step": 0, "config": {}, "history": [], "last_eval": None, "next_eval": None, "update": 0}
    check_state(state, {"t": 1}, "x", {"update": lambda v: v == 0}, ("t",))
    result = {"opponent": "greedy-v0", "deals": 1, "games": 2, "score_diff": None, "ci95": None, "win_rate": None}
    check_state({**state, "step": 5, "last_eval": 5, "history": [{"step": 5, "results": [result]}]}, {}, "x", {}, ())


def test_long_values_are_shortened_in_messages():
    from training.common.resume import _short

    assert _short("x" * 58) == repr("x" * 58)  # 60 characters with the quotes: kept
    assert _short("x" * 59) == repr("x" * 59)[:57] + "..." and len(_short("y" * 500)) == 60


def test_the_restore_error_names_the_file_the_exception_and_its_first_line(tmp_path):
    from training.common.resume import restore_failed

    run = RunDir(tmp_path, "r")
    exc = restore_failed(run, KeyError("tables"))
    assert str(exc) == (f"resume state of {str(run.latest)!r} does not fit this run (KeyError: 'tables'): it is damaged "
                        f"or from another version; start again with --overwrite")
    assert "(ValueError: ): it is damaged" in str(restore_failed(run, ValueError()))
    long = str(restore_failed(run, RuntimeError("a" * 300 + "\nsecond line")))
    assert "(RuntimeError: " + "a" * 200 + "): it" in long and "second line" not in long


def test_rule_options_are_compared_as_the_rules_they_make(tmp_path):
    from training.common.config import ConfigError
    from training.common.resume import check_resumable

    cfg = config(tmp_path, "r", "rules.rounds=[1, 2]")
    check_resumable({**cfg.to_dict(), "rules": {"rounds": [1, 2]}}, cfg)
    full = config(tmp_path, "r", "rules={}")
    check_resumable({**full.to_dict(), "rules": {"rounds": list(range(1, 12))}}, full)  # the default, written out
    with pytest.raises(ConfigError, match="--resume cannot change rules"):
        check_resumable({**cfg.to_dict(), "rules": {"rounds": [1, 3]}}, cfg)


def test_the_resume_command_drops_resume_and_overwrite_and_quotes(monkeypatch):
    from training.common.resume import default_resume_command, resume_command

    assert (resume_command("python x.py", ["--overwrite", "--set", "name=a b", "--resume"])
            == "python x.py --set 'name=a b' --resume")
    monkeypatch.setattr("sys.argv", ["x.py", "--config", "c.yaml", "--overwrite"])
    assert resume_command("python -m training.main_job", None) == "python -m training.main_job --config c.yaml --resume"
    run = RunDir("runs dir", "n")
    assert (default_resume_command("training/selfplay.py", run)
            == "python training/selfplay.py --config 'runs dir/n/config.yaml' --resume")


def test_the_first_signal_says_what_happens_on_stderr(capsys):
    import signal

    from training.common.resume import StopSignals

    signals = StopSignals()
    signals._handle(signal.SIGTERM, None)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        "\nSIGTERM: stopping at the end of this step of training, after saving checkpoints/latest.pt (send it "
        "again to stop at once, without saving)\n")
    assert signals.requested and signals.signum == signal.SIGTERM


def test_resume_refuses_a_lower_pool_size_and_takes_a_higher_one():
    """A lower ``pool_size`` on ``--resume`` did nothing (the pool drops one network as a snapshot
    adds one): it is refused now; a higher one grows the pool from then on."""
    from training.common.config import ConfigError, SelfPlayConfig, load_config
    from training.common.resume import check_resumable
    from training.ppo.batch_config import BatchPPOConfig

    for cls in (SelfPlayConfig, BatchPPOConfig):
        saved = load_config(cls, None, ["pool_size=5"]).to_dict()
        with pytest.raises(ConfigError, match=r"--resume cannot lower pool_size: the run has pool_size=5, the command "
                                              r"line gives 2 .*keep pool_size >= 5, or start a new run"):
            check_resumable(saved, load_config(cls, None, ["pool_size=2"]))
        check_resumable(saved, load_config(cls, None, ["pool_size=8"]))
        check_resumable(saved, load_config(cls, None, ["pool_size=5"]))
