"""The evaluations of a training run: when they are due, and what each records and saves.

Every trainer (``training/selfplay.py``, ``training/batch_ppo.py``, ``training/train_sb3.py``)
evaluates its network every ``eval_every`` steps and once more at the end, by duplicate deals
against ``eval_opponents``, records the result in the run's ``eval.json``, and saves it as
``step_N.pt`` (and ``final.pt``) with the evaluation and the config in the sidecar. One owner
here keeps the three runs' schedules and files alike, resumed or not.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

from models.checkpoint import save_checkpoint
from models.checkpoint_agent import CheckpointAgent
from models.networks import PolicyValueNet
from training.common.resume import StopSignals
from training.common.run_utils import EvalResult, RunDir, evaluate_agent
from tt_env.observation import OBS_VERSION


@dataclass
class EvalSchedule:
    """When the next evaluation is due: every ``eval_every`` steps, and once more at the end.

    ``last`` is the step of the last evaluation (None before the first); ``next`` the step at
    which the next one is due (``math.inf`` with ``eval_every: 0``).
    """

    every: float
    next: float
    last: int | None = None

    @classmethod
    def start(cls, eval_every: int) -> EvalSchedule:
        every = eval_every or math.inf
        return cls(every=every, next=every)

    @classmethod
    def resumed(cls, eval_every: int, saved: dict[str, Any]) -> EvalSchedule:
        """The schedule of a resumed run: its saved next step, unless ``eval_every`` changed since
        (then one interval after its last evaluation)."""
        schedule = cls.start(eval_every)
        schedule.last = saved["last_eval"]
        if saved["config"].get("eval_every") == eval_every and saved["next_eval"] is not None:
            schedule.next = saved["next_eval"]
        elif schedule.last is not None:
            schedule.next = schedule.last + schedule.every
        return schedule

    def due(self, step: int, done: bool) -> bool:
        """Whether to evaluate now: the interval is reached, or the run is done and not evaluated here."""
        return step >= self.next or (done and self.last != step)

    def evaluated(self, step: int) -> None:
        """Record an evaluation at ``step`` and move ``next`` past it."""
        self.last = step
        while self.next <= step:
            self.next += self.every

    def state(self) -> dict[str, Any]:
        """The resume state's ``last_eval`` and ``next_eval`` (None for no next evaluation)."""
        return {"last_eval": self.last, "next_eval": None if self.next == math.inf else self.next}


def cpu_copy(net: PolicyValueNet) -> PolicyValueNet:
    """A CPU copy of ``net`` in eval mode: evaluations play on the CPU whatever device trains."""
    return copy.deepcopy(net).cpu().eval()


def evaluate_and_save(net: PolicyValueNet, cfg: Any, run: RunDir, step: int, final: bool, signals: StopSignals,
                      trainer: str) -> list[EvalResult]:
    """Duplicate evaluation against ``eval_opponents``, recorded and saved as ``step_N.pt`` (and ``final.pt``).

    Raises :class:`training.common.resume.StopRequested` (nothing recorded) if a stop is asked for during it.
    """
    results = evaluate_agent(CheckpointAgent(cpu_copy(net), name=cfg.name), cfg.eval_opponents, cfg.eval_rules(),
                             cfg.eval_deals, seed=cfg.seed + 10_000, on_deal=signals.check)
    run.record_eval(step, results)
    evaluation = {"step": step, "deals": cfg.eval_deals, "full_game": True, "results": [r.to_dict() for r in results]}
    for name in [f"step_{step}.pt"] + (["final.pt"] if final else []):
        save_checkpoint(run.checkpoints / name, net, obs_version=OBS_VERSION, rules=cfg.train_rules().to_dict(),
                        training_steps=step, evaluation=evaluation, extra={"trainer": trainer, "config": cfg.to_dict()})
    return results


def log_evaluation(writer: Any, results: list[EvalResult], step: int) -> None:
    """The TensorBoard scalars of one evaluation: score difference and win rate per opponent."""
    for r in results:
        writer.add_scalar(f"eval/{r.opponent}/score_diff", r.score_diff, step)
        writer.add_scalar(f"eval/{r.opponent}/win_rate", r.win_rate, step)
