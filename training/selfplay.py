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

import numpy as np
import torch

from models.checkpoint import load_checkpoint
from training.common.config import ConfigError, SelfPlayConfig
from training.common.device import check_resume_device, cuda_rng_state, resolve_device, restore_cuda_rng
from training.common.evaluations import EvalSchedule
from training.common.resume import FROZEN, check_resumable, is_count, is_dict, load_latest, restoring, save_latest
from training.common.run_utils import RunDir
from training.common.trainer_cli import trainer_main
from training.ppo.loop import build_net
from training.ppo.run_loop import Progress, UpdateResult, run_updates
from training.ppo.selfplay_tables import LEARNER, SelfPlay, Table  # noqa: F401  (re-exported: their old home)
from training.ppo.update import Buffer, ppo_update
from tt_env.observation import OBS_VERSION

# ======================================================================== run
TRAINER = "training/selfplay.py"
SELFPLAY_FROZEN = FROZEN + ("num_envs", "opponents", "rollout_steps")
"""Keys a resumed self-play run keeps: :data:`training.common.resume.FROZEN`, what its tables were built from, and
its update size (its progress and learning-rate schedule count updates)."""
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
        with restoring(run):
            net.load_state_dict(latest.state_dict())
            optimizer.load_state_dict(tensors["optimizer"])
            play.load_state_dict(saved["play"], tensors)
            torch.set_rng_state(tensors["torch_rng"])
            restore_cuda_rng(tensors, device)
            gen.set_state(tensors["update_rng"])
        step, update, evals = saved["step"], saved["update"], EvalSchedule.resumed(cfg.eval_every, saved)
        run.history = saved["history"]
        if update > num_updates:
            raise ConfigError(f"total_steps={cfg.total_steps} is below what the run has trained ({step} steps in "
                              f"{update} updates): give a larger total_steps to train it longer")
    progress = Progress(step, update, evals)

    def save_state() -> None:
        state, pool = play.state_dict()
        save_latest(run, net, cfg, step=progress.step, trainer=TRAINER, state={
            "update": progress.update, **progress.evals.state(), "play": state, "device_type": device.type},
            tensors={"optimizer": optimizer.state_dict(), "torch_rng": torch.get_rng_state(),
                     "update_rng": gen.get_state(), **cuda_rng_state(device), **pool})

    def update_once() -> UpdateResult:
        if cfg.anneal_lr:
            optimizer.param_groups[0]["lr"] = cfg.learning_rate * (1.0 - (progress.update - 1) / num_updates)
        buf = Buffer()
        play.collect(buf, cfg.rollout_steps)
        net.train()
        stats = ppo_update(net, optimizer, buf, cfg, gen, train_policy=progress.step >= cfg.critic_warmup_steps)
        net.eval()
        scalars = {"episodic_return": float(np.mean(play.finished_returns))} if play.finished_returns else {}
        play.finished_returns.clear()
        if progress.update % cfg.snapshot_every == 0:
            play.snapshot()
        return UpdateResult(len(buf), stats, optimizer.param_groups[0]["lr"], scalars)

    return run_updates(cfg, run, net, progress, resume=resume, overwrite=overwrite, trainer=TRAINER, command=command,
                       save_state=save_state, update_once=update_once, done=lambda: progress.update >= num_updates)


def main(argv: list[str] | None = None) -> None:
    trainer_main(argv, description=__doc__.split("\n\n")[0], config_cls=SelfPlayConfig, prog=f"python {TRAINER}",
                 train=train)


if __name__ == "__main__":
    main()
