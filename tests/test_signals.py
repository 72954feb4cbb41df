"""Real signals to training subprocesses, then --resume (issue 9.2).

SIGINT (to the whole process group, as Ctrl-C sends it) and SIGTERM make a run save
``latest.pt`` and print the command that resumes it; SIGKILL loses what came after the last
periodic save. Either way the resumed run reaches ``total_steps`` with its evaluation history
and TensorBoard steps complete and unduplicated; a resumed ``selfplay.py`` run is bit-identical
to one that never stopped.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from training import selfplay
from training.common.config import SelfPlayConfig, load_config

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SELFPLAY = ["total_steps=2048", "num_envs=2", "rollout_steps=128", "num_minibatches=2", "update_epochs=1",
            "eval_every=1024", "save_every=256", "eval_deals=1", "eval_opponents=[greedy-v0]", "progress=false",
            "rules.rounds=[1, 2]", "network=mlp", "network_kwargs={hidden_sizes: [16]}", "snapshot_every=2",
            "pool_prob=0.5"]
SB3 = ["total_steps=1024", "num_envs=2", "n_steps=64", "batch_size=64", "n_epochs=1", "eval_every=512",
       "save_every=128", "eval_deals=1", "eval_opponents=[greedy-v0]", "progress=false", "rules.rounds=[1, 2]",
       "hidden_sizes=[16, 16]"]


def command(script: str, settings: list[str]) -> list[str]:
    return [sys.executable, str(ROOT / "training" / script)] + [a for s in settings for a in ("--set", s)]


def start_and_signal(args: list[str], run: Path, sig: int, group: bool) -> subprocess.CompletedProcess:
    """Start ``args``; once it has saved ``latest.pt`` past step 0, send ``sig``; wait for it to end."""
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    side = run / "checkpoints" / "latest.json"
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if json.loads(side.read_text())["training_steps"] > 0:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be signalled: " + proc.stderr.read()[-2000:]
        time.sleep(0.2)  # let it train on past the save, so that a SIGKILL loses some steps
        if group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    deadline = time.monotonic() + 30
    while live_in_group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not live_in_group(proc.pid), "worker processes outlived the run"
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def live_in_group(pgid: int) -> list[int]:
    """Processes of process group ``pgid`` that are still running (zombies waiting to be reaped do not count)."""
    live = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            live.append(int(stat.parent.name))
    return live


def resume(stopped: subprocess.CompletedProcess, sig: int) -> subprocess.CompletedProcess:
    """Resume with the command the run printed (SIGINT/SIGTERM) or the original one plus --resume (SIGKILL)."""
    if sig == signal.SIGKILL:
        assert stopped.returncode == -signal.SIGKILL
        args = list(stopped.args) + ["--resume"]
    else:
        assert stopped.returncode == 128 + sig, stopped.stdout[-2000:] + stopped.stderr[-2000:]
        assert f"{signal.Signals(sig).name}: stopping" in stopped.stderr
        line = next(ln for ln in stopped.stdout.splitlines() if ln.startswith("resume with: "))
        args = shlex.split(line[len("resume with: "):])
        assert args[0] == "python" and args[-1] == "--resume"
        args[0] = sys.executable
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def scalar_steps(folder: Path, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder))
    acc.Reload()
    return [e.step for e in acc.Scalars(tag)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("signals-reference")
    cfg = load_config(SelfPlayConfig, None, SELFPLAY + [f"run_dir={path}", "name=ref"])
    return selfplay.train(cfg).path


@pytest.mark.parametrize("sig,group", [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGKILL, False)])
def test_selfplay_resumes_after_a_signal(tmp_path, reference, sig, group):
    run = tmp_path / "cut"
    stopped = start_and_signal(command("selfplay.py", SELFPLAY + [f"run_dir={tmp_path}", "name=cut"]), run, sig,
                               group)
    assert not (run / "checkpoints" / "final.pt").exists()
    resume(stopped, sig)
    ref = torch.load(reference / "checkpoints" / "final.pt", weights_only=True)
    got = torch.load(run / "checkpoints" / "final.pt", weights_only=True)
    assert all(torch.equal(ref[k], got[k]) for k in ref), "the resumed run is not bit-identical"
    history = json.loads((run / "eval.json").read_text())
    assert [h["step"] for h in history] == [1024, 2048]
    assert history == json.loads((reference / "eval.json").read_text())
    steps = scalar_steps(run / "tb", "charts/learning_rate")
    assert steps == list(range(128, 2049, 128)) == scalar_steps(reference / "tb", "charts/learning_rate")


@pytest.mark.parametrize("sig,group,vec_env", [(signal.SIGINT, True, "subproc"), (signal.SIGKILL, False, "dummy")])
def test_sb3_resumes_after_a_signal(tmp_path, sig, group, vec_env):
    run = tmp_path / "sb3"
    args = command("train_sb3.py", SB3 + [f"run_dir={tmp_path}", "name=sb3", f"vec_env={vec_env}"])
    stopped = start_and_signal(args, run, sig, group)
    resume(stopped, sig)
    meta = json.loads((run / "checkpoints" / "final.json").read_text())
    assert meta["training_steps"] == 1024
    assert [h["step"] for h in json.loads((run / "eval.json").read_text())] == [512, 1024]
    assert scalar_steps(run / "tb" / "ppo_1", "time/fps") == list(range(128, 1025, 128))
    assert sorted(p.name for p in (run / "tb").iterdir()) == ["ppo_1"]
