"""training.ppo.run_loop.run_updates, driven with stand-in updates: what it logs, at which step,
and the learning speed it reports.

The trainers' own tests compare a resumed run's TensorBoard scalars with an uninterrupted
run's, which a scalar logged with the wrong value or step in both runs alike would pass; here
each value and step is known beforehand."""

from __future__ import annotations

import time
from pathlib import Path

import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from training.common.config import SelfPlayConfig, load_config
from training.common.evaluations import EvalSchedule
from training.common.run_utils import RunDir
from training.ppo import run_loop
from training.ppo.run_loop import Progress, UpdateResult, run_updates

STEPS_PER_UPDATE, UPDATES = 100, 3


def scalars(run: RunDir, tag: str) -> list[tuple[int, float]]:
    acc = EventAccumulator(str(run.tb))
    acc.Reload()
    return [(e.step, round(e.value, 6)) for e in acc.Scalars(tag)]


def run_with_stand_ins(tmp_path: Path, monkeypatch, *, eval_seconds: float = 0.0, update_seconds: float = 0.0,
                       progress: bool = False) -> tuple[RunDir, list]:
    """Three updates of 100 steps (an evaluation after each, the last one final), each update's
    numbers made from its index; returns the run and the progress bar's updates."""
    cfg = load_config(SelfPlayConfig, None, [
        f"run_dir={tmp_path}", "name=loop", f"total_steps={STEPS_PER_UPDATE * UPDATES}", "eval_every=100",
        "save_every=0", f"progress={str(progress).lower()}", "network=mlp", "network_kwargs={hidden_sizes: [4]}"])
    evaluations = []

    def evaluate(net, cfg, run, step, final, signals, trainer) -> dict:
        evaluations.append((step, final))
        time.sleep(eval_seconds)
        return {}

    monkeypatch.setattr(run_loop, "evaluate_and_save", evaluate)
    bars: list = []
    real_bar = run_loop.progress_bar
    monkeypatch.setattr(run_loop, "progress_bar", lambda cfg, step: bars.append(real_bar(cfg, step)) or bars[-1])
    progress_state = Progress(0, 0, EvalSchedule.start(cfg.eval_every))

    def update_once() -> UpdateResult:
        time.sleep(update_seconds)
        k = progress_state.update
        stats = {"value_loss": 0.5 * k, **({"entropy": 1.0 + k} if k != 2 else {})}  # none: the bar shows nan
        return UpdateResult(STEPS_PER_UPDATE, stats, 0.001 * k, {"episodic_return": -2.0 * k} if k != 2 else {})

    run = run_updates(cfg, RunDir(cfg.run_dir, cfg.name), torch.nn.Linear(2, 2), progress_state, resume=False,
                      overwrite=False, trainer="training/selfplay.py", command=None, save_state=lambda: None,
                      update_once=update_once, done=lambda: progress_state.update >= UPDATES)
    assert evaluations == [(100, False), (200, False), (300, True)] and progress_state.step == 300
    return run, bars


def test_each_update_s_numbers_are_logged_at_its_step(tmp_path: Path, monkeypatch) -> None:
    run, _ = run_with_stand_ins(tmp_path, monkeypatch)
    assert scalars(run, "losses/value_loss") == [(100, 0.5), (200, 1.0), (300, 1.5)]
    assert scalars(run, "losses/entropy") == [(100, 2.0), (300, 4.0)]
    assert scalars(run, "charts/learning_rate") == [(100, 0.001), (200, 0.002), (300, 0.003)]
    assert scalars(run, "charts/episodic_return") == [(100, -2.0), (300, -6.0)]  # none finished in update 2
    assert [step for step, _ in scalars(run, "charts/SPS")] == [100, 200, 300]


def test_the_learning_speed_leaves_the_evaluations_out(tmp_path: Path, monkeypatch) -> None:
    """Updates of 10 ms and evaluations of half a second: up to 10,000 steps/s, not about 300."""
    run, _ = run_with_stand_ins(tmp_path, monkeypatch, eval_seconds=0.5, update_seconds=0.01)
    assert 1_000 < run.learn_sps < 10_001
    assert all(1_000 < sps for _, sps in scalars(run, "charts/SPS"))


def test_the_progress_bar_follows_the_steps(tmp_path: Path, monkeypatch) -> None:
    _, bars = run_with_stand_ins(tmp_path, monkeypatch, progress=True)
    (bar,) = bars
    assert bar.n == bar.total == 300 and bar.postfix is not None and "ent=4.00" in bar.postfix
