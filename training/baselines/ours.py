"""The four PPO baselines of this repository's own training scripts, driven through their public functions.

* ``ppo``: ``training/selfplay.py`` (``training.selfplay.train``), from scratch: no ``init_checkpoint``,
  no ``expert_features``, and CardNet without ``solver_features`` (whose learned shortcuts would
  start it as a soft one-step greedy player) or the plain ``mlp``. Trained in chunks with
  ``--resume`` (bit-identical to one uninterrupted run), so ``anneal_lr`` must be off: its
  schedule runs to each chunk's ``total_steps``.
* ``batch-ppo``: ``training/batch_ppo.py`` (``training.batch_ppo.train``), PPO on the batched engine,
  from scratch as ``ppo`` is, and in chunks with ``--resume`` the same way (bit-identical).
* ``sb3-maskable-ppo``: ``training/train_sb3.py`` (``training.train_sb3.train``), in chunks with
  ``--resume`` (its environments restart their games at each chunk).
* ``rllib-ppo``: ``training/train_rllib.py`` (``training.train_rllib.train``), pure self-play, in one
  call with an export at every evaluation point (it has no ``--resume``).

These three continue an unfinished run on the benchmark's ``--resume`` (:meth:`~.common.Trainer.continue_run`:
the script resumes from its run folder); RLlib's starts again.

A section of ``configs/baselines.yaml`` holds the script's own config keys; the keys the benchmark
sets itself (run folder, seed, player count, steps, the scripts' own evaluations) are refused there.
"""

from __future__ import annotations

import abc
import math
from pathlib import Path
from typing import Any

from training.common.config import ConfigError, SB3Config, SelfPlayConfig, from_dict

from .common import RunContext, Trainer

SCRIPT_EVAL = {"eval_every": 0, "eval_deals": 1, "eval_opponents": ["greedy-v0"]}
"""The scripts' own end-of-chunk evaluation, kept minimal: the benchmark evaluates every point itself."""
BENCH_KEYS = ("name", "run_dir", "seed", "num_players", "total_steps", "eval_every", "eval_deals", "eval_opponents",
              "progress", "torch_threads", "out", "iterations", "export_every", "device")
"""Keys the benchmark sets in every run's config (refused in a section of the benchmark config)."""


def _check_section(algo: str, params: dict[str, Any]) -> None:
    taken = sorted(set(params) & set(BENCH_KEYS))
    if taken:
        raise ConfigError(f"hyperparameters.{algo}: {taken} are set by the benchmark (its steps, seeds, evaluation and "
                          f"folders): remove them")


def _check_from_scratch(algo: str, params: dict[str, Any]) -> None:
    """Refuse a section of one of our PPO trainers that does not train from scratch, or in chunks."""
    _check_section(algo, params)
    if params.get("init_checkpoint") is not None:
        raise ConfigError(f"hyperparameters.{algo}: init_checkpoint must be null (the baselines train from scratch)")
    kwargs = dict(params.get("network_kwargs") or {})
    if kwargs.get("expert_features") or kwargs.get("exact_last_turn"):
        raise ConfigError(f"hyperparameters.{algo}: expert_features/exact_last_turn are not from scratch (they start "
                          f"the network as expert-v0): remove them")
    if params.get("network", "cardnet") == "cardnet" and kwargs.get("solver_features", True):
        raise ConfigError(f"hyperparameters.{algo}: CardNet needs network_kwargs.solver_features: false (its solver "
                          f"shortcuts start it as a soft greedy player, not from scratch)")
    if params.get("anneal_lr", True):
        raise ConfigError(f"hyperparameters.{algo}: anneal_lr must be false (the benchmark trains in chunks with "
                          f"--resume, and the schedule would restart at each chunk)")


def selfplay_config(params: dict[str, Any], ctx: RunContext, total_steps: int) -> SelfPlayConfig:
    """The ``training/selfplay.py`` config of one chunk; refuses anything that is not from scratch."""
    _check_from_scratch("ppo", params)
    data = {**params, "name": "ppo", "run_dir": str(ctx.work_dir), "seed": ctx.seed, "num_players": ctx.num_players,
            "total_steps": total_steps, "progress": False, "torch_threads": ctx.torch_threads, "device": ctx.device,
            **SCRIPT_EVAL}
    return from_dict(SelfPlayConfig, data)


def batch_ppo_config(params: dict[str, Any], ctx: RunContext, total_steps: int) -> Any:
    """The ``training/batch_ppo.py`` config of one chunk; refuses anything that is not from scratch."""
    from training.ppo.batch_config import BatchPPOConfig

    _check_from_scratch("batch-ppo", params)
    data = {**params, "name": "batch_ppo", "run_dir": str(ctx.work_dir), "seed": ctx.seed,
            "num_players": ctx.num_players, "total_steps": total_steps, "progress": False,
            "torch_threads": ctx.torch_threads, "device": ctx.device, **SCRIPT_EVAL}
    return from_dict(BatchPPOConfig, data)


def sb3_config(params: dict[str, Any], ctx: RunContext, total_steps: int) -> SB3Config:
    """The ``training/train_sb3.py`` config of one chunk."""
    _check_section("sb3-maskable-ppo", params)
    data = {**params, "name": "sb3", "run_dir": str(ctx.work_dir), "seed": ctx.seed, "num_players": ctx.num_players,
            "total_steps": total_steps, "progress": False, "torch_threads": ctx.torch_threads, "device": ctx.device,
            **SCRIPT_EVAL}
    return from_dict(SB3Config, data)


def rllib_config(params: dict[str, Any], ctx: RunContext, budget: int, points: int) -> Any:
    """The ``training/train_rllib.py`` config of a whole run: an export at each of ``points`` evaluation points."""
    from training.train_rllib import RLlibConfig

    _check_section("rllib-ppo", params)
    if params.get("opponent_mix", 0.0):
        raise ConfigError("hyperparameters.rllib-ppo: opponent_mix must be 0 (pure self-play: every sampled step is a "
                          "learner decision, which is what the benchmark counts)")
    batch = params.get("train_batch_size", RLlibConfig.train_batch_size)
    every = max(1, math.ceil(budget / (points * batch))) if isinstance(batch, int) and batch > 0 else 1
    return from_dict(RLlibConfig, {**params, "name": "rllib", "out": str(ctx.work_dir / "rllib"), "seed": ctx.seed,
                                   "num_players": ctx.num_players, "iterations": every * points,
                                   "export_every": every, "torch_threads": ctx.torch_threads})


class _ChunkedScriptTrainer(Trainer):
    """A script with ``--resume``: each chunk continues the run to a larger ``total_steps``."""

    @abc.abstractmethod
    def _train(self, cfg: Any, resume: bool) -> Any:
        """Run the script's training to ``cfg.total_steps`` (continuing the run when ``resume``)."""

    @abc.abstractmethod
    def _config(self, total_steps: int) -> Any:
        """The script's config for a run to ``total_steps`` (validated)."""

    def __init__(self, params: dict[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self._config(1)  # validate now, before anything trains
        self.final: Path | None = None
        self.resuming = False

    def continue_run(self, steps: int, learn_seconds: float) -> bool:
        """The script resumes from the run folder's saved state (``latest.resume.json``, written every
        ``save_every`` steps, so at or after the last evaluation point); without one, False. The
        steps trained after ``steps`` by the stopped process count as learning at this process's rate."""
        from training.common.resume import STATE

        if not any(self.ctx.work_dir.glob(f"*/checkpoints/latest.{STATE}")):
            return False
        self.steps, self.learn_seconds, self.resuming = steps, learn_seconds, True
        return True

    def train_until(self, steps: int) -> None:
        from models.checkpoint import read_metadata

        cfg = self._config(steps)
        run = self._train(cfg, resume=self.final is not None or self.resuming)
        if run.stopped_by is not None:
            raise KeyboardInterrupt(f"the run was stopped by signal {run.stopped_by}")
        self.final = run.checkpoints / "final.pt"
        done = int(read_metadata(self.final)["training_steps"])
        if done > self.steps and run.learn_sps:
            self.learn_seconds += (done - self.steps) / run.learn_sps
        self.steps = done

    def agent(self) -> Any:
        from models.agent_loader import load_agent

        if self.final is None:
            raise RuntimeError("agent() before any training")
        return load_agent(self.final, self.ctx.rules)


class SelfPlayTrainer(_ChunkedScriptTrainer):
    """``ppo``: our PPO, ``training/selfplay.py``."""

    def _config(self, total_steps: int) -> SelfPlayConfig:
        return selfplay_config(self.params, self.ctx, total_steps)

    def _train(self, cfg: SelfPlayConfig, resume: bool) -> Any:
        from training.selfplay import train

        return train(cfg, resume=resume)


class BatchPPOTrainer(_ChunkedScriptTrainer):
    """``batch-ppo``: PPO on the batched engine, ``training/batch_ppo.py``."""

    def _config(self, total_steps: int) -> Any:
        return batch_ppo_config(self.params, self.ctx, total_steps)

    def _train(self, cfg: Any, resume: bool) -> Any:
        from training.batch_ppo import train

        return train(cfg, resume=resume)


class SB3Trainer(_ChunkedScriptTrainer):
    """``sb3-maskable-ppo``: sb3-contrib MaskablePPO, ``training/train_sb3.py``."""

    def _config(self, total_steps: int) -> SB3Config:
        return sb3_config(self.params, self.ctx, total_steps)

    def _train(self, cfg: SB3Config, resume: bool) -> Any:
        from training.train_sb3 import train

        return train(cfg, resume=resume)


class RLlibTrainer(Trainer):
    """``rllib-ppo``: RLlib PPO in pure self-play, ``training/train_rllib.py``, one call, an export per point."""

    def __init__(self, params: dict[str, Any], ctx: RunContext, budget: int, points: int) -> None:
        super().__init__(params, ctx)
        self.cfg = rllib_config(params, ctx, budget, points)
        self.exports: list[tuple[int, float, Path]] = []
        self.current: Path | None = None

    def train_until(self, steps: int) -> None:
        from training.train_rllib import train

        if not self.exports:
            summary = train(self.cfg)
            seconds = 0.0
            every = self.cfg.export_every
            for row in summary["iterations"]:
                seconds += row["seconds"]
                it = row["iteration"]
                if it % every == 0:
                    name = "final.pt" if it == self.cfg.iterations else f"iter_{it:06d}.pt"
                    self.exports.append((row["env_steps_total"], seconds, self.cfg.run_path / name))
        for done, seconds, path in self.exports:
            if done >= steps or path == self.exports[-1][2]:
                self.steps, self.learn_seconds, self.current = done, seconds, path
                return

    def agent(self) -> Any:
        from models.agent_loader import load_agent

        if self.current is None:
            raise RuntimeError("agent() before any training")
        return load_agent(self.current, self.ctx.rules)
