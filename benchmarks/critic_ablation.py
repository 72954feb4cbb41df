"""The privileged critic against the plain one, at equal steps: two batch_ppo runs and one picture.

PerfectDou's recipe: during training the value reads every hand (``privileged_critic: true``),
the policy only its observation. Both runs share every other key and the seed; each evaluates
its policy against ``greedy-v0`` in duplicate games every ``--eval-every`` steps. Run from the
repository root::

    python benchmarks/critic_ablation.py                      # 2 x 100k steps, a few minutes a run on 2 cores
    python benchmarks/critic_ablation.py --steps 500000 --out docs/critic_ablation.png

Runs go to ``runs/critic_ablation_{plain,privileged}`` (``--overwrite`` to replace them; an
unfinished run continues with ``--resume``), the picture to ``--out``, and a table of the
evaluations to the standard output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

VARIANTS = {"plain": "false", "privileged": "true"}


def run(variant: str, args: argparse.Namespace) -> Path:
    """Train one variant (in a subprocess, one torch thread) and return its run folder."""
    name = f"critic_ablation_{variant}"
    cmd = [sys.executable, "-m", "training.batch_ppo", "--config", "configs/batch_ppo_default.yaml",
           "--device", args.device, "--set", f"name={name}", "--set", f"total_steps={args.steps}",
           "--set", f"eval_every={args.eval_every}", "--set", f"eval_deals={args.eval_deals}",
           "--set", "eval_opponents=[greedy-v0]", "--set", f"seed={args.seed}",
           "--set", f"privileged_critic={VARIANTS[variant]}", "--set", "progress=false"]
    if args.overwrite:
        cmd.append("--overwrite")
    if args.resume:
        cmd.append("--resume")
    subprocess.run(cmd, check=True)
    return Path("runs") / name


def plot(runs: dict[str, Path], out: Path) -> None:
    """Score difference against greedy-v0 (95% band) over steps, one line per variant."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    print(f"{'variant':<12} {'step':>8} {'vs greedy-v0':>14} {'95% half-width':>15}")
    for variant, folder in runs.items():
        history = json.loads((folder / "eval.json").read_text())
        points = [(h["step"], r["score_diff"], r["ci95"]) for h in history for r in h["results"]
                  if r["opponent"] == "greedy-v0"]
        steps, means, halves = zip(*points, strict=True)
        for s, m, c in points:
            print(f"{variant:<12} {s:>8,} {m:>+14.2f} {c:>15.2f}")
        ax.plot(steps, means, marker="o", label=f"{variant} critic")
        ax.fill_between(steps, [m - c for m, c in zip(means, halves, strict=True)],
                        [m + c for m, c in zip(means, halves, strict=True)], alpha=0.2)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("points a game vs greedy-v0 (lower is better)")
    ax.set_title("batch_ppo: privileged critic against the plain one")
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    print(f"-> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--eval-every", type=int, default=25_000)
    parser.add_argument("--eval-deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=Path("docs/critic_ablation.png"))
    parser.add_argument("--overwrite", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--plot-only", action="store_true", help="draw the picture from existing runs")
    args = parser.parse_args()
    runs = {v: (Path("runs") / f"critic_ablation_{v}" if args.plot_only else run(v, args)) for v in VARIANTS}
    plot(runs, args.out)


if __name__ == "__main__":
    main()
