"""Ship a trained checkpoint as a named agent: ``models/checkpoints/<name>.pt`` and its sidecar.

    python -m training.ship runs/ppo_2p_v1/checkpoints/final.pt ppo-2p-v1 \\
        --evaluation runs/eval/ppo_2p_v1_vs_expert.json --wall-time 4m30s

It re-saves the checkpoint under the agent's name (weights, sidecar with its sha256 and the
training config), records the results of ``python -m training.evaluate ... --json`` reports in
which it played first (each opponent seat's mean score difference with its 95% interval, and
the agent's own win rate; a report of other rules than the standard game, rounds or decks say,
keeps them as ``rules``) and the wall time of its training, and copies the run's learning curve
next to it (a shipped agent's own, when re-shipping one). ``--algorithm`` and ``--inputs``
record, as text, how it was trained and what its network reads (for an agent trained from
scratch: which features, and why they are fair). Add the name to ``models.agent_loader.SHIPPED``
to load it by name.

Checked before anything is written: the name (``[a-z0-9]+(-[a-z0-9]+)*-v[0-9]+``, such as
``ppo-2p-v1``: no path separators, so the files stay in ``--out-dir``), that no agent is
shipped under it yet (weights, sidecar or learning curve: ``--overwrite`` replaces one; a new
version is usually what you want), every report (an evaluation report whose first agent is this
checkpoint, at its player count, scored as it learned: not ``--allow-rule-mismatch`` games) and
the checkpoint itself. A refusal is one line, exit status 2.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from models.checkpoint import SCORING_RULES, CheckpointError, load_checkpoint, read_metadata, save_checkpoint
from tt_env.agents.registry import agent_names, is_checkpoint_spec
from tt_env.cli_checks import CommandParser, output_dir_problem
from tt_env.engine.rules import Rules
from tt_env.jsonio import read_json

CHECKPOINT_DIR = Path(__file__).resolve().parent.parent / "models" / "checkpoints"
SUMMARY_FORMAT = "three-thirteen-evaluation/1 summaries"
REPORT_FORMAT = "three-thirteen-evaluation/1"
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*-v[0-9]+")
MAX_NAME = 64
MAX_WALL_TIME = 100


class ShipError(ValueError):
    """The agent cannot be shipped as asked; the message says why."""


def check_name(name: str) -> str:
    """``name`` if it is an agent name (``ppo-2p-v1``), else :class:`ShipError` saying what a name is."""
    if not isinstance(name, str) or len(name) > MAX_NAME or not NAME.fullmatch(name):
        raise ShipError(f"agent name {name!r} is not allowed: use lower-case letters and digits in words joined "
                        f"by '-', ending in a version, such as ppo-2p-v1 (at most {MAX_NAME} characters, no path)")
    if name in agent_names() and not is_checkpoint_spec(name):
        raise ShipError(f"agent name {name!r} is taken by an agent that is not a checkpoint (the name would "
                        f"always load that one): choose another name")
    return name


def shipped_files(out_dir: Path, name: str) -> list[Path]:
    """The files shipping ``name`` writes in ``out_dir``: weights, sidecar, learning curve (checked to stay there)."""
    check_name(name)
    files = [out_dir / f"{name}.pt", out_dir / f"{name}.json", out_dir / f"{name}.learning_curve.png"]
    root = os.path.realpath(out_dir)
    for path in files:
        if os.path.dirname(os.path.realpath(path)) != root:  # a symlink planted as <name>.pt, say
            raise ShipError(f"{path} would be written outside --out-dir {out_dir}: refusing")
    return files


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _interval(value: Any) -> bool:
    return value is None or (isinstance(value, list) and len(value) == 2 and all(_is_number(v) or v is None
                                                                                  for v in value))


def _check_report(report: Any, source: str) -> None:
    """Raise :class:`ShipError` naming what makes ``report`` not a usable evaluation report."""
    where = f"{source} is not a report of python -m training.evaluate --json"
    if not isinstance(report, dict):
        raise ShipError(f"{where}: it holds a JSON {type(report).__name__}, not an object")
    if report.get("format") != REPORT_FORMAT:
        raise ShipError(f"{where} (its format is {str(report.get('format'))[:60]!r}, not {REPORT_FORMAT!r})")
    agents, pairs, rules = report.get("agents"), report.get("pairwise"), report.get("rules")
    if not isinstance(agents, list) or len(agents) < 2:
        raise ShipError(f"{source}: 'agents' must list two or more agents (the shipped one first)")
    for i, agent in enumerate(agents):
        if not (isinstance(agent, dict) and isinstance(agent.get("name"), str) and isinstance(agent.get("spec"), str)
                and _is_number(agent.get("win_rate")) and _interval(agent.get("win_rate_ci95"))):
            raise ShipError(f"{source}: agents[{i}] is not an agent's summary (name, spec, win_rate, win_rate_ci95)")
    names = {a["name"] for a in agents}
    if not isinstance(pairs, list):
        raise ShipError(f"{source}: 'pairwise' must be a list of pairs")
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, dict) and pair.get("a") in names and pair.get("b") in names
                and (pair.get("mean_score_diff") is None or _is_number(pair.get("mean_score_diff")))
                and _interval(pair.get("ci95"))):
            raise ShipError(f"{source}: pairwise[{i}] is not a pair of its agents (a, b, mean_score_diff, ci95)")
    if not isinstance(rules, dict) or not isinstance(rules.get("num_players"), int):
        raise ShipError(f"{source}: 'rules' must hold the game's rules with num_players")
    for key, low in (("games", 1), ("games_played", 1), ("seed", 0)):
        if not isinstance(report.get(key), int) or isinstance(report.get(key), bool) or report[key] < low:
            raise ShipError(f"{source}: {key!r} must be an integer >= {low}")


def _first_agent_problem(spec: str, meta: dict[str, Any], checkpoint: str) -> str | None:
    """Why the report's first agent ``spec`` is not checkpoint ``checkpoint`` (None if it is, or cannot be told)."""
    from models.agent_loader import CHECKPOINT_DIR as SHIPPED_DIR, SHIPPED
    from tt_env.agents import list_agents

    if spec in SHIPPED:
        path = SHIPPED_DIR / SHIPPED[spec]
    elif spec in list_agents():
        return f"its first agent is {spec!r}, not the checkpoint shipped (it must play first)"
    else:
        path = Path(spec)
    try:
        other = read_metadata(path)
    except (CheckpointError, OSError):
        return None  # evaluated elsewhere, or since removed: the report's own claim stands
    if other.get("weights_sha256") != meta.get("weights_sha256"):
        return f"its first agent {spec!r} has other weights than {checkpoint}"
    return None


def _scoring_problem(rules: dict[str, Any], meta: dict[str, Any]) -> str | None:
    """Why a report's ``rules`` score otherwise than the checkpoint learned (``--allow-rule-mismatch``):
    such results are not the agent's own."""
    trained = meta["rules"] if isinstance(meta.get("rules"), dict) else {}
    for key, default in SCORING_RULES.items():
        if rules.get(key, default) != trained.get(key, default):
            return (f"it was played with {key}={rules.get(key, default)!r}, but the checkpoint learned "
                    f"{key}={trained.get(key, default)!r}: its results there are not the agent's own")
    return None


def summaries(report: Any, source: str, meta: dict[str, Any] | None = None, checkpoint: str = "") -> list[dict]:
    """One result per opponent seat of an evaluation ``report`` whose first agent is the one shipped.

    ``meta`` (the shipped checkpoint's sidecar) checks that the report is of it: the same player
    count, and a first agent with its weights. ``win_rate`` is the shipped agent's own.
    """
    _check_report(report, source)
    first = report["agents"][0]
    if meta is not None:
        if report["rules"]["num_players"] != meta["num_players"]:
            raise ShipError(f"{source} is a {report['rules']['num_players']}-player evaluation, but {checkpoint} "
                            f"plays {meta['num_players']} players")
        problem = _first_agent_problem(first["spec"], meta, checkpoint) or _scoring_problem(report["rules"], meta)
        if problem:
            raise ShipError(f"{source}: {problem}")
    standard = Rules(num_players=report["rules"]["num_players"]).to_dict()
    variant = {} if report["rules"] == standard else {"rules": report["rules"]}  # rounds, decks, ... named
    agents = {a["name"]: a for a in report["agents"]}
    out = []
    for pair in report["pairwise"]:
        if pair["a"] != first["name"]:
            continue
        out.append({"opponent": agents[pair["b"]]["spec"], "players": report["rules"]["num_players"],
                    "games": report["games"], "games_played": report["games_played"], "seed": report["seed"],
                    "score_diff": pair["mean_score_diff"], "ci95": pair["ci95"], "win_rate": first["win_rate"],
                    "win_rate_ci95": first["win_rate_ci95"], **variant})
    if not out:
        raise ShipError(f"{source}: no pair has the first agent {first['name']!r} against another")
    return out


def ship(source: str, name: str, evaluations: Sequence[str], wall_time: str, out_dir: Path = CHECKPOINT_DIR,
         overwrite: bool = False, algorithm: str | None = None, inputs: str | None = None) -> Path:
    """Write ``out_dir/<name>.pt`` from checkpoint ``source``; returns its path.

    Everything is checked first (module docstring): :class:`ShipError` or :class:`CheckpointError`
    before any file is written.
    """
    out_dir = Path(out_dir)
    target, sidecar, curve_target = shipped_files(out_dir, name)
    if not overwrite and any(os.path.lexists(p) for p in (target, sidecar, curve_target)):
        raise ShipError(f"an agent is already shipped as {name!r} ({target}): give --overwrite to replace it, "
                        f"or ship this one under a new version")
    if not isinstance(wall_time, str) or not wall_time.strip() or len(wall_time) > MAX_WALL_TIME \
            or not wall_time.isprintable():
        raise ShipError(f"--wall-time {wall_time!r} is not allowed: give the training's wall time as a short line "
                        f"of text, such as '4 min 43 s'")
    descriptions = {}
    for key, text in (("algorithm", algorithm), ("inputs", inputs)):
        if text is not None:
            if not isinstance(text, str) or not text.strip():
                raise ShipError(f"--{key} is empty: describe it in words, or leave the option out")
            descriptions[key] = text
    problem = output_dir_problem(out_dir)
    if problem:
        raise ShipError(f"--out-dir {out_dir}: {problem}")
    net, meta = load_checkpoint(source)
    results = []
    for path in evaluations:
        try:
            report = read_json(path)
        except ValueError as exc:
            raise ShipError(f"evaluation report {exc}") from None
        results += summaries(report, path, meta, source)
    extra = dict(meta.get("extra") or {})
    extra.update({"source_checkpoint": source, "training_wall_time": wall_time})
    extra.update(descriptions)
    save_checkpoint(target, net, obs_version=meta["obs_version"], rules=meta["rules"],
                    training_steps=meta["training_steps"],
                    evaluation={"format": SUMMARY_FORMAT, "agent": f"{name} (argmax)", "results": results},
                    extra=extra)
    curve = source_curve(Path(source))
    if curve is not None:  # (re-shipped in place: its own curve, copied onto itself through a temporary)
        tmp = curve_target.with_name(curve_target.name + ".tmp")
        shutil.copyfile(curve, tmp)
        os.replace(tmp, curve_target)
    elif curve is None and os.path.lexists(curve_target):
        curve_target.unlink()  # the replaced agent's curve is not this one's
    return target


def source_curve(source: Path) -> Path | None:
    """The learning curve of checkpoint ``source``: its run's (``<run>/checkpoints/x.pt`` ->
    ``<run>/learning_curve.png``) or, for a shipped agent, its own (``<name>.learning_curve.png``)."""
    source = source.resolve()
    for curve in (source.parent.parent / "learning_curve.png", source.with_suffix(".learning_curve.png")):
        if curve.is_file():
            return curve
    return None


def main(argv: Sequence[str] | None = None) -> Path:
    parser = CommandParser(prog="python -m training.ship", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="the trained checkpoint (.pt with its .json sidecar)")
    parser.add_argument("name", help="the agent's versioned name, e.g. ppo-2p-v1")
    parser.add_argument("--evaluation", nargs="*", default=[], metavar="JSON",
                        help="reports of python -m training.evaluate --json in which it played first")
    parser.add_argument("--wall-time", required=True, help="wall time of its training, as text (e.g. 4m30s)")
    parser.add_argument("--out-dir", default=str(CHECKPOINT_DIR), help="where to write (default models/checkpoints)")
    parser.add_argument("--overwrite", action="store_true", help="replace an agent already shipped under the name")
    parser.add_argument("--algorithm", help="how it was trained, as text (recorded in the sidecar)")
    parser.add_argument("--inputs", help="what its network reads and why that is fair, as text (recorded)")
    args = parser.parse_args(argv)
    try:
        path = ship(args.checkpoint, args.name, args.evaluation, args.wall_time, Path(args.out_dir),
                    overwrite=args.overwrite, algorithm=args.algorithm, inputs=args.inputs)
    except (CheckpointError, ValueError, OSError, KeyError) as exc:
        parser.error(str(exc))
    print(f"shipped {path}")
    return path


if __name__ == "__main__":
    main()
