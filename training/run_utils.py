"""What both training scripts share: the run directory, duplicate evaluation, the learning curve.

Every run writes to ``<run_dir>/<name>/``: ``config.yaml`` (the resolved config),
``tb/`` (TensorBoard events), ``checkpoints/`` (our checkpoint format, ``models.checkpoint``),
``eval.json`` (every evaluation) and ``learning_curve.png`` (score difference against each
evaluation opponent over training steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from tt_env.engine.rules import Rules
from tt_env.jsonio import write_json

from .duplicate import run_deals


@dataclass
class EvalResult:
    """Duplicate evaluation of one agent (seat 0 of the list) against one opponent."""

    opponent: str
    deals: int
    games: int
    score_diff: float
    """Mean of (agent's final score - mean of the opponents'); negative is better (low scores win)."""
    ci95: float
    """Half-width of the 95% interval of ``score_diff`` (normal, deals as the paired unit)."""
    win_rate: float
    """Mean win share (ties share the win)."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def evaluate_agent(agent: Any, opponents: Sequence[str], rules: Rules, deals: int, seed: int) -> list[EvalResult]:
    """Play ``deals`` duplicate deals of ``agent`` against each opponent (all other seats)."""
    results = []
    n = rules.num_players
    for name in opponents:
        records = run_deals([agent] + [name] * (n - 1), rules, deals, seed)
        per_deal, wins = [], []
        for deal in records:
            diffs = [g.scores[0] - float(np.mean(g.scores[1:])) for g in deal]
            per_deal.append(float(np.mean(diffs)))
            wins.extend(g.win_shares[0] for g in deal)
        arr = np.asarray(per_deal)
        ci = 1.96 * float(arr.std(ddof=1)) / math.sqrt(len(arr)) if len(arr) > 1 else float("nan")
        results.append(EvalResult(name, deals, deals * n, float(arr.mean()), ci, float(np.mean(wins))))
    return results


class RunDir:
    """The directory of one run and its evaluation history."""

    def __init__(self, root: str | Path, name: str) -> None:
        self.path = Path(root) / name
        self.checkpoints = self.path / "checkpoints"
        self.checkpoints.mkdir(parents=True, exist_ok=True)
        self.tb = self.path / "tb"
        self.curve_png = self.path / "learning_curve.png"
        self.history: list[dict[str, Any]] = []
        self.learn_sps: float | None = None
        """Learner environment steps per second of training time (evaluations excluded)."""

    def record_eval(self, step: int, results: Sequence[EvalResult]) -> None:
        """Append one evaluation, rewrite ``eval.json`` and redraw the learning curve."""
        self.history.append({"step": step, "results": [r.to_dict() for r in results]})
        write_json(self.path / "eval.json", self.history)
        plot_learning_curve(self.history, self.curve_png)


def plot_learning_curve(history: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Score difference (with 95% band) against each opponent over training steps, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    names = sorted({r["opponent"] for h in history for r in h["results"]})
    for name in names:
        pts = [(h["step"], r["score_diff"], r["ci95"]) for h in history for r in h["results"]
               if r["opponent"] == name]
        steps, means, cis = (np.array(v, dtype=float) for v in zip(*pts))
        ax.plot(steps, means, marker="o", label=f"vs {name}")
        ax.fill_between(steps, means - np.nan_to_num(cis), means + np.nan_to_num(cis), alpha=0.2)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("learner environment steps")
    ax.set_ylabel("final score difference (agent - opponent)\nlower is better")
    ax.set_title("Duplicate evaluation over training")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def format_results(results: Sequence[EvalResult]) -> str:
    """One line per opponent, for logs."""
    return "; ".join(f"vs {r.opponent}: diff {r.score_diff:+.1f} ± {r.ci95:.1f}, win {100 * r.win_rate:.0f}%"
                     for r in results)
