"""Self-play PPO for Three Thirteen, in the manner of CleanRL (the update is ``training/ppo/update.py``).

One network plays every learner seat. Each table (a ``three_thirteen_v0`` AEC env) is, per
game, either a self-play table (the current network in every seat) or a table where the
network holds one random seat and the others are scripted agents or past versions of the
network from a pool. Decisions of every table are batched through the network; each
(table, seat) is its own trajectory, rewarded with what that seat earned between its
decisions (per-round rewards of ``reward_mode``), and advantages follow each trajectory.

    python training/selfplay.py --config configs/selfplay_default.yaml --set total_steps=20000

Writes ``runs/<name>/``: config.yaml, tb/ (TensorBoard), checkpoints/ (``models.checkpoint``
format), eval.json and learning_curve.png (duplicate evaluation against ``eval_opponents``).

``--resume`` continues a stopped run from ``checkpoints/latest.pt`` (``training.common.resume``):
weights, optimiser, learning-rate schedule, counters, every random generator, the opponent
pool, the games in progress (replayed from their seeds and actions), the evaluation history
and TensorBoard. On a CPU a resumed run is bit-identical to one that never stopped (tested).
``--device`` (config key ``device``: auto, cpu, cuda, cuda:K) puts the network and its update on a
GPU; the games stay on the CPU and their observations are moved (``docs/devices.md``).
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from models.checkpoint import CheckpointError, load_checkpoint
from training.common.config import ConfigError, SelfPlayConfig, dump_config
from training.common.device import (check_resume_device, cuda_rng_state, resolve_device,
                             restore_cuda_rng)
from training.ppo.update import Buffer, ppo_update
from training.ppo.loop import (EvalSchedule, build_net, check_not_diverged, evaluate_and_save,
                              log_evaluation, progress_bar)
from training.common.resume import (FROZEN, RESTORE_ERRORS, StopRequested, StopSignals, check_resumable,
                             is_count, is_dict, load_latest, restore_failed,
                             save_latest)
from training.common.trainer_cli import report_end, trainer_main
from training.common.run_utils import RunDir, format_results
from training.ppo.selfplay_tables import LEARNER, SelfPlay, Table  # noqa: F401  (re-exported: their old home)
from tt_env.observation import OBS_VERSION


# ======================================================================== run
TRAINER = "training/selfplay.py"
SELFPLAY_FROZEN = FROZEN + ("num_envs", "opponents")
"""Keys a resumed self-play run keeps: :data:`training.common.resume.FROZEN`, and what its tables were built from."""
STATE_KEYS = {"update": is_count, "play": is_dict}
"""The resume state's own keys (besides ``training.common.resume.COMMON_KEYS``), checked before it is used."""
TENSOR_KEYS = ("optimizer", "torch_rng", "update_rng", "pool")


def train(cfg: SelfPlayConfig, *, resume: bool = False, overwrite: bool = False,
          command: str | None = None) -> RunDir:
    """Run self-play PPO as configured; returns the run directory.

    A new run needs an empty (or absent) folder, or ``overwrite``; ``resume`` continues the
    run in the folder from ``checkpoints/latest.pt``, bit for bit as if it had not stopped.
    Everything is built and checked before anything is written; from then on the run holds
    the folder's lock (``training.common.run_lock``) until it returns. ``command`` is the resume
    command printed when a signal stops the run.
    """
    run = RunDir(cfg.run_dir, cfg.name)
    try:
        return _train(cfg, run, resume=resume, overwrite=overwrite, command=command)
    finally:
        run.release()


def _train(cfg: SelfPlayConfig, run: RunDir, *, resume: bool, overwrite: bool, command: str | None) -> RunDir:
    # ---- seeding: one block, everything derived from cfg.seed (a resumed run restores the states)
    device = resolve_device(cfg.device)
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 1)

    if resume:
        run.check_can_resume()
        tensors, saved = load_latest(run, TRAINER, STATE_KEYS, TENSOR_KEYS)
        check_resumable(saved["config"], cfg, SELFPLAY_FROZEN)
        check_resume_device(saved.get("device_type"), device, cfg.device)
    else:
        run.check_can_start(overwrite)
    net = build_net(cfg, init=not resume).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    play = SelfPlay(cfg, net, rng)
    num_updates = max(1, -(-cfg.total_steps // cfg.rollout_steps))
    step, update, evals = 0, 0, EvalSchedule.start(cfg.eval_every)
    if resume:
        latest, _ = load_checkpoint(run.latest, num_players=cfg.num_players, obs_version=OBS_VERSION)
        try:
            net.load_state_dict(latest.state_dict())
            optimizer.load_state_dict(tensors["optimizer"])
            play.load_state_dict(saved["play"], tensors)
            torch.set_rng_state(tensors["torch_rng"])
            restore_cuda_rng(tensors, device)
            gen.set_state(tensors["update_rng"])
        except CheckpointError:
            raise
        except RESTORE_ERRORS as exc:  # passed check_state, but does not fit these objects
            raise restore_failed(run, exc) from None
        step, update, evals = saved["step"], saved["update"], EvalSchedule.resumed(cfg.eval_every, saved)
        run.history = saved["history"]
        if update > num_updates:
            raise ConfigError(f"total_steps={cfg.total_steps} is below what the run has trained ({step} steps in "
                              f"{update} updates): give a larger total_steps to train it longer")
    next_save, saved_at = step + (cfg.save_every or math.inf), None

    def save() -> None:
        nonlocal next_save, saved_at
        next_save, saved_at = step + (cfg.save_every or math.inf), step
        writer.flush()
        state, pool = play.state_dict()
        save_latest(run, net, cfg, step=step, trainer=TRAINER, state={
            "update": update, **evals.state(), "play": state, "device_type": device.type},
            tensors={"optimizer": optimizer.state_dict(), "torch_rng": torch.get_rng_state(),
                     "update_rng": gen.get_state(), **cuda_rng_state(device), **pool})

    # ---- only now, with everything built, touch the disk
    if resume:
        run.acquire_for_resume()
    else:
        run.create(overwrite)
    dump_config(cfg, run.path / "config.yaml")
    writer = SummaryWriter(str(run.tb), purge_step=step + 1 if resume else None)
    if resume:
        run.write_history()  # evaluations after the saved state are dropped: they will be made again
    else:
        writer.add_text("config", "\n".join(f"{k}: {v}" for k, v in cfg.to_dict().items()))
        save()
    if update >= num_updates and evals.last == step:
        print(f"{run.path}: already trained to total_steps={cfg.total_steps} ({step} steps); nothing to do "
              f"(--set total_steps=N with a larger N trains it longer)")
        writer.close()
        return run

    bar = progress_bar(cfg, step)
    log = bar.write if bar is not None else print
    start, start_step = time.perf_counter(), step
    with StopSignals() as signals:
        while True:
            if not signals.requested and evals.due(step, update >= num_updates):
                t_eval = time.perf_counter()
                try:
                    results = evaluate_and_save(net, cfg, run, step, update >= num_updates, signals, TRAINER)
                except StopRequested:
                    save()
                    break
                start += time.perf_counter() - t_eval  # evaluation time does not count against SPS
                log_evaluation(writer, results, step)
                log(f"step {step}: {format_results(results)}")
                evals.evaluated(step)
                save()
            elif step >= next_save:
                save()
            if update >= num_updates or signals.requested:
                if signals.requested and saved_at != step:
                    save()
                break
            update += 1
            if cfg.anneal_lr:
                optimizer.param_groups[0]["lr"] = cfg.learning_rate * (1.0 - (update - 1) / num_updates)
            buf = Buffer()
            play.collect(buf, cfg.rollout_steps)
            net.train()
            stats = ppo_update(net, optimizer, buf, cfg, gen, train_policy=step >= cfg.critic_warmup_steps)
            net.eval()
            check_not_diverged(net, update)
            step += len(buf)
            sps = (step - start_step) / (time.perf_counter() - start)
            for k, v in stats.items():
                writer.add_scalar(f"losses/{k}", v, step)
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
            writer.add_scalar("charts/SPS", sps, step)
            if play.finished_returns:
                writer.add_scalar("charts/episodic_return", float(np.mean(play.finished_returns)), step)
                play.finished_returns.clear()
            if update % cfg.snapshot_every == 0:
                play.snapshot()
            if bar is not None:
                bar.update(min(step, cfg.total_steps) - bar.n)
                bar.set_postfix(sps=f"{sps:.0f}", ent=f"{stats['entropy']:.2f}")
    if bar is not None:
        bar.close()
    writer.close()
    return report_end(run, step=step, start_step=start_step, seconds=time.perf_counter() - start,
                      total_steps=cfg.total_steps, stopped_by=signals.signum if signals.requested else None,
                      command=command, trainer=TRAINER)


def main(argv: list[str] | None = None) -> None:
    trainer_main(argv, description=__doc__.split("\n\n")[0], config_cls=SelfPlayConfig, prog=f"python {TRAINER}",
                 train=train)


if __name__ == "__main__":
    main()
