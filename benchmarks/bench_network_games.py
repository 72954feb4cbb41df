"""What a network agent's games cost next to scripted games (issue 17): whole evaluator processes.

    python benchmarks/bench_network_games.py                  # 60 deals, 5 alternating repeats: ~1 min
    python benchmarks/bench_network_games.py --games 400 --repeats 3
    python benchmarks/bench_network_games.py --profile         # and where the network run's time goes
    python benchmarks/bench_network_games.py --checkout /tmp/before   # the same, of another checkout

Runs ``python -m training.evaluate NETWORK greedy-v0 --games 60 --seed 0 --workers 1`` (default
``NETWORK`` ``ppo-2p-v0``) and, as the yardstick, ``python -m training.evaluate greedy-v0
greedy-v0`` with the same deals, alternately, ``--repeats`` times, so load from other jobs hits
both alike. Two measurements of each, in fresh processes, CPU time (user + system: wall time on
the shared machine moves with the other jobs; it is printed too):

* **games**: ``tt_env.evaluation.evaluate`` called in a process that has already imported
  torch and the project: loading the agents (the checkpoint, its tracing and the first-batch
  check of ``models/batch_policy.py``) and playing every game, what the games cost;
* **whole process**: the command above, start-up and imports included (importing torch alone
  costs a network agent over a second of CPU that a scripted run never pays).

It prints the medians and the ratios network / scripted; issue 17's target is at most 1.7x.

``--profile`` then runs the network evaluation once more in this process under cProfile and
prints the shares of its CPU time: importing torch, the network's forward passes, its
solver features, the scripted opponent, the engine and observations, and the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_header, print_table  # noqa: E402
from bench_evaluate import run_once  # noqa: E402

GROUPS = {
    "network forward passes": ("models/batch_policy.py:", "in_passes"),
    "network solver features": ("models/features.py:", "solver_features"),
    "network lookahead features": ("models/lookahead_features.py:", "lookahead_features"),
    "network expert features": ("models/expert_features.py:", "__call__"),
    "greedy-v0 decisions": ("tt_env/agents/greedy.py:", "act"),
    "expert-v0 decisions": ("tt_env/agents/expert.py:", "act"),
    "engine (apply)": ("tt_env/engine/game.py:", "apply"),
    "observations (encode)": ("tt_env/observation/encoding.py:", "encode"),
}
"""Profile groups: (file, function) whose cumulative time is the group's (they do not nest)."""


def evaluate_command(agents: list[str], games: int, seed: int) -> list[str]:
    return [sys.executable, "-m", "training.evaluate", *agents, "--games", str(games), "--seed", str(seed),
            "--workers", "1", "--quiet"]


def games_command(agents: list[str], games: int, seed: int) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", *agents, "--games", str(games),
            "--seed", str(seed)]




def child(agents: list[str], games: int, seed: int) -> None:
    """The games measurement: import first, then time ``evaluate`` (CPU and wall); prints JSON."""
    import torch  # noqa: F401 - imported before the clock starts, like the project

    import models.agent_loader  # noqa: F401
    from tt_env.evaluation.evaluator import evaluate

    cpu, wall = time.process_time(), time.perf_counter()
    report, _ = evaluate(agents, games, seed, workers=1)
    print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                      "games_played": report["games_played"]}))


def run_games(command: list[str], root: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run(command, cwd=root, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def profile_shares(agents: list[str], games: int, seed: int) -> list[tuple[str, float]]:
    """(group, CPU seconds) of one in-process evaluation, import of torch first, the rest last."""
    if "torch" in sys.modules:
        raise RuntimeError("--profile needs a process that has not imported torch yet")
    cpu0 = time.process_time()
    import torch  # noqa: F401 - timed: the network agent's first cost

    torch_seconds = time.process_time() - cpu0
    from tt_env.evaluation import evaluator as evaluate

    profiler = cProfile.Profile(time.process_time)
    cpu1 = time.process_time()
    profiler.enable()
    with contextlib.redirect_stdout(io.StringIO()):
        evaluate.main([*agents, "--games", str(games), "--seed", str(seed), "--workers", "1", "--quiet"])
    profiler.disable()
    total = time.process_time() - cpu1
    stats = pstats.Stats(profiler, stream=io.StringIO())
    shares = [("import torch", torch_seconds)]
    for group, (file, function) in GROUPS.items():
        seconds = sum(cum for (path, _, name), (_, _, _, cum, _) in stats.stats.items()  # type: ignore[attr-defined]
                      if path.replace("\\", "/").endswith(file.rstrip(":")) and name == function)
        if seconds:
            shares.append((group, seconds))
    shares.append(("everything else (imports, loading, tracing, the runner)", total - sum(s for _, s in shares[1:])))
    return shares


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=60, help="deals per run (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--network", default="ppo-2p-v0", help="the network agent (default ppo-2p-v0)")
    parser.add_argument("--opponent", default="greedy-v0", help="the scripted agent (default greedy-v0)")
    parser.add_argument("--profile", action="store_true", help="also profile one network run in this process")
    parser.add_argument("--checkout", metavar="DIR", default=str(ROOT),
                        help="run the evaluator of this checkout of the project (default: this one)")
    parser.add_argument("--child", nargs="+", metavar="AGENT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.games < 1 or args.repeats < 1:
        parser.error("--games and --repeats must be >= 1")
    if args.child:
        child(args.child, args.games, args.seed)
        return 0
    root = Path(args.checkout).resolve()
    if not (root / "training" / "evaluate.py").is_file():
        parser.error(f"--checkout {args.checkout}: no training/evaluate.py there (give a checkout of this project)")
    contenders = {f"{args.opponent} vs {args.opponent}": [args.opponent, args.opponent],
                  f"{args.network} vs {args.opponent}": [args.network, args.opponent]}
    print_header("training.evaluate: a network agent's games next to scripted games",
                 {"games": args.games, "seed": args.seed, "repeats": args.repeats, "workers": 1, "checkout": root})
    runs: dict[str, dict[str, list[float]]] = {name: {} for name in contenders}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeats):
            for k, (name, agents) in enumerate(contenders.items()):
                try:
                    games = run_games(games_command(agents, args.games, args.seed), root)
                    wall, cpu, report = run_once(evaluate_command(agents, args.games, args.seed), root,
                                                 Path(tmp) / f"run{rep}-{k}.json")
                except subprocess.CalledProcessError as exc:
                    print(f"error: {' '.join(map(str, exc.cmd[1:]))} failed with status {exc.returncode}\n"
                          f"{exc.stderr or ''}", file=sys.stderr)
                    return 1
                for key, value in (("games cpu", games["cpu"]), ("games wall", games["wall"]),
                                   ("process cpu", cpu), ("process wall", wall)):
                    runs[name].setdefault(key, []).append(value)
                print(f"repeat {rep + 1}: {name:<28} games: cpu {games['cpu']:6.2f} s  wall {games['wall']:6.2f} s   "
                      f"whole process: cpu {cpu:6.2f} s  wall {wall:6.2f} s   ({report['games_played']} games)",
                      flush=True)
    print()
    keys = ["games cpu", "games wall", "process cpu", "process wall"]
    medians = {name: [statistics.median(r[key]) for key in keys] for name, r in runs.items()}
    scripted, network = medians.values()
    rows = [[name, *(f"{m:.2f}" for m in values)] for name, values in medians.items()]
    rows.append(["ratio network / scripted", *(f"{n / s:.2f}x" for n, s in zip(network, scripted, strict=True))])
    print_table(["medians, s", *keys], rows)
    print(f"\nCPU ratio network / scripted: games {network[0] / scripted[0]:.2f}x, whole process "
          f"{network[2] / scripted[2]:.2f}x (issue 17's target: at most 1.7x)")
    if args.profile:
        shares = profile_shares([args.network, args.opponent], args.games, args.seed)
        total = sum(s for _, s in shares)
        print(f"\nwhere the CPU time of one {args.network} run goes (cProfile, in this process; "
              f"{total:.2f} s, profiling overhead included):")
        print_table(["part", "cpu s", "share"], [[g, f"{s:.2f}", f"{100 * s / total:.0f}%"] for g, s in shares])
    return 0


if __name__ == "__main__":
    sys.exit(main())
