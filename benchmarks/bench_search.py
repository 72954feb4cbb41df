"""The search agents' speed: ms per decision of ``ismcts-v1`` (and ``ismcts-v0``) at their defaults.

Run from the repository root (needs torch, for the belief)::

    python benchmarks/bench_search.py                              # 2, 3 and 4 players, 3 repetitions
    python benchmarks/bench_search.py --players 3 --positions 60 --option worlds=12

What is measured: ``--positions`` decisions per player count, evenly spaced over every decision
of ``--games`` full ``expert-v0`` self-play games (all rounds; recorded before any timing as
(observation, action mask) pairs). A repetition calls ``agent.act`` once on each, with the
same seeded generator per position, so every repetition does the same work; its time over the
number of positions is its ms per decision. Medians (min, max) over repetitions, wall clock and
CPU time of this process (less sensitive to other jobs on a shared machine), and the 95th
percentile of single decisions in the last repetition. Issue 16 asks ``ismcts-v1`` for at most
250 ms a decision on the 2-core machine at its default budget (worlds, never seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import expert_positions, print_header, print_table, summarize  # noqa: E402

from tt_env.agents import make_agent  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402

BUDGET_MS = 250.0
"""Issue 16's ceiling for ``ismcts-v1``'s mean time per decision at its defaults."""


def spaced_positions(rules: Rules, games: int, count: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` (observation, mask) pairs evenly spaced over every decision of expert self-play games."""
    every = expert_positions(rules, games, seed)
    picks = np.linspace(0, len(every) - 1, num=min(count, len(every))).round().astype(int)
    return [every[i] for i in picks]


def parse_option(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--option takes KEY=VALUE (a JSON value), not {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def time_agent(agent, positions, repeats: int) -> tuple[list[float], list[float], float]:
    """(wall s/decision per repetition, CPU s/decision per repetition, p95 of one decision in the last)."""
    wall, cpu, single = [], [], []
    for _ in range(repeats):
        single = []
        c0, t0 = time.process_time(), time.perf_counter()
        for i, (obs, mask) in enumerate(positions):
            s = time.perf_counter()
            agent.act(obs, mask, np.random.default_rng(i))
            single.append(time.perf_counter() - s)
        wall.append((time.perf_counter() - t0) / len(positions))
        cpu.append((time.process_time() - c0) / len(positions))
    return wall, cpu, float(np.percentile(single, 95))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], choices=range(2, 7), metavar="N",
                        help="player counts (default 2 3 4)")
    parser.add_argument("--agents", nargs="+", default=["ismcts-v1"], help="search agents (default ismcts-v1)")
    parser.add_argument("--positions", type=int, default=40, help="decisions timed per player count (default 40)")
    parser.add_argument("--games", type=int, default=2, help="self-play games the positions come from")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE",
                        help="an agent option for every agent (e.g. worlds=12); repeatable")
    args = parser.parse_args()
    if min(args.positions, args.games, args.repeats) < 1:
        parser.error("--positions, --games and --repeats must be at least 1")
    options = dict(args.option)
    print_header("Search agents: ms per decision at their default budget", vars(args))
    rows, over = [], []
    for n in args.players:
        rules = Rules(num_players=n)
        positions = spaced_positions(rules, args.games, args.positions, args.seed)
        for name in args.agents:
            try:
                agent = make_agent(name, rules, **options)
            except (ValueError, KeyError) as exc:  # an unknown name or option; no shipped belief for n players
                parser.error(f"{name} at {n} players: {exc}")
            agent.act(*positions[0], np.random.default_rng(0))  # warm-up, untimed (solver tables, belief)
            wall, cpu, p95 = time_agent(agent, positions, args.repeats)
            med, lo, hi = summarize(wall)
            worlds = getattr(agent, "worlds", "-")
            rows.append([f"{name} ({n}p, {worlds} worlds)", f"{1e3 * med:.0f}", f"{1e3 * lo:.0f}", f"{1e3 * hi:.0f}",
                         f"{1e3 * summarize(cpu)[0]:.0f}", f"{1e3 * p95:.0f}"])
            if name == "ismcts-v1" and not options and 1e3 * med > BUDGET_MS:
                over.append(f"{n}p")
            print(f"  {name} at {n} players: {len(positions)} positions timed", flush=True)
    print()
    print_table(["agent", "median ms/decision (wall)", "best", "worst", "median (CPU)", "p95 one decision"], rows)
    print("(wall: time.perf_counter; CPU: time.process_time of this process)")
    if over:
        print(f"ismcts-v1 is over {BUDGET_MS:.0f} ms a decision (wall median) at {', '.join(over)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
