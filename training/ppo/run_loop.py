"""The outer loop of both PPO trainers (``training/selfplay.py``, ``training/batch_ppo.py``).

A trainer builds and checks everything first (network, optimiser, tables, a resumed state);
:func:`run_updates` then opens the run's files and alternates evaluations, saves and PPO updates
until the run is done or a signal stops it (saved, with the command that resumes it). What
differs between the trainers (how a rollout is played and learned, what is saved, when the run
is done) comes in as three callables; the schedule of evaluations and saves, the TensorBoard
scalars, the progress bar and the end report are kept here, once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from torch.utils.tensorboard import SummaryWriter

from models.networks import PolicyValueNet
from training.common.config import dump_config
from training.common.evaluations import EvalSchedule, evaluate_and_save, log_evaluation
from training.common.resume import StopRequested, StopSignals
from training.common.run_utils import RunDir, format_results
from training.common.tb_writer import purging_writer
from training.common.trainer_cli import report_end
from training.ppo.loop import check_not_diverged, progress_bar


@dataclass
class Progress:
    """Where a run is: learner steps taken, PPO updates made, and when it evaluates next."""

    step: int
    update: int
    evals: EvalSchedule


@dataclass
class UpdateResult:
    """What one rollout and its PPO update did: ``steps`` learner steps, the update's ``stats``
    (logged as ``losses/<name>``), the ``learning_rate`` it used, and ``scalars`` of the finished
    episodes (``charts/<name>``)."""

    steps: int
    stats: dict[str, float]
    learning_rate: float
    scalars: dict[str, float] = field(default_factory=dict)


def run_updates(cfg: Any, run: RunDir, net: PolicyValueNet, progress: Progress, *, resume: bool, overwrite: bool,
                trainer: str, command: str | None, save_state: Callable[[], None],
                update_once: Callable[[], UpdateResult], done: Callable[[], bool]) -> RunDir:
    """Open the run's files, then evaluate, save and update until ``done()`` or a stop; returns ``run``.

    ``save_state()`` writes ``checkpoints/latest.pt`` at ``progress``; ``update_once()`` plays a
    rollout and learns from it (``progress.update`` already counts it); ``done()`` says whether
    the run has trained enough. An evaluation is due every ``eval_every`` steps and once at the
    end; a save every ``save_every`` steps, after each evaluation, and when a signal stops the run.
    """
    # ---- only now, with everything built and checked, touch the disk
    if resume:
        run.acquire_for_resume()
    else:
        run.create(overwrite)
    writer = purging_writer(run.tb, progress.step + 1) if resume else SummaryWriter(str(run.tb))
    next_save, saved_at = progress.step + (cfg.save_every or math.inf), None

    def save() -> None:
        nonlocal next_save, saved_at
        next_save, saved_at = progress.step + (cfg.save_every or math.inf), progress.step
        writer.flush()
        save_state()

    if resume:
        run.write_history()  # evaluations after the saved state are dropped: they will be made again
    else:
        writer.add_text("config", "\n".join(f"{k}: {v}" for k, v in cfg.to_dict().items()))
        save()
    if done() and progress.evals.last == progress.step:
        print(f"{run.path}: already trained to total_steps={cfg.total_steps} ({progress.step} steps); nothing to do "
              f"(--set total_steps=N with a larger N trains it longer)")
        writer.close()
        return run  # (its config.yaml still says what it was trained with)
    dump_config(cfg, run.path / "config.yaml")

    bar = progress_bar(cfg, progress.step)
    log = bar.write if bar is not None else print
    start, start_step = time.perf_counter(), progress.step
    with StopSignals() as signals:
        while True:
            finished = done()
            if not signals.requested and progress.evals.due(progress.step, finished):
                t_eval = time.perf_counter()
                try:
                    results = evaluate_and_save(net, cfg, run, progress.step, finished, signals, trainer)
                except StopRequested:
                    save()
                    break
                start += time.perf_counter() - t_eval  # evaluation time does not count against SPS
                log_evaluation(writer, results, progress.step)
                log(f"step {progress.step}: {format_results(results)}")
                progress.evals.evaluated(progress.step)
                save()
            elif progress.step >= next_save:
                save()
            if finished or signals.requested:
                if signals.requested and saved_at != progress.step:
                    save()
                break
            progress.update += 1
            result = update_once()
            check_not_diverged(net, progress.update)
            progress.step += result.steps
            sps = (progress.step - start_step) / (time.perf_counter() - start)
            for k, v in result.stats.items():
                writer.add_scalar(f"losses/{k}", v, progress.step)
            writer.add_scalar("charts/learning_rate", result.learning_rate, progress.step)
            writer.add_scalar("charts/SPS", sps, progress.step)
            for k, v in result.scalars.items():
                writer.add_scalar(f"charts/{k}", v, progress.step)
            if bar is not None:
                bar.update(min(progress.step, cfg.total_steps) - bar.n)
                bar.set_postfix(sps=f"{sps:.0f}", ent=f"{result.stats.get('entropy', float('nan')):.2f}")
    if bar is not None:
        bar.close()
    writer.close()
    return report_end(run, step=progress.step, start_step=start_step, seconds=time.perf_counter() - start,
                      total_steps=cfg.total_steps, stopped_by=signals.signum if signals.requested else None,
                      command=command, trainer=trainer)
