"""The baselines benchmark's outputs: ``baselines.json``, ``baselines.png`` and the Markdown table.

Over seeds, a run's *final* score difference against an opponent is that of its last evaluation;
the table gives the mean over the finished seeds and a 95% Student-t interval over them
(``mean +/- t * sd / sqrt(seeds)``); with a single seed finished, that run's own 95% interval
over its evaluation deals instead (it leaves out the spread between seeds). The picture draws, per algorithm,
the mean over seeds at each evaluation point, against the mean steps and the mean learning time
at that point, with the range over seeds (min to max) shaded.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import ALGOS

PACKAGES = ("three-thirteen", "numpy", "torch", "gymnasium", "pettingzoo", "stable-baselines3", "sb3-contrib", "ray",
            "open_spiel", "rlcard", "tianshou")


def versions() -> dict[str, str]:
    """Python and the installed version of every package the benchmark may use."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average": list(load) if load else None}


def load_results(out: Path) -> list[dict[str, Any]]:
    """Every run result in ``out/results`` (finished ones, and the partial one of a run in progress)."""
    results = []
    folder = out / "results"
    for path in sorted(folder.glob("*.json")) if folder.exists() else []:
        results.append(json.loads(path.read_text(encoding="utf-8")))
    return results


def t_interval(values: Sequence[float]) -> list[float] | None:
    """95% Student-t interval of the mean of ``values`` (None for fewer than two)."""
    if len(values) < 2:
        return None
    from scipy import stats

    mean, sd = float(np.mean(values)), float(np.std(values, ddof=1))
    half = float(stats.t.ppf(0.975, len(values) - 1)) * sd / math.sqrt(len(values))
    return [mean - half, mean + half]


def summarize(results: Sequence[dict[str, Any]], opponents: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per algorithm, over its finished seeds: steps, learning time, steps/s and final score differences."""
    summary: dict[str, dict[str, Any]] = {}
    for algo in ALGOS:
        done = [r for r in results if r["algo"] == algo and r["status"] == "done"]
        if not done:
            continue
        row: dict[str, Any] = {"seeds": sorted(r["seed"] for r in done),
                               "steps": float(np.mean([r["steps"] for r in done])),
                               "learn_seconds": float(np.mean([r["learn_seconds"] for r in done])),
                               "wall_seconds": float(np.mean([r["wall_seconds"] for r in done])),
                               "steps_per_second": float(np.mean([r["steps_per_second"] for r in done])),
                               "final": {}}
        for opponent in opponents:
            last = [next(x for x in r["evaluations"][-1]["results"] if x["opponent"] == opponent) for r in done]
            finals = [x["score_diff"] for x in last]
            row["final"][opponent] = {"mean": float(np.mean(finals)), "ci95": t_interval(finals),
                                      "per_seed": finals, "deals_ci95": [x.get("ci95") for x in last]}
        summary[algo] = row
    return summary


def curves(results: Sequence[dict[str, Any]], algo: str, opponent: str) -> dict[str, np.ndarray] | None:
    """Mean steps, mean learning seconds, and mean/min/max score difference over seeds at each point."""
    runs = [r for r in results if r["algo"] == algo and r["evaluations"]]
    if not runs:
        return None
    points = min(len(r["evaluations"]) for r in runs)
    diff = np.array([[next(x["score_diff"] for x in r["evaluations"][k]["results"] if x["opponent"] == opponent)
                      for k in range(points)] for r in runs])
    return {"steps": np.mean([[r["evaluations"][k]["step"] for k in range(points)] for r in runs], axis=0),
            "seconds": np.mean([[r["evaluations"][k]["learn_seconds"] for k in range(points)] for r in runs], axis=0),
            "mean": diff.mean(axis=0), "low": diff.min(axis=0), "high": diff.max(axis=0)}


def plot(results: Sequence[dict[str, Any]], path: Path, opponents: Sequence[str] = ("greedy-v0", "expert-v0")) -> None:
    """Score difference against each of ``opponents`` by steps and by learning time, a line per algorithm."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(len(opponents), 2, figsize=(12, 4.2 * len(opponents)), dpi=100, squeeze=False)
    colors = plt.get_cmap("tab10")
    for row, opponent in enumerate(opponents):
        for col, (key, label) in enumerate((("steps", "environment steps"), ("seconds", "learning time (s)"))):
            ax = axes[row][col]
            for i, algo in enumerate(ALGOS):
                c = curves(results, algo, opponent)
                if c is None:
                    continue
                ax.plot(c[key], c["mean"], marker="o", ms=3, color=colors(i), label=algo)
                ax.fill_between(c[key], c["low"], c["high"], color=colors(i), alpha=0.15)
            ax.axhline(0.0, color="grey", lw=0.8)
            ax.set_xlabel(label)
            ax.set_ylabel(f"score difference vs {opponent}\n(lower is better)")
            ax.set_title(f"vs {opponent}, by {label.split(' (')[0]}")
            if col == 1:
                ax.set_xscale("log")
                ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
                ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}"))
                ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # 3x10^1 4x10^1 ... overlapped
    axes[0][0].legend(fontsize=8)
    seeds = len({r["seed"] for r in results})
    spread = "one seed" if seeds == 1 else f"mean over {seeds} seeds, range shaded"
    fig.suptitle(f"Baselines from scratch, 2 players: {spread}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _ci_text(cell: dict[str, Any]) -> str:
    """``mean [lo, hi]`` over seeds; with one seed, ``mean ± half-width`` of its interval over deals."""
    ci = cell["ci95"]
    if ci:
        return f"{cell['mean']:+.1f} [{ci[0]:+.1f}, {ci[1]:+.1f}]"
    half = cell.get("deals_ci95", [None])[0]
    return f"{cell['mean']:+.1f}" + (f" ± {half:.1f} (1 seed: over deals)" if half is not None else "")


def table(summary: dict[str, dict[str, Any]], opponents: Sequence[str]) -> str:
    """The Markdown table of :func:`summarize`'s output."""
    head = ["algorithm", "seeds", "steps", "learning time", "steps/s"] + [f"vs {o} [95% CI over seeds]"
                                                                         for o in opponents]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for algo, row in summary.items():
        minutes = row["learn_seconds"] / 60
        cells = [f"`{algo}`", str(len(row["seeds"])), f"{row['steps']:,.0f}", f"{minutes:.1f} min",
                 f"{row['steps_per_second']:,.0f}"] + [_ci_text(row["final"][o]) for o in opponents]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
