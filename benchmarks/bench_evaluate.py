"""Evaluator speed: batched network decisions against one game at a time, same command, same run.

    python benchmarks/bench_evaluate.py                 # 3 x (both paths of 400 deals): ~10 min here
    python benchmarks/bench_evaluate.py --repeats 5 --games 400
    python benchmarks/bench_evaluate.py --reference /tmp/before   # also time a checkout from before

Runs ``python -m training.evaluate ppo-2p-v0 greedy-v0 --games 400 --seed 0 --workers 1`` as a
subprocess, alternately with ``--batch-size 1`` (one game at a time, the path before batching)
and with the default batching, ``--repeats`` times, so load from other jobs hits both alike.
``--reference DIR`` adds a third contender: the same command run from the checkout ``DIR``
(for instance ``git worktree add /tmp/before <commit before batching>``, with the C solver
built there), that is, the code as it was rather than its one-game-at-a-time path today.

Each run is timed as a whole process (start-up, checkpoint loading and tracing included):
wall time, and the CPU time of the process (user + system, from ``getrusage`` of the
children), which moves much less than wall time when other jobs share the cores. The script
prints one line per run, then the medians and the ratios of the medians, and checks that
both paths wrote the same JSON numbers (everything but ``seconds``, ``games_per_second`` and
``ms_per_move``); it exits with status 1 if they differ. A reference checkout's numbers are
compared too, but only reported: its network may break near-ties the other way.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_header, print_table  # noqa: E402

VARIABLE = ("seconds", "games_per_second")


def stable_numbers(report: dict) -> dict:
    """The report without what varies between runs (wall times, think times)."""
    out = {k: v for k, v in report.items() if k not in VARIABLE}
    out["agents"] = [{k: v for k, v in a.items() if k != "ms_per_move"} for a in report["agents"]]
    return out


def run_once(command: list[str], pythonpath: Path, json_path: Path) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds, JSON report) of one evaluator process."""
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command + ["--json", str(json_path)], cwd=pythonpath, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(json_path.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=400, help="deals per run (default 400)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each path (default 3)")
    parser.add_argument("--agents", nargs=2, default=["ppo-2p-v0", "greedy-v0"])
    parser.add_argument("--reference", metavar="DIR", help="also time the command run from this checkout")
    args = parser.parse_args(argv)
    if args.games < 1 or args.repeats < 1:
        parser.error("--games and --repeats must be >= 1")
    reference = Path(args.reference).resolve() if args.reference else None
    if reference is not None and not (reference / "training" / "evaluate.py").is_file():
        parser.error(f"--reference {args.reference}: no training/evaluate.py there (give a checkout of this project)")
    base = [sys.executable, "-m", "training.evaluate", *args.agents, "--games", str(args.games),
            "--seed", str(args.seed), "--workers", "1", "--quiet"]
    contenders = {"one game at a time (--batch-size 1)": (base + ["--batch-size", "1"], ROOT),
                  "batched (default --batch-size)": (base, ROOT)}
    if reference is not None:
        contenders[f"reference checkout {reference}"] = (base, reference)
    print_header("training.evaluate: batched network decisions vs one game at a time",
                 {"command": " ".join(["python"] + base[1:]), "repeats": args.repeats})
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    numbers: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeats):
            for k, (name, (command, path)) in enumerate(contenders.items()):
                wall, cpu, report = run_once(command, path, Path(tmp) / f"run{rep}-{k}.json")
                times[name].append((wall, cpu))
                numbers.setdefault(name, stable_numbers(report))
                print(f"repeat {rep + 1}: {name:<40} wall {wall:7.1f} s   cpu {cpu:7.1f} s   "
                      f"({report['games_played']} games)", flush=True)
    print()
    medians = {name: (statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts))
               for name, ts in times.items()}
    slow = medians["one game at a time (--batch-size 1)"]
    rows = []
    for name, (wall, cpu) in medians.items():
        walls = [w for w, _ in times[name]]
        rows.append([name, f"{wall:.1f} [{min(walls):.1f}, {max(walls):.1f}]", f"{cpu:.1f}",
                     f"{slow[0] / wall:.2f}x", f"{slow[1] / cpu:.2f}x"])
    print_table(["path", "wall s median [min, max]", "cpu s median", "speed-up (wall)", "speed-up (cpu)"], rows)
    if reference is not None:
        ref = medians[f"reference checkout {reference}"]
        fast = medians["batched (default --batch-size)"]
        print(f"\nbatched vs the reference checkout: {ref[0] / fast[0]:.2f}x (wall), {ref[1] / fast[1]:.2f}x (cpu)")
    first, *others = contenders
    same = all(numbers[name] == numbers[first] for name in others if not name.startswith("reference"))
    print(f"\nJSON numbers of the two paths identical: {'yes' if same else 'NO'}")
    if reference is not None:
        ref_same = numbers[f"reference checkout {reference}"] == numbers[first]
        print(f"JSON numbers of the reference checkout identical: {'yes' if ref_same else 'no (reported only)'}")
    for a in numbers[first]["agents"]:
        print(f"  {a['name']}: mean score {a['mean_score']:.3f}, win rate {a['win_rate']:.4f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
