"""One run of the baselines benchmark: train in chunks, evaluate at each point, save the result as it goes.

Files in the benchmark folder ``OUT``: ``OUT/runs/<algo>-seed<s>/`` (whatever the framework
writes), ``OUT/results/<algo>-seed<s>.partial.json`` (rewritten after every evaluation while the
run goes on) and ``OUT/results/<algo>-seed<s>.json`` (the finished run; a run with this file is
skipped by ``--resume``). An unfinished run starts again from scratch on ``--resume``.
"""

from __future__ import annotations

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


def run_one(cfg: BaselinesConfig, algo: str, seed: int, out: Path, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train ``algo`` with ``seed`` for ``cfg.steps``, evaluating at ``cfg.eval_steps()``; returns the result."""
    from training.common.run_utils import evaluate_agent

    work = out / "runs" / run_name(algo, seed)
    if work.exists():
        shutil.rmtree(work)  # an unfinished run from before: start it again
    work.mkdir(parents=True)
    (out / "results").mkdir(parents=True, exist_ok=True)
    ctx = RunContext(seed=seed, num_players=cfg.num_players, work_dir=work, torch_threads=cfg.torch_threads,
                     device=algo_device(cfg, algo))
    eval_rules = Rules(num_players=cfg.num_players)
    result: dict[str, Any] = {"algo": algo, "seed": seed, "status": "running", "eval_seed": EVAL_SEED_BASE + seed,
                              "hyperparameters": cfg.params(algo), "device": ctx.device, "evaluations": [],
                              "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    start = time.perf_counter()
    import torch

    torch.set_num_threads(cfg.torch_threads)
    trainer = make_trainer(algo, cfg.params(algo), ctx, cfg.steps, cfg.eval_points)
    try:
        for target in cfg.eval_steps():
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
