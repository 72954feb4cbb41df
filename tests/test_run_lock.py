"""Run-folder locks (issue 19): a live run's folder is neither overwritten nor resumed by a second process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from training import selfplay
from training.common import evaluations, run_lock
from training.common.run_lock import LOCK_NAME, RunInUseError, RunLock

from test_resume import TINY, config, sb3_config, snapshot

ROOT = Path(__file__).resolve().parent.parent
HOLD = ("import sys, time\nfrom training.common.run_lock import RunLock\nlock = RunLock(sys.argv[1])\nlock.acquire()\n"
        "print('held', flush=True)\ntime.sleep(120)\n")


@pytest.fixture
def holder(tmp_path):
    """Start a process that takes the lock of a folder and keeps it; yields (folder -> Popen)."""
    procs = []

    def start(folder: Path) -> subprocess.Popen:
        folder.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        procs.append(proc)
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def finished_run(tmp_path, name="run"):
    selfplay.train(config(tmp_path, name, "total_steps=128", "eval_every=0"))
    return tmp_path / name


def test_overwrite_and_resume_of_a_live_run_are_refused_naming_the_holder(tmp_path, holder):
    folder = finished_run(tmp_path)
    proc = holder(folder)
    before = snapshot(folder)
    for kwargs, why in (({"overwrite": True}, "--overwrite would delete its files under it"),
                        ({"resume": True}, "--resume would make a second process write the same run"),
                        ({}, "a second run cannot start there")):
        with pytest.raises(RunInUseError, match=rf"is in use by process {proc.pid} on host "
                                                rf"{socket.gethostname()}, started .*: {why}") as info:
            selfplay.train(config(tmp_path, "run", "total_steps=256", "eval_every=0"), **kwargs)
        assert "\n" not in str(info.value)
    assert snapshot(folder) == before


def test_the_command_lines_refuse_a_live_run_in_one_line(tmp_path, holder, capsys):
    from training import main_job, train_sb3

    folder = finished_run(tmp_path, "main_job")
    proc = holder(folder)
    argv = [a for s in TINY + ["total_steps=128", "eval_every=0", f"run_dir={tmp_path}", "name=main_job"]
            for a in ("--set", s)]
    for main, extra in ((selfplay.main, ["--overwrite"]), (selfplay.main, ["--resume"]),
                        (main_job.main, ["--overwrite"]), (main_job.main, ["--resume"]),
                        (main_job.main, ["--skip-training"])):
        with pytest.raises(SystemExit) as info:
            main(argv + extra)
        err = capsys.readouterr().err
        assert info.value.code == 2 and "Traceback" not in err
        assert f"is in use by process {proc.pid}" in err.strip().splitlines()[-1], (main, extra)
    sb3_argv = [a for s in [f"run_dir={tmp_path}", "name=main_job"] for a in ("--set", s)]
    with pytest.raises(SystemExit):
        train_sb3.main(sb3_argv + ["--overwrite"])
    assert f"is in use by process {proc.pid}" in capsys.readouterr().err


def test_a_stale_lock_is_taken_over_with_a_note(tmp_path, holder, capsys):
    folder = finished_run(tmp_path)
    proc = holder(folder)
    proc.kill()
    proc.wait()
    assert json.loads((folder / LOCK_NAME).read_text())["pid"] == proc.pid  # left behind, as by SIGKILL
    run = selfplay.train(config(tmp_path, "run", "total_steps=256", "eval_every=0"), resume=True)
    assert run.stopped_by is None
    assert (f"was locked by process {proc.pid} on host {socket.gethostname()}" in capsys.readouterr().err)
    assert not (folder / LOCK_NAME).exists(), "the run did not release its lock"


def test_a_killed_but_unreaped_holder_is_dead(tmp_path, holder):
    folder = tmp_path / "f"
    proc = holder(folder)
    proc.send_signal(signal.SIGKILL)
    time.sleep(0.3)  # a zombie until waited for
    lock = RunLock(folder)
    assert lock.live_holder() is None
    lock.acquire()
    assert json.loads((folder / LOCK_NAME).read_text())["pid"] == os.getpid()
    lock.release()


def write_lock(folder: Path, **fields) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    record = {"format": run_lock.LOCK_FORMAT, "pid": os.getppid(), "host": socket.gethostname(),
              "started": "then", "process_start": run_lock._process_start(os.getppid()), "command": "x",
              "token": "t", **fields}
    (folder / LOCK_NAME).write_text(json.dumps(record))


def test_liveness_of_a_lock(tmp_path):
    lock = RunLock(tmp_path)
    write_lock(tmp_path)  # our parent: alive
    assert lock.live_holder()["pid"] == os.getppid()
    write_lock(tmp_path, process_start=-1)  # the pid now belongs to a process started at another time
    assert lock.live_holder() is None
    write_lock(tmp_path, host="another-host", pid=2 ** 22 + 12345)  # no such pid here, but it cannot be checked
    assert lock.live_holder()["host"] == "another-host"
    with pytest.raises(RunInUseError, match="on host another-host"):
        lock.acquire()
    for bad in ({"pid": 0}, {"pid": "12"}, {"pid": 2 ** 22 + 12345}):
        write_lock(tmp_path, **bad)
        assert lock.live_holder() is None, bad
    (tmp_path / LOCK_NAME).write_text("{half")
    assert lock.read() == {} and lock.live_holder() is None


def test_a_run_holds_the_lock_while_it_trains_and_releases_it(tmp_path, monkeypatch):
    seen = []
    real = evaluations.evaluate_agent

    def look(*args, **kwargs):
        seen.append(json.loads((tmp_path / "run" / LOCK_NAME).read_text()))
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluations, "evaluate_agent", look)
    selfplay.train(config(tmp_path, "run", "total_steps=128", "eval_every=0"))
    assert seen and all(s["pid"] == os.getpid() and s["host"] == socket.gethostname() for s in seen)
    assert {"format", "pid", "host", "started", "process_start", "command", "token"} <= set(seen[0])
    assert not (tmp_path / "run" / LOCK_NAME).exists()


def test_a_failed_run_releases_its_lock(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(selfplay, "ppo_update", boom)
    with pytest.raises(RuntimeError, match="boom"):
        selfplay.train(config(tmp_path, "run", "total_steps=128", "eval_every=0"))
    assert not (tmp_path / "run" / LOCK_NAME).exists()


def test_main_job_holds_the_lock_while_it_evaluates(tmp_path, monkeypatch):
    from training import main_job

    finished_run(tmp_path, "main_job")
    seen = []
    monkeypatch.setattr(main_job, "evaluation_table", lambda *a, **k: seen.append(
        json.loads((tmp_path / "main_job" / LOCK_NAME).read_text())["pid"]) or [])
    monkeypatch.setattr(main_job, "print_table", lambda rows: None)
    main_job.main(["--skip-training", "--set", f"run_dir={tmp_path}"])
    assert seen == [os.getpid()] and not (tmp_path / "main_job" / LOCK_NAME).exists()


def test_one_process_may_take_its_lock_twice(tmp_path):
    outer, inner = RunLock(tmp_path), RunLock(tmp_path)
    outer.acquire()
    inner.acquire()
    inner.release()
    assert (tmp_path / LOCK_NAME).exists(), "released while the outer hold lasts"
    outer.release()
    assert not (tmp_path / LOCK_NAME).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_folder_holding_only_a_stale_lock_is_a_fresh_run_folder(tmp_path, capsys):
    write_lock(tmp_path / "run", pid=2 ** 22 + 12345)
    run = selfplay.train(config(tmp_path, "run", "total_steps=128", "eval_every=0"))
    assert (run.checkpoints / "final.pt").exists() and "taking the lock over" in capsys.readouterr().err


def test_sb3_resume_beside_a_live_run_is_refused(tmp_path, holder):
    from training import train_sb3

    train_sb3.train(sb3_config(tmp_path, "total_steps=128", "eval_every=0"))
    proc = holder(tmp_path / "sb3")
    with pytest.raises(RunInUseError, match=f"in use by process {proc.pid}.*--resume would make a second process"):
        train_sb3.train(sb3_config(tmp_path, "total_steps=256", "eval_every=0"), resume=True)


def test_rllib_refuses_a_folder_in_use_before_starting_ray(tmp_path, holder, monkeypatch):
    pytest.importorskip("ray")
    from training import train_rllib
    from training.common.config import load_config

    proc = holder(tmp_path / "rl")
    monkeypatch.setattr(train_rllib, "start_ray", lambda *a: pytest.fail("Ray was started"))
    cfg = load_config(train_rllib.RLlibConfig, None, [f"out={tmp_path / 'rl'}"])
    with pytest.raises(RunInUseError, match=f"in use by process {proc.pid}"):
        train_rllib.train(cfg)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(run_lock.RunFolderError, match="is a file, not a folder"):
        train_rllib.train(load_config(train_rllib.RLlibConfig, None, [f"out={blocker / 'rl'}"]))


@pytest.mark.parametrize("where", ["file", "below_file", "proc"])
def test_a_run_dir_that_cannot_hold_the_run_is_refused_before_anything(tmp_path, where, capsys):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    run_dir = {"file": str(blocker), "below_file": str(blocker / "runs"), "proc": "/proc/tt-no-such"}[where]
    if where == "proc" and not Path("/proc/self").exists():
        pytest.skip("no /proc here")
    argv = [a for s in TINY + [f"run_dir={run_dir}", "name=run", "total_steps=128"] for a in ("--set", s)]
    with pytest.raises(SystemExit) as info:
        selfplay.main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert "cannot be used: " in err.strip().splitlines()[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
