"""``training/long_run.py``: chunks that resume, a store that carries the run to a fresh folder, the report."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from training import long_run
from training.common import long_run_report
from training.common import run_lock

CHUNKS = long_run.CHUNKS_FILE

TINY = ["num_tables=8", "rollout_steps=12", "num_minibatches=2", "update_epochs=1", "eval_every=300",
        "save_every=100", "eval_deals=1", "eval_opponents=[random-v0]", "progress=false", "rules.rounds=[1, 2]",
        "network_kwargs={channels: 8, hidden: 16}", "device=cpu", "torch_threads=1", "run_dir=runs", "name=t"]


def run(*extra: str) -> int:
    argv = [x for item in TINY for x in ("--set", item)]
    return long_run.main(argv + ["--store", "store", *extra])


def chunks() -> list[dict]:
    return long_run_report.read_chunks(Path("store/t"))


def test_chunks_resume_and_a_fresh_folder_continues_from_the_store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run("--chunk-steps", "300", "--until", "600") == 0
    first = chunks()
    assert [c["from_step"] for c in first] == [0, first[0]["to_step"]]
    assert first[0]["to_step"] >= 300 and first[1]["to_step"] >= 600
    assert "--resume" not in first[0]["command"] and first[1]["command"].endswith("--resume")
    stored = json.loads(Path("store/t/checkpoints/latest.json").read_text())
    assert stored["training_steps"] == first[1]["to_step"]
    assert torch.equal(torch.load("store/t/checkpoints/latest.pt", weights_only=True)["embed.weight"],
                       torch.load("runs/t/checkpoints/latest.pt", weights_only=True)["embed.weight"])
    evaluated = sorted(p.name for p in Path("runs/t/checkpoints").glob("step_*.pt"))
    assert evaluated and evaluated == sorted(p.name for p in Path("store/t/checkpoints").glob("step_*.pt"))
    for name in ("config.yaml", "eval.json", "checkpoints/latest.resume.json"):
        assert (Path("store/t") / name).exists()

    # a new machine: no run folder, only the store (as committed to git)
    for path in sorted(Path("runs").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    Path("runs").rmdir()
    assert run("--chunk-steps", "300", "--until", "900") == 0
    assert "restored 'runs/t' from 'store/t'" in capsys.readouterr().out
    after = chunks()
    assert len(after) == 3 and after[2]["from_step"] == first[1]["to_step"] and after[2]["to_step"] >= 900
    assert after[2]["command"].endswith("--resume")
    history = json.loads(Path("store/t/eval.json").read_text())
    assert [h["step"] for h in history][:2] == [first[0]["to_step"], first[1]["to_step"]]

    # the report: one row per evaluation, wall time from the chunks, and the two-panel curve
    capsys.readouterr()
    assert run("--report") == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0] == "| steps | wall time | vs random-v0 |" and len(table) == 2 + len(history) + 1
    assert Path("store/t/curve.png").stat().st_size > 0


def test_a_run_started_again_in_the_folder_is_not_joined_to_the_store(tmp_path, monkeypatch, capsys):
    """A run started again with --overwrite, ahead of the store, had its chunks copied into the
    store beside the first run's: two runs in one history."""
    monkeypatch.chdir(tmp_path)
    assert run("--chunk-steps", "300", "--until", "300") == 0
    history = json.loads(Path("runs/t/eval.json").read_text())
    history[0]["results"][0]["score_diff"] += 1.0  # what another run's first evaluation looks like
    Path("runs/t/eval.json").write_text(json.dumps(history))
    stored = Path("store/t/eval.json").read_text()
    with pytest.raises(SystemExit) as exc:
        run("--until", "600")
    assert exc.value.code == 2
    assert (f"holds another run than its store 'store/t': their evaluations differ at step {history[0]['step']}; "
            f"move the run folder away") in capsys.readouterr().err
    assert Path("store/t/eval.json").read_text() == stored and len(chunks()) == 1


def test_a_run_folder_behind_its_store_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run("--chunk-steps", "300", "--until", "300") == 0
    sidecar = Path("store/t/checkpoints/latest.json")
    meta = json.loads(sidecar.read_text())
    meta["training_steps"] += 1000
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(SystemExit) as exc:
        run("--until", "2000")
    assert exc.value.code == 2
    assert "is at step" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--set", "total_steps=5"], "use --until N"),
    (["--chunk-steps", "0"], "--chunk-steps 0 is not allowed"),
    (["--until", "0"], "--until 0 is not allowed"),
    (["--report"], "holds no evaluation yet"),
    (["--device", "gpu"], "device='gpu' is not allowed: use auto, cpu, cuda or cuda:K"),
])
def test_bad_arguments_are_refused_in_one_line(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        run(*args)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_chunk_targets_and_wall_time():
    assert [long_run.next_target(s, 1000, 2500) for s in (0, 999, 1000, 1003, 2400)] == [1000, 1000, 2000, 2000, 2500]
    parts = [{"from_step": 0, "to_step": 100, "wall_s": 10.0}, {"from_step": 100, "to_step": 300, "wall_s": 40.0}]
    assert long_run_report.wall_at(parts, 0) == 0.0
    assert long_run_report.wall_at(parts, 100) == 10.0
    assert long_run_report.wall_at(parts, 200) == 30.0
    assert long_run_report.wall_at(parts, 300) == 50.0
    assert long_run_report.wall_at(parts, 301) is None


def test_a_report_cell_gives_an_interval_only_where_there_is_one():
    assert long_run_report.report_cell({"score_diff": -1.25, "ci95": 0.84}) == "-1.2 ± 0.8"
    for none in (None, float("nan")):  # one deal: no interval, not a false ± 0.0
        assert long_run_report.report_cell({"score_diff": 3.0, "ci95": none}) == "+3.0 (no interval)"


def test_a_damaged_store_is_named_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    store = Path("store/t")
    (store / "checkpoints").mkdir(parents=True)
    sidecar = store / "checkpoints" / "latest.json"
    sidecar.write_text(json.dumps({"training_steps": 10, "attachments": {"a": {"file": "../../elsewhere.pt"}}}))
    with pytest.raises(SystemExit):
        run("--until", "20")
    assert "only plain file names beside it are allowed" in capsys.readouterr().err
    (store / "eval.json").write_text("[{\"step\": 1}]")
    with pytest.raises(SystemExit):
        run("--report")
    assert "is not a run's evaluation history" in capsys.readouterr().err
    (store / CHUNKS).write_text("{\"from_step\": 0}\n")
    with pytest.raises(SystemExit):
        run("--report")
    assert "line 1 is not a chunk record" in capsys.readouterr().err


@pytest.mark.parametrize("blocker", ["store", "store/t"])
def test_a_store_that_cannot_be_written_is_refused_before_training(tmp_path, monkeypatch, capsys, blocker):
    monkeypatch.chdir(tmp_path)
    Path(blocker).parent.mkdir(parents=True, exist_ok=True)
    Path(blocker).write_text("not a folder")
    with pytest.raises(SystemExit) as exc:
        run("--until", "300")
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--store store: the run's store 'store/t' cannot be written" in err and "is a file" in err
    assert not Path("runs").exists()  # refused before a trainer started


@pytest.fixture
def live_process():
    """A process that runs until the test ends (to hold a run's lock)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def test_a_run_locked_by_a_live_process_is_refused_before_training(tmp_path, monkeypatch, capsys, live_process):
    monkeypatch.chdir(tmp_path)
    Path("runs/t").mkdir(parents=True)
    Path("runs/t", run_lock.LOCK_NAME).write_text(json.dumps({
        "format": run_lock.LOCK_FORMAT, "pid": live_process.pid, "host": socket.gethostname(), "started": "now",
        "process_start": run_lock._process_start(live_process.pid), "command": "another long_run", "token": "x"}))
    with pytest.raises(SystemExit) as exc:
        run("--until", "300")
    assert exc.value.code == 2
    assert f"is in use by process {live_process.pid}" in capsys.readouterr().err
    assert not Path("store").exists() and sorted(Path("runs/t").iterdir()) == [Path("runs/t/run.lock")]


FAKE_REFUSED_TRAINER = """
import json, pathlib, sys
ckpt = pathlib.Path("runs/t/checkpoints")  # another run, which took the lock first, saves meanwhile
ckpt.mkdir(parents=True, exist_ok=True)
(ckpt / "latest.pt").write_bytes(b"weights of the other run")
(ckpt / "latest.json").write_text(json.dumps({"training_steps": 500, "attachments": {}}))
print("error: run folder 'runs/t' is in use by process 1 on host h: ...", file=sys.stderr)
sys.exit(2)
"""


def test_a_trainer_refused_by_the_lock_leaves_the_store_alone(tmp_path, monkeypatch, capsys):
    # the run is free when long_run looks, but another run takes it before the chunk's trainer starts
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(long_run, "chunk_command", lambda *a: [sys.executable, "-c", FAKE_REFUSED_TRAINER])
    assert run("--until", "1000") == 2
    assert "nothing copied to the store, no chunk recorded" in capsys.readouterr().out
    assert not Path("store").exists()


def test_the_learning_rate_anneals_over_the_whole_run_not_each_chunk(tmp_path, monkeypatch, capsys):
    """Each chunk passes its own end as ``total_steps``; with ``anneal_end_step`` null the learning
    rate fell to 0 at the end of every chunk. The chunks now anneal to the run's end (``--until``),
    and selfplay, which fixes no window in steps, is refused with ``anneal_lr: true``."""
    monkeypatch.chdir(tmp_path)
    commands = []
    monkeypatch.setattr(long_run, "run_trainer", lambda cmd, signals: commands.append(cmd) or 1)
    assert run("--chunk-steps", "300", "--until", "600") == 1
    assert commands[0][commands[0].index("anneal_end_step=600") - 1] == "--set"
    commands.clear()
    assert run("--chunk-steps", "300", "--until", "600", "--set", "anneal_end_step=650") == 1
    assert not any("anneal_end_step=600" in part for part in commands[0])
    with pytest.raises(SystemExit) as exit_info:  # steps past the window would learn nothing
        run("--chunk-steps", "300", "--until", "600", "--set", "anneal_end_step=450")
    assert exit_info.value.code == 2
    assert ("--until 600 is not allowed: use an int up to anneal_end_step (450) with anneal_lr: the learning rate is 0 "
            "from there") in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        long_run.main(["--trainer", "selfplay", "--store", "store", "--set", "run_dir=runs"])
    assert exit_info.value.code == 2
    assert "anneal_lr: true anneals over each chunk's total_steps" in capsys.readouterr().err
