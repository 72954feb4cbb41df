"""One run of the baselines benchmark: train in chunks, evaluate at each point, save the result as it goes.

Files in the benchmark folder ``OUT``: ``OUT/runs/<algo>-seed<s>/`` (whatever the framework
writes), ``OUT/results/<algo>-seed<s>.partial.json`` (rewritten after every evaluation while the
run goes on) and ``OUT/results/<algo>-seed<s>.json`` (the finished run; a run with this file is
skipped by ``--resume``). An unfinished run that reached an evaluation point goes on from there on
``--resume`` when its trainer can (:meth:`~.common.Trainer.continue_run`: our PPO scripts and
MaskablePPO, which resume from their run folders; ``batch-ppo`` and ``ppo`` exactly as if never
stopped); any other starts again from scratch.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tt_env.engine.rules import Rules
from tt_env.jsonio import write_json

from . import make_trainer
from .common import RunContext
from .config import EVAL_SEED_BASE, BaselinesConfig, algo_device


def run_name(algo: str, seed: int) -> str:
    return f"{algo}-seed{seed}"


def result_path(out: Path, algo: str, seed: int, partial: bool = False) -> Path:
    return out / "results" / (run_name(algo, seed) + (".partial.json" if partial else ".json"))


def run_one(cfg: BaselinesConfig, algo: str, seed: int, out: Path,
            log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train ``algo`` with ``seed`` for ``cfg.steps``, evaluating at ``cfg.eval_steps()``; returns the result."""
    from training.common.run_utils import evaluate_agent

    work = out / "runs" / run_name(algo, seed)
    ctx = RunContext(seed=seed, num_players=cfg.num_players, work_dir=work, torch_threads=cfg.torch_threads,
                     device=algo_device(cfg, algo))
    eval_rules = Rules(num_players=cfg.num_players)
    result: dict[str, Any] = {"algo": algo, "seed": seed, "status": "running", "eval_seed": EVAL_SEED_BASE + seed,
                              "hyperparameters": cfg.params(algo), "device": ctx.device, "evaluations": [],
                              "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    earlier = unfinished_result(out, algo, seed, cfg) if work.exists() else None
    if earlier is None and work.exists():
        shutil.rmtree(work)  # an unfinished run from before, with nothing to go on from: start it again
    work.mkdir(parents=True, exist_ok=True)
    (out / "results").mkdir(parents=True, exist_ok=True)
    import torch

    torch.set_num_threads(cfg.torch_threads)
    trainer = make_trainer(algo, cfg.params(algo), ctx, cfg.steps, cfg.eval_points)
    wall_before = 0.0
    if earlier is not None:
        last = earlier["evaluations"][-1]
        if trainer.continue_run(last["step"], last["learn_seconds"]):
            result.update(evaluations=earlier["evaluations"], started=earlier.get("started", result["started"]),
                          continued=[*earlier.get("continued", []), time.strftime("%Y-%m-%dT%H:%M:%S%z")])
            wall_before = float(last["wall_seconds"])
            log(f"{run_name(algo, seed)}: continuing from step {last['step']}")
        else:  # this trainer cannot go on: start again in an empty folder
            trainer.close()
            shutil.rmtree(work)
            work.mkdir(parents=True)
            trainer = make_trainer(algo, cfg.params(algo), ctx, cfg.steps, cfg.eval_points)
    start = time.perf_counter() - wall_before
    try:
        for target in cfg.eval_steps():
            if result["evaluations"] and result["evaluations"][-1]["step"] >= target:
                continue  # evaluated before this process started
            trainer.train_until(target)
            if result["evaluations"] and result["evaluations"][-1]["step"] == trainer.steps:
                continue  # the last chunk already passed this point (a whole game, a whole rollout)
            t_eval = time.perf_counter()
            evals = evaluate_agent(trainer.agent(), cfg.eval_opponents, eval_rules, cfg.eval_deals,
                                   seed=EVAL_SEED_BASE + seed, batch_size=cfg.eval_batch_size)
            point = {"step": trainer.steps, "learn_seconds": trainer.learn_seconds,
                     "wall_seconds": time.perf_counter() - start, "eval_seconds": time.perf_counter() - t_eval,
                     "results": [r.to_dict() for r in evals]}
            result["evaluations"].append(point)
            log(f"{run_name(algo, seed)}: step {trainer.steps}, {trainer.learn_seconds:.0f} s learning: "
                + "; ".join(f"vs {r.opponent} {r.score_diff:+.1f} ± {r.ci95:.1f}" for r in evals))
            write_json(result_path(out, algo, seed, partial=True), result)
    finally:
        trainer.close()
    result.update(status="done", steps=trainer.steps, learn_seconds=trainer.learn_seconds,
                  steps_per_second=trainer.steps / max(trainer.learn_seconds, 1e-9),
                  wall_seconds=time.perf_counter() - start, finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    write_json(result_path(out, algo, seed), result)
    result_path(out, algo, seed, partial=True).unlink(missing_ok=True)
    return result


def unfinished_result(out: Path, algo: str, seed: int, cfg: BaselinesConfig) -> dict[str, Any] | None:
    """The partial result of an unfinished run of ``algo`` and ``seed`` that reached an evaluation
    point, with the same hyperparameters as ``cfg``; None when there is none (or it cannot be read)."""
    path = result_path(out, algo, seed, partial=True)
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    points = saved.get("evaluations") if isinstance(saved, dict) else None
    if (not isinstance(points, list) or not points or saved.get("algo") != algo or saved.get("seed") != seed
            or saved.get("hyperparameters") != cfg.params(algo)):
        return None
    last = points[-1]
    keys = ("step", "learn_seconds", "wall_seconds")
    if not isinstance(last, dict) or not all(isinstance(last.get(k), (int, float)) for k in keys):
        return None
    return saved
