"""Baselines: the standard RL algorithms trained from scratch on Three Thirteen at 2 players, evaluated alike.

    python benchmarks/baselines.py                                   # every algorithm, 3 seeds (hours)
    python benchmarks/baselines.py --resume                          # continue a stopped benchmark
    python benchmarks/baselines.py --algos ppo rlcard-dmc --seeds 0 --steps 50000 --out runs/try

Each algorithm (``training.baselines.ALGOS``: our PPO, sb3-contrib MaskablePPO, RLlib PPO,
OpenSpiel DQN and NFSP, RLCard DMC and DQN, Tianshou DQN) trains for the same number of
environment steps (one decision of a policy being trained; ``training/baselines/common.py``)
with each seed, and is evaluated at ``eval_points`` evenly spaced steps against ``random-v0``,
``greedy-v0`` and ``expert-v0`` in duplicate games (``training.common.run_utils.evaluate_agent``, full
11-round games). Hyperparameters and the budget live in ``configs/baselines.yaml``.

Writes ``OUT/baselines.json`` (config, seeds, versions, every run's wall and learning time,
steps/s and every evaluation, the summary over seeds), ``OUT/baselines.png`` (score difference
against greedy-v0 and expert-v0 by steps and by learning time, the range over seeds shaded),
``OUT/results/`` (each run's result, saved as it finishes) and ``OUT/runs/`` (the frameworks'
own files). An algorithm whose package is not installed is skipped, and says so.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from training.baselines import ALGOS, missing_modules  # noqa: E402
from training.baselines.common import STEP_DEFINITION, TIME_DEFINITION  # noqa: E402
from training.baselines.config import FROZEN, BaselinesConfig, check_hyperparameters  # noqa: E402
from training.baselines.report import load_results, machine, plot, summarize, table, versions  # noqa: E402
from training.baselines.runner import result_path, run_name, run_one  # noqa: E402
from training.common.config import ConfigError, load_config  # noqa: E402
from tt_env import jsonio  # noqa: E402
from tt_env.cli_checks import CommandParser  # noqa: E402

DEFAULT_CONFIG = ROOT / "configs" / "baselines.yaml"


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="python benchmarks/baselines.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="YAML config (fields of BaselinesConfig)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key (repeatable; YAML values)")
    parser.add_argument("--steps", type=int, help="environment steps per run (scales the whole benchmark)")
    parser.add_argument("--algos", nargs="+", metavar="ALGO", help=f"which algorithms: {' '.join(ALGOS)}")
    parser.add_argument("--seeds", nargs="+", type=int, metavar="SEED", help="which seeds (default: the config's)")
    parser.add_argument("--out", default="runs/baselines", help="benchmark folder (default runs/baselines)")
    parser.add_argument("--device", default=None, metavar="DEVICE",
                        help="auto | cpu | cuda | cuda:K (the config key device; overrides it): where the algorithms "
                             "whose library allows a device train; the others train on the CPU")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--resume", action="store_true", help="continue the benchmark in --out: finished runs are "
                                                             "skipped, an unfinished one goes on from its last "
                                                             "evaluation where its trainer can (ppo, batch-ppo, "
                                                             "sb3-maskable-ppo), else starts again")
    group.add_argument("--overwrite", action="store_true", help="delete the benchmark in --out and start again")
    group.add_argument("--report", action="store_true", help="train nothing: rewrite baselines.json and .png from "
                                                             "the runs finished so far in --out and print the table")
    return parser


def resolve_config(parser: argparse.ArgumentParser, args: argparse.Namespace) -> BaselinesConfig:
    overrides = list(args.overrides)
    if args.steps is not None:
        overrides.append(f"steps={args.steps}")
    if args.algos:
        algos = [a for item in args.algos for a in item.split(",") if a]
        overrides.append(f"algos={jsonio.dumps(algos)}")
    if args.seeds:
        overrides.append(f"seeds={jsonio.dumps(args.seeds)}")
    if args.device is not None:
        overrides.append(f"device={args.device}")
    try:
        return load_config(BaselinesConfig, args.config, overrides)
    except ConfigError as exc:
        parser.error(str(exc))


BENCHMARK_ENTRIES = ("config.json", "baselines.json", "baselines.png", "results", "runs")
"""What a baselines run writes in its folder (and nothing else: ``--overwrite`` deletes only such a folder)."""


def read_json_file(parser: argparse.ArgumentParser, path: Path, flag: str) -> object:
    """The JSON of ``path``; a one-line refusal naming the file when it is unreadable, truncated or not JSON."""
    try:
        return jsonio.loads(path.read_bytes(), f"{str(path)!r}")
    except (OSError, ValueError) as exc:
        parser.error(f"{flag}: {' '.join(str(exc).split())[:300]}: the file is damaged (truncated?); restore or "
                     f"delete it")


def read_saved_config(parser: argparse.ArgumentParser, out: Path, flag: str) -> dict:
    """``out/config.json`` as a mapping of config keys (a one-line refusal otherwise)."""
    state = out / "config.json"
    if not state.is_file():
        parser.error(f"{flag}: {str(out)!r} holds no benchmark (no config.json); start without {flag}")
    saved = read_json_file(parser, state, flag)
    fields = set(BaselinesConfig().to_dict())
    if not isinstance(saved, dict) or not saved or not set(saved) <= fields:
        keys = sorted(saved) if isinstance(saved, dict) else type(saved).__name__
        parser.error(f"{flag}: {str(state)!r} is not a baselines config (it has {keys}; allowed keys are "
                     f"{sorted(fields)})")
    return saved


def check_results(parser: argparse.ArgumentParser, out: Path, flag: str) -> None:
    """Every run result in ``out/results`` readable, before any work (one line naming a damaged one)."""
    folder = out / "results"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        result = read_json_file(parser, path, flag)
        if not isinstance(result, dict) or not {"algo", "seed", "status", "evaluations"} <= set(result):
            parser.error(f"{flag}: {str(path)!r} is not a run result (it needs algo, seed, status and evaluations): "
                         f"restore or delete it")


def plain_benchmark_problem(out: Path) -> str | None:
    """Why ``out`` is not plainly a baselines run folder (``None`` when it is): it may hold only
    :data:`BENCHMARK_ENTRIES`, a ``config.json`` of baselines config keys and result files."""
    extra = sorted(p.name for p in out.iterdir() if p.name not in BENCHMARK_ENTRIES and not p.name.endswith(".tmp"))
    if extra:
        return f"it holds {extra[:5]}{' and more' if len(extra) > 5 else ''}, which a baselines run does not write"
    for name in ("results", "runs"):
        if (out / name).exists() and not (out / name).is_dir():
            return f"its {name} is not a folder"
    results = out / "results"
    if results.is_dir():
        odd = sorted(p.name for p in results.iterdir() if not p.is_file() or not p.name.endswith((".json", ".tmp")))
        if odd:
            return f"its results folder holds {odd[:5]}, which a baselines run does not write"
    state = out / "config.json"
    if not state.is_file():
        return "it has no config.json file"
    try:
        saved = jsonio.loads(state.read_bytes(), f"{str(state)!r}")
    except (OSError, ValueError):
        return "its config.json is not valid JSON"
    if not isinstance(saved, dict) or not {"algos", "seeds", "steps"} <= set(saved) or \
            not set(saved) <= set(BaselinesConfig().to_dict()):
        return "its config.json is not a baselines config"
    return None


def check_folder(parser: argparse.ArgumentParser, args: argparse.Namespace, cfg: BaselinesConfig, out: Path) -> None:
    """A benchmark folder is never silently reused; ``--resume`` must keep what the finished runs used;
    ``--overwrite`` deletes only a folder that is plainly a baselines run, and only after every other check."""
    if out.exists() and not out.is_dir():
        parser.error(f"--out {str(out)!r}: it is a file, not a folder: give a folder for the benchmark")
    if args.resume:
        saved = read_saved_config(parser, out, "--resume")
        check_results(parser, out, "--resume")
        for key in FROZEN:
            if jsonio.to_strict(saved.get(key)) != jsonio.to_strict(getattr(cfg, key)):
                parser.error(f"--resume cannot change {key}: the benchmark has {key}={saved.get(key)!r}, this "
                             f"command gives {getattr(cfg, key)!r}; use another --out")
    elif out.exists() and any(out.iterdir()):
        if not args.overwrite:
            parser.error(f"{str(out)!r} already holds files: add --resume to continue that benchmark, --overwrite "
                         f"to delete it and start again, or choose another --out")
        problem = plain_benchmark_problem(out)
        if problem:
            parser.error(f"--overwrite: {str(out)!r} is not plainly a baselines run folder ({problem}): refusing to "
                         f"delete it; delete it yourself or choose another --out")
        shutil.rmtree(out)


def write_outputs(cfg: BaselinesConfig, out: Path, argv: list[str], skipped: dict[str, str],
                  failed: dict[str, str]) -> dict:
    """``baselines.json`` and ``baselines.png`` from every result saved so far."""
    results = load_results(out)
    summary = summarize(results, cfg.eval_opponents)
    report = {"benchmark": "baselines", "command": "python benchmarks/baselines.py " + " ".join(argv),
              "config": cfg.to_dict(), "step_definition": STEP_DEFINITION, "time_definition": TIME_DEFINITION,
              "eval_steps": cfg.eval_steps(), "versions": versions(), "machine": machine(), "skipped": skipped,
              "failed": failed,
              "runs": results, "summary": summary, "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    jsonio.write_json(out / "baselines.json", report)
    if any(r["evaluations"] for r in results):
        shown = [o for o in ("greedy-v0", "expert-v0") if o in cfg.eval_opponents] or cfg.eval_opponents[:1]
        plot(results, out / "baselines.png", shown)
    return report


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    cfg = resolve_config(parser, args)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        parser.error(f"--out {str(out)!r}: it is a file, not a folder: give a folder for the benchmark")
    if args.report:
        try:
            saved = load_config(BaselinesConfig, None, [f"{k}={json.dumps(v)}" for k, v in
                                                         read_saved_config(parser, out, "--report").items()])
        except ConfigError as exc:
            parser.error(f"--report: {out / 'config.json'}: {exc}")
        check_results(parser, out, "--report")
        report = write_outputs(saved, out, argv, {}, {})
        print(table(report["summary"], saved.eval_opponents))
        return 0
    try:  # every check before check_folder, which may delete the folder (--overwrite)
        check_hyperparameters(cfg, out / "runs")
    except ConfigError as exc:
        parser.error(str(exc))
    check_folder(parser, args, cfg, out)
    out.mkdir(parents=True, exist_ok=True)
    jsonio.write_json(out / "config.json", cfg.to_dict())
    skipped = {a: f"not installed: {', '.join(missing_modules(a))}" for a in cfg.algos if missing_modules(a)}
    for algo, why in skipped.items():
        print(f"skipping {algo}: {why}", flush=True)
    print(f"{len(cfg.algos) - len(skipped)} algorithms x {len(cfg.seeds)} seeds, {cfg.steps:,} steps each, "
          f"evaluated at {cfg.eval_steps()} ({cfg.eval_deals} deals per opponent); step = {STEP_DEFINITION}",
          flush=True)
    failed: dict[str, str] = {}
    for seed in cfg.seeds:
        for algo in cfg.algos:
            if algo in skipped:
                continue
            if result_path(out, algo, seed).exists():
                print(f"{run_name(algo, seed)}: finished before, skipped", flush=True)
                continue
            print(f"{run_name(algo, seed)}: training", flush=True)
            try:
                result = run_one(cfg, algo, seed, out)
            except KeyboardInterrupt:
                write_outputs(cfg, out, argv, skipped, failed)
                print(f"stopped during {run_name(algo, seed)}: continue with --resume", flush=True)
                return 130
            except ConfigError as exc:
                parser.error(str(exc))
            except Exception:  # one broken framework must not stop the others: report it, go on
                traceback.print_exc()
                failed[run_name(algo, seed)] = traceback.format_exc(limit=3).strip().splitlines()[-1]
                print(f"{run_name(algo, seed)}: FAILED (see above); --resume tries it again", flush=True)
                write_outputs(cfg, out, argv, skipped, failed)
                continue
            print(f"{run_name(algo, seed)}: done, {result['steps']:,} steps in {result['learn_seconds']:.0f} s of "
                  f"learning ({result['steps_per_second']:,.0f} steps/s), {result['wall_seconds']:.0f} s in all",
                  flush=True)
            write_outputs(cfg, out, argv, skipped, failed)
    report = write_outputs(cfg, out, argv, skipped, failed)
    print(table(report["summary"], cfg.eval_opponents))
    print(f"wrote {out / 'baselines.json'} and {out / 'baselines.png'}")
    if failed:
        print(f"{len(failed)} run(s) failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
