"""Ship a trained checkpoint as a named agent: ``models/checkpoints/<name>.pt`` and its sidecar.

    python -m training.ship runs/ppo_2p_v1/checkpoints/final.pt ppo-2p-v1 \\
        --evaluation runs/eval/ppo_2p_v1_vs_expert.json --wall-time 4m30s

It re-saves the checkpoint under the agent's name (weights, sidecar with its sha256 and the
training config), records the results of ``python -m training.evaluate ... --json`` reports in
which it played first (each opponent seat's mean score difference with its 95% interval) and
the wall time of its training, and copies the run's learning curve next to it. Add the name to
``models.agent_loader.SHIPPED`` to load it by name.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from models.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tt_env.cli_checks import CommandParser

CHECKPOINT_DIR = Path(__file__).resolve().parent.parent / "models" / "checkpoints"
SUMMARY_FORMAT = "three-thirteen-evaluation/1 summaries"


def summaries(report: dict, source: str) -> list[dict]:
    """One result per opponent seat of an evaluation ``report`` whose first agent is the one shipped."""
    if report.get("format") != "three-thirteen-evaluation/1":
        raise ValueError(f"{source} is not a report of python -m training.evaluate --json")
    first = report["agents"][0]
    agents = {a["name"]: a for a in report["agents"]}
    out = []
    for pair in report["pairwise"]:
        if pair["a"] != first["name"]:
            continue
        out.append({"opponent": agents[pair["b"]]["spec"], "players": report["rules"]["num_players"],
                    "games": report["games"], "games_played": report["games_played"], "seed": report["seed"],
                    "score_diff": pair["mean_score_diff"], "ci95": pair["ci95"], "win_rate": first["win_rate"],
                    "win_rate_ci95": first["win_rate_ci95"]})
    return out


def ship(source: str, name: str, evaluations: Sequence[str], wall_time: str, out_dir: Path = CHECKPOINT_DIR) -> Path:
    """Write ``out_dir/<name>.pt`` from checkpoint ``source``; returns its path."""
    net, meta = load_checkpoint(source)
    results = []
    for path in evaluations:
        results += summaries(json.loads(Path(path).read_text()), path)
    extra = dict(meta.get("extra") or {})
    extra.update({"source_checkpoint": source, "training_wall_time": wall_time})
    target = save_checkpoint(out_dir / f"{name}.pt", net, obs_version=meta["obs_version"], rules=meta["rules"],
                             training_steps=meta["training_steps"],
                             evaluation={"format": SUMMARY_FORMAT, "agent": f"{name} (argmax)", "results": results},
                             extra=extra)
    curve = Path(source).resolve().parent.parent / "learning_curve.png"
    if curve.is_file():
        shutil.copyfile(curve, out_dir / f"{name}.learning_curve.png")
    return target


def main(argv: Sequence[str] | None = None) -> Path:
    parser = CommandParser(prog="python -m training.ship", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="the trained checkpoint (.pt with its .json sidecar)")
    parser.add_argument("name", help="the agent's versioned name, e.g. ppo-2p-v1")
    parser.add_argument("--evaluation", nargs="*", default=[], metavar="JSON",
                        help="reports of python -m training.evaluate --json in which it played first")
    parser.add_argument("--wall-time", required=True, help="wall time of its training, as text (e.g. 4m30s)")
    parser.add_argument("--out-dir", default=str(CHECKPOINT_DIR), help="where to write (default models/checkpoints)")
    args = parser.parse_args(argv)
    try:
        path = ship(args.checkpoint, args.name, args.evaluation, args.wall_time, Path(args.out_dir))
    except (CheckpointError, ValueError, OSError, KeyError) as exc:
        parser.error(str(exc))
    print(f"shipped {path}")
    return path


if __name__ == "__main__":
    main()
