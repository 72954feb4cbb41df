"""RLlib training scale-out on one machine: iteration time, sampled steps/s and memory by env runners.

    python benchmarks/bench_rllib.py                                  # 0, 1, 2 env runners
    python benchmarks/bench_rllib.py --runners 0,2,4 --iterations 6 --batch 8000 --repeats 3

Each contender is one run of ``python -m training.train_rllib --config configs/rllib_default.yaml``
with ``--env-runners R`` (its own local Ray, started and stopped by the script), round-robin
over ``--repeats``. From the run's ``metrics.jsonl`` it takes the **median** over iterations 2..N
(the first one warms up) of the iteration time and of the sampled env steps per second. Memory
is the peak, sampled every 0.5 s, of the summed PSS (proportional set size: shared pages split
between the processes that map them, so the sum is the real footprint) of the run's whole
process tree: driver, Ray's GCS and raylet, and the EnvRunner workers (Linux ``/proc`` only).
Wall time includes starting Ray and importing everything.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_header, print_table  # noqa: E402


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(entry))
    return kids


def tree_pss_mb(root: int) -> float:
    """Summed PSS (MB) of ``root`` and all its descendants."""
    kids, todo, total = _children(), [root], 0
    while todo:
        pid = todo.pop()
        todo.extend(kids.get(pid, []))
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
        except OSError:
            pass
    return total / 1024


def run_once(runners: int, args: argparse.Namespace) -> dict:
    out = Path(tempfile.mkdtemp(prefix="bench-rllib-"))
    cmd = [sys.executable, "-m", "training.train_rllib", "--config", "configs/rllib_default.yaml",
           "--iterations", str(args.iterations), "--env-runners", str(runners), "--out", str(out),
           "--set", f"train_batch_size={args.batch}", "--set", f"minibatch_size={args.minibatch}",
           "--set", f"num_envs={args.num_envs}", "--set", "export_every=0"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_pss_mb(proc.pid))
        time.sleep(0.5)
    wall = time.perf_counter() - t0
    log = proc.stdout.read() if proc.stdout else ""
    if proc.returncode != 0:
        raise RuntimeError(f"run with {runners} env runners failed (run folder kept: {out}):\n{log[-3000:]}")
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    shutil.rmtree(out, ignore_errors=True)
    timed = rows[1:] or rows
    return {"runners": runners, "iter_s": statistics.median(r["seconds"] for r in timed),
            "steps_per_s": statistics.median(r["steps_per_second"] for r in timed),
            "steps": statistics.median(r["env_steps"] for r in timed), "peak_pss_mb": peak, "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runners", default="0,1,2", help="comma-separated env runner counts")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--batch", type=int, default=4000, help="train_batch_size (env steps per iteration)")
    parser.add_argument("--minibatch", type=int, default=256)
    parser.add_argument("--num-envs", type=int, default=4, help="environments per env runner")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    runner_counts = [int(x) for x in args.runners.split(",")]
    print_header("RLlib PPO (training/train_rllib.py): scale-out over env runners", vars(args))
    results: dict[int, list[dict]] = {r: [] for r in runner_counts}
    for rep in range(args.repeats):
        for r in runner_counts:
            res = run_once(r, args)
            results[r].append(res)
            print(f"repeat {rep + 1}: {r} env runners: {res['iter_s']:.2f} s/iteration, "
                  f"{res['steps_per_s']:.0f} steps/s, peak {res['peak_pss_mb']:.0f} MB, wall {res['wall_s']:.0f} s",
                  flush=True)
    print()
    rows = []
    for r in runner_counts:
        med = {k: statistics.median(x[k] for x in results[r]) for k in ("iter_s", "steps_per_s", "peak_pss_mb",
                                                                       "wall_s", "steps")}
        rows.append([str(r), f"{med['steps']:.0f}", f"{med['iter_s']:.2f}", f"{med['steps_per_s']:.0f}",
                     f"{med['peak_pss_mb']:.0f}", f"{med['wall_s']:.0f}"])
    print_table(["env runners", "steps/iter", "s/iteration", "steps/s", "peak PSS MB", "wall s"], rows)


if __name__ == "__main__":
    main()
