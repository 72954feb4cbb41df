"""training.common.tb_writer: a resumed run's purge of TensorBoard steps holds within one second.

TensorBoard reads event files in name order, and in one second the files' counters compare as
text (10 before 9): a purging writer opened in the second of the files it purges could be read
first, and the old steps would stay."""

from __future__ import annotations

import time
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.summary.writer import event_file_writer
from torch.utils.tensorboard import SummaryWriter

from training.common.tb_writer import MAX_WAIT, purging_writer, wait_past_event_files


def scalars(log_dir: Path, tag: str = "x") -> list[tuple[int, float]]:
    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_a_purge_holds_when_the_counters_of_one_second_sort_as_text(tmp_path: Path, monkeypatch) -> None:
    """A stopped run's writer has counter 9, the resumed run's 10: the resumed file must still be
    read after the stopped one, so that its purge drops the stopped run's steps after the save."""
    monkeypatch.setattr(event_file_writer, "_global_uid", event_file_writer.AtomicCounter(9))
    stopped = SummaryWriter(str(tmp_path))
    for step in range(1, 6):
        stopped.add_scalar("x", -1.0 if step >= 3 else 1.0, step)  # steps 3 to 5 were logged after the save
    stopped.close()
    resumed = purging_writer(tmp_path, 3)
    for step in range(3, 7):
        resumed.add_scalar("x", 2.0, step)
    resumed.close()
    names = sorted(p.name for p in tmp_path.glob("events.out.tfevents.*"))
    assert names[-1].endswith(".10") and len(names) == 2  # read last, though "10" < "9" as text
    assert scalars(tmp_path) == [(1, 1.0), (2, 1.0), (3, 2.0), (4, 2.0), (5, 2.0), (6, 2.0)]


def test_it_waits_past_a_file_of_this_second_only(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not an event file")
    start = time.perf_counter()
    wait_past_event_files(tmp_path)  # no event file: no wait
    (tmp_path / f"events.out.tfevents.{int(time.time()) - 5:010d}.host.1.0").touch()
    wait_past_event_files(tmp_path)  # an older one: no wait
    assert time.perf_counter() - start < 0.5
    now = int(time.time())
    (tmp_path / f"events.out.tfevents.{now:010d}.host.name.with.dots.2.1").touch()
    wait_past_event_files(tmp_path)
    assert int(time.time()) > now


def test_a_file_from_a_clock_ahead_costs_at_most_the_longest_wait(tmp_path: Path, monkeypatch) -> None:
    """(The sleep is recorded, not slept: an unbounded wait would be an hour here.)"""
    from training.common import tb_writer

    slept: list[float] = []
    monkeypatch.setattr(tb_writer.time, "sleep", slept.append)
    (tmp_path / f"events.out.tfevents.{int(time.time()) + 3600:010d}.host.1.0").touch()
    wait_past_event_files(tmp_path)
    assert slept == [MAX_WAIT]


def test_a_resumed_ppo_run_opens_a_purging_writer_at_the_saved_step(monkeypatch, tmp_path: Path) -> None:
    """The run loop both PPO trainers share opens its writer through ``purging_writer`` when it
    resumes, at the saved step + 1 (a fresh run, a plain one)."""
    from test_resume import config, sigint_on_call

    from training import selfplay
    from training.ppo import run_loop

    opened: list[int] = []

    def recording(log_dir: Path, step: int) -> SummaryWriter:
        opened.append(step)
        return purging_writer(log_dir, step)

    sigint_on_call(monkeypatch, selfplay, "ppo_update", 2)
    run = selfplay.train(config(tmp_path, "cut"))
    monkeypatch.undo()
    monkeypatch.setattr(run_loop, "purging_writer", recording)
    resumed = selfplay.train(config(tmp_path, "cut"), resume=True)
    assert resumed.stopped_by is None and run.stopped_by is not None
    assert opened == [2 * 128 + 1]  # SIGINT during the second update: it ends, and the run saves at 256


def test_a_resumed_sb3_run_keeps_its_new_steps_when_counters_sort_as_text(monkeypatch, tmp_path: Path) -> None:
    """SB3 resumes in two writers: the purge of the steps after the save, then SB3's own. With
    counters 9 and 10 in one second, SB3's file would be read first and purged; it must open a
    second later."""
    from test_resume import sb3_config, sigint_on_call, tb_scalars

    from training import train_sb3

    sigint_on_call(monkeypatch, train_sb3.RunCallback, "_on_rollout_start", 4)  # in rollout 4: steps 384..512
    run = train_sb3.train(sb3_config(tmp_path))
    monkeypatch.undo()
    assert run.stopped_by is not None
    monkeypatch.setattr(event_file_writer, "_global_uid", event_file_writer.AtomicCounter(9))
    train_sb3.train(sb3_config(tmp_path), resume=True)
    assert [s for s, _ in tb_scalars(run.path, "time/fps", "ppo_1")] == list(range(128, 769, 128))
