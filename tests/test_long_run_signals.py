"""``training/long_run.py`` stopped by a signal while a chunk trains: Ctrl-C (SIGINT to the whole
process group, as a terminal sends it) and SIGTERM to long_run alone (as ``timeout`` or a scheduler
sends it). The trainer saves and exits, then long_run copies its resume state into the store,
records the chunk and exits non-zero, leaving no trainer behind and no half-written checkpoint."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_long_run import TINY
from training.common import run_lock
from training.long_run import checkpoint_files

ROOT = Path(__file__).resolve().parent.parent


def wait_for_training(proc: subprocess.Popen, run: Path, log: Path) -> dict:
    """The run lock of the chunk's trainer, once it has saved past step 0 (its stop handlers are set)."""
    side, lock = run / "checkpoints" / "latest.json", run / run_lock.LOCK_NAME
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if json.loads(side.read_text())["training_steps"] > 0:
                holder = json.loads(lock.read_text())
                if run_lock.holder_is_alive(holder):
                    return holder
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"the trainer did not start training (long_run: {proc.poll()}): {log.read_text()[-2000:]}")


def kill_left_over(proc: subprocess.Popen, holder: dict | None) -> None:
    """End long_run and its trainer if a failed test left them running."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if holder and run_lock.holder_is_alive(holder):
        os.kill(holder["pid"], signal.SIGKILL)


@pytest.mark.parametrize("sig, group", [(signal.SIGINT, True), (signal.SIGTERM, False)], ids=["ctrl-c", "sigterm"])
def test_a_signal_saves_the_chunk_into_the_store_and_stops(tmp_path, sig, group):
    log = tmp_path / "long_run.log"
    argv = [sys.executable, "-m", "training.long_run", *[x for item in TINY for x in ("--set", item)],
            "--store", "store", "--chunk-steps", "1000000", "--until", "1000000"]
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
    holder = None
    try:
        holder = wait_for_training(proc, tmp_path / "runs/t", log)
        if group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        code = proc.wait(timeout=60)
    finally:
        kill_left_over(proc, holder)
    text = log.read_text()
    assert code == 128 + sig, text[-2000:]
    assert not run_lock.holder_is_alive(holder), "the trainer outlived long_run"
    run, store = tmp_path / "runs/t/checkpoints", tmp_path / "store/t/checkpoints"
    assert not [p.name for p in run.iterdir() if p.name.endswith((".pending", ".tmp"))]
    for name in checkpoint_files(run / "latest.json"):
        assert (store / name).read_bytes() == (run / name).read_bytes(), name
    chunks = [json.loads(line) for line in (tmp_path / "store/t/chunks.jsonl").read_text().splitlines()]
    steps = json.loads((run / "latest.json").read_text())["training_steps"]
    assert [(c["from_step"], c["to_step"], c["exit_code"]) for c in chunks] == [(0, steps, 128 + sig)]
    assert text.count("=== chunk") == 1 and "the store holds step" in text

