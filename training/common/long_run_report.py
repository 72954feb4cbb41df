"""A long run's store read back (``chunks.jsonl``, ``eval.json``), and ``python -m training.long_run
--report``: its evaluations against learner steps and against the wall time of its chunks, as a
Markdown table and as two curves (``curve.png``, matplotlib imported only to draw them)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from training.common.run_utils import RunFolderError

CHUNKS_FILE = "chunks.jsonl"
CURVE_FILE = "curve.png"


def read_json(path: Path) -> Any:
    """A JSON file of the store; :class:`RunFolderError` naming it when it cannot be read."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RunFolderError(f"{str(path)!r} cannot be read as JSON ({exc}): repair or remove it") from None


def read_chunks(store: Path) -> list[dict[str, Any]]:
    """The chunk records of ``chunks.jsonl`` (one JSON object a line; none when the file is missing)."""
    path = store / CHUNKS_FILE
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not all(isinstance(record[k], (int, float)) for k in ("from_step", "to_step", "wall_s")):
                raise TypeError("from_step, to_step and wall_s must be numbers")
        except (ValueError, KeyError, TypeError) as exc:
            raise RunFolderError(f"{str(path)!r} line {number} is not a chunk record ({exc}): repair or remove "
                                 f"it") from None
        records.append(record)
    return records


def wall_at(chunks: list[dict[str, Any]], step: int) -> float | None:
    """Cumulative chunk wall time (s) at ``step``, linear inside a chunk; None past the chunks."""
    total = 0.0
    for c in chunks:
        if c["from_step"] <= step <= c["to_step"]:
            span = max(c["to_step"] - c["from_step"], 1)
            return total + c["wall_s"] * (step - c["from_step"]) / span
        total += c["wall_s"]
    return None


def format_steps(step: int) -> str:
    """``8.0M``, ``358k`` or ``12``: learner steps for a table."""
    return f"{step / 1e6:.1f}M" if step >= 1_000_000 else f"{step / 1e3:.0f}k" if step >= 1000 else str(step)


def half_width(result: dict[str, Any]) -> float | None:
    """An evaluation's 95% half-width, None where one deal gave none (saved as null)."""
    ci = result.get("ci95")
    return None if ci is None or math.isnan(ci) else float(ci)


def report_cell(result: dict[str, Any]) -> str:
    """``+1.2 ± 0.8``, or ``+1.2 (no interval)`` after one deal: not a false ``± 0.0``."""
    ci = half_width(result)
    return f"{result['score_diff']:+.1f}" + (" (no interval)" if ci is None else f" ± {ci:.1f}")


def report(store: Path) -> str:
    """A Markdown table of the store's evaluations against steps and wall time; draws ``curve.png``."""
    path = store / "eval.json"
    if not path.exists():
        raise RunFolderError(f"{str(path)!r} does not exist: the store holds no evaluation yet")
    history = read_json(path)
    chunks = read_chunks(store)
    try:
        names = sorted({r["opponent"] for h in history for r in h["results"]})
    except (KeyError, TypeError) as exc:
        raise RunFolderError(f"{str(path)!r} is not a run's evaluation history ({exc!r}): "
                             f"repair or remove it") from None
    lines = ["| steps | wall time | " + " | ".join(f"vs {n}" for n in names) + " |",
             "|---" * (len(names) + 2) + "|"]
    for h in history:
        wall = wall_at(chunks, h["step"])
        when = "?" if wall is None else f"{int(wall // 3600)} h {int(wall % 3600 // 60):02d}"
        cells = {r["opponent"]: report_cell(r) for r in h["results"]}
        lines.append(f"| {format_steps(h['step'])} | {when} | " + " | ".join(cells.get(n, "") for n in names) + " |")
    draw_curves(history, chunks, names, store / CURVE_FILE)
    return "\n".join(lines)


def draw_curves(history: list[dict[str, Any]], chunks: list[dict[str, Any]], names: list[str], path: Path) -> None:
    """Score difference against each opponent, over learner steps (left) and wall hours (right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), dpi=100, sharey=True)
    for name in names:
        pts = [(h["step"], wall_at(chunks, h["step"]), r["score_diff"], half_width(r) or 0.0)
               for h in history for r in h["results"] if r["opponent"] == name]
        for ax, x in ((axes[0], [p[0] / 1e6 for p in pts]), (axes[1], [p[1] for p in pts])):
            keep = [i for i, v in enumerate(x) if v is not None and not math.isnan(v)]
            xs = [x[i] / (3600 if ax is axes[1] else 1) for i in keep]
            means = [pts[i][2] for i in keep]
            cis = [pts[i][3] for i in keep]
            ax.plot(xs, means, marker="o", label=f"vs {name}")
            ax.fill_between(xs, [m - c for m, c in zip(means, cis, strict=True)],
                            [m + c for m, c in zip(means, cis, strict=True)], alpha=0.2)
    for ax, label in ((axes[0], "learner steps (millions)"), (axes[1], "wall time of the chunks (hours)")):
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xlabel(label)
        ax.legend()
    axes[0].set_ylabel("final score difference (agent - opponent)\nlower is better")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
