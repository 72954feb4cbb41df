"""Scripted agents' speed: ms per decision of greedy-v0 and expert-v0, and expert-vs-expert games/s.

Run from the repository root::

    python benchmarks/bench_agents.py                  # defaults: 5 repetitions, 4 games of positions
    python benchmarks/bench_agents.py --num-players 3 --games 2 --repeats 7

What is measured:

* **ms per decision** over a fixed set of positions: every decision of ``--games`` full games
  (all rounds) played by ``expert-v0`` at every seat, recorded before any timing as
  (observation, action mask) pairs. A repetition calls ``agent.act`` once on every position;
  the time per position is the loop's time over the number of positions.
* **games/s**: ``--game-deals`` full expert-vs-expert games (deal ``d`` of seed ``--seed``,
  rotation 0, ``tt_env.evaluation.duplicate.play_game``) per repetition, the same deals for each
  contender.

Contenders: ``greedy-v0``, ``expert-v0``, and "expert-v0 before": the implementation before
its solver calls were batched (``tests/expert_reference.py``, a verbatim copy of the old code:
one ``best_melds`` call per possible draw), so one run shows before and after on the same
positions under the same load. The script checks, untimed, that both experts choose the same
action at every position (and exits 1 if not). Contenders run round-robin inside each
repetition; medians (min, max) over the repetitions are printed, wall clock and per CPU second
of this process (less sensitive to other jobs on a shared machine), with the before/after ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the old expert, kept there as the tests' reference
from _common import expert_positions, print_header, print_table, summarize  # noqa: E402
from expert_reference import ReferenceExpertAgent  # noqa: E402

from tt_env.agents import ExpertAgent, GreedyAgent  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.evaluation.duplicate import play_game  # noqa: E402


def time_once(work: Callable[[], None]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call of ``work``."""
    c0, t0 = time.process_time(), time.perf_counter()
    work()
    return time.perf_counter() - t0, max(time.process_time() - c0, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="repetitions (default 5)")
    parser.add_argument("--games", type=int, default=4, help="self-play games whose decisions are the positions")
    parser.add_argument("--game-deals", type=int, default=4, help="full expert-vs-expert games timed per repetition")
    parser.add_argument("--num-players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if min(args.repeats, args.games, args.game_deals) < 1:
        parser.error("--repeats, --games and --game-deals must be at least 1")

    print_header("Scripted agents: ms per decision and expert-vs-expert games/s", vars(args))
    rules = Rules(num_players=args.num_players)
    positions = expert_positions(rules, args.games, args.seed)
    new, old, greedy = ExpertAgent(rules), ReferenceExpertAgent(rules), GreedyAgent(rules)
    rng = np.random.default_rng(0)
    same = sum(new.act(o, m, rng) == old.act(o, m, rng) for o, m in positions)
    print(f"positions: {len(positions)} decisions of {args.games} expert-v0 self-play games; "
          f"expert-v0 and expert-v0 before choose the same action at {same}/{len(positions)}\n")
    if same != len(positions):
        print("ERROR: the two experts disagree")
        sys.exit(1)

    def decisions(agent) -> Callable[[], None]:
        def work() -> None:
            for o, m in positions:
                agent.act(o, m, rng)
        return work

    def games(agent_class) -> Callable[[], None]:
        agents = [agent_class(rules) for _ in range(args.num_players)]

        def work() -> None:
            for d in range(args.game_deals):
                play_game(agents, rules, args.seed, d, 0)
        return work

    contenders = [("greedy-v0", "decision", len(positions), decisions(greedy)),
                  ("expert-v0", "decision", len(positions), decisions(new)),
                  ("expert-v0 before", "decision", len(positions), decisions(old)),
                  ("expert-v0 vs itself", "game", args.game_deals, games(ExpertAgent)),
                  ("expert-v0 before vs itself", "game", args.game_deals, games(ReferenceExpertAgent))]
    for _, _, _, work in contenders[:3]:  # warm-up, untimed (solver tables, memo growth)
        work()
    wall: dict[str, list[float]] = {name: [] for name, *_ in contenders}
    cpu: dict[str, list[float]] = {name: [] for name, *_ in contenders}
    for rep in range(args.repeats):
        for name, _, count, work in contenders:
            w, c = time_once(work)
            wall[name].append(w / count)
            cpu[name].append(c / count)
        print(f"  repetition {rep + 1}/{args.repeats} done", flush=True)
    print()

    rows = []
    for name, unit, _, _ in contenders:
        med, lo, hi = summarize(wall[name])
        cpu_med = summarize(cpu[name])[0]
        if unit == "decision":
            rows.append([name, f"{1e3 * med:.3f} ms/decision", f"{1e3 * lo:.3f}", f"{1e3 * hi:.3f}",
                         f"{1e3 * cpu_med:.3f} ms/decision"])
        else:
            rows.append([name, f"{1 / med:.2f} games/s", f"{1 / hi:.2f}", f"{1 / lo:.2f}",
                         f"{1 / cpu_med:.2f} games/s"])
    print_table(["contender", "median (wall)", "best", "worst", "median (CPU)"], rows)
    print("(wall: time.perf_counter; CPU: time.process_time of this process)\n")
    for after, before, unit in [("expert-v0", "expert-v0 before", "per decision"),
                                ("expert-v0 vs itself", "expert-v0 before vs itself", "per game")]:
        ratio_wall = summarize(wall[before])[0] / summarize(wall[after])[0]
        ratio_cpu = summarize(cpu[before])[0] / summarize(cpu[after])[0]
        print(f"speed-up {after} over {before} ({unit}): {ratio_wall:.2f}x wall, {ratio_cpu:.2f}x CPU")
    ratio = summarize(wall["expert-v0"])[0] / summarize(wall["greedy-v0"])[0]
    print(f"expert-v0 / greedy-v0 time per decision: {ratio:.1f}x wall")


if __name__ == "__main__":
    main()
