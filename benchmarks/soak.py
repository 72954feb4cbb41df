"""Soak test: random games over many rule configurations, every invariant checked every step.

Run from the repository root::

    python benchmarks/soak.py --steps 1000000 --seed 0              # one process
    python benchmarks/soak.py --steps 10000000 --seed 0 --workers 2
    python benchmarks/soak.py --seed 0 --game 1234                  # re-run one game, verbosely

Game ``g`` of a run has a configuration and a seed that depend only on ``(--seed, g)``
(``soak_checks.game_spec``): 2 to 8 players, ``decks`` auto or explicit (up to 64), both ace
rules, all rounds or a subset, both values of ``discard_drawn_discard`` and
``meld_needs_natural``, turn caps from 1 to 200 (small ones are hit often), the three reward
modes; every seat plays uniformly random legal moves, except in about a quarter of the games
where some seats play ``greedy-v0``. The run plays games 0, 1, 2, ... until ``--steps``
actions have been checked (the last game is played to its end), so the games, the counts
and the verdict are the same for any ``--workers``. What is checked is listed in
``soak_checks.py``.

It prints the steps checked, games, rounds, reshuffles, turn caps hit, configurations and
every violation with what reproduces it (the configuration, the env seed, the step, and a
``--game`` command), and exits 1 if there was any violation, else 0.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from soak_checks import GameResult, game_spec, play_game, ref_least_penalty  # noqa: E402

BLOCK = 16  # games per task handed to a worker
COUNTERS = ("steps", "rounds", "reshuffles", "turn_caps", "went_out", "bans", "reference_checks", "twin_checks")


def play_block(args: tuple[int, int, int]) -> list[GameResult]:
    """Games ``first .. first + count - 1`` of run ``seed``."""
    seed, first, count = args
    return [play_game(game_spec(seed, g)) for g in range(first, first + count)]


def results_in_order(seed: int, workers: int) -> Iterator[GameResult]:
    """Every game's result, game 0 first; workers run ahead by at most ``2 * workers`` blocks."""
    if workers == 1:
        g = 0
        while True:
            yield play_game(game_spec(seed, g))
            g += 1
    ctx = multiprocessing.get_context("spawn" if sys.platform == "win32" else "fork")
    with ctx.Pool(workers) as pool:
        pending, next_block = {}, 0
        for _ in range(2 * workers):
            pending[next_block] = pool.apply_async(play_block, ((seed, next_block * BLOCK, BLOCK),))
            next_block += 1
        block = 0
        while True:
            results = pending.pop(block).get()
            pending[next_block] = pool.apply_async(play_block, ((seed, next_block * BLOCK, BLOCK),))
            next_block += 1
            block += 1
            yield from results


def run(steps: int, seed: int, workers: int, progress: bool = True, max_violations: int = 20) -> dict:
    """Play games until ``steps`` steps are checked (or ``max_violations`` games failed: a
    broken engine may fail every game at its first step); the totals and the violations."""
    totals: Counter = Counter()
    configs: set = set()
    players: Counter = Counter()
    violations: list[dict] = []
    games = greedy_games = 0
    t0 = time.perf_counter()
    next_report = 0.1
    results = results_in_order(seed, workers)
    for result in results:
        spec = game_spec(seed, result.index)
        games += 1
        configs.add(spec.rules)
        players[spec.rules.num_players] += 1
        greedy_games += bool(spec.greedy_seats)
        for key in COUNTERS:
            totals[key] += getattr(result, key)
        if result.violation:
            violations.append(result.violation)
        if progress and totals["steps"] >= next_report * steps and totals["steps"] < steps:
            elapsed = time.perf_counter() - t0
            print(f"  {totals['steps']:,} steps ({totals['steps'] / steps:.0%}), {games:,} games, "
                  f"{len(violations)} violations, {elapsed:,.0f} s", flush=True)
            next_report += 0.1
        if totals["steps"] >= steps or len(violations) >= max_violations:
            break
    results.close()  # stops the workers
    elapsed = time.perf_counter() - t0
    return {"totals": dict(totals), "games": games, "configurations": len(configs), "players": dict(players),
            "greedy_games": greedy_games, "violations": violations, "max_violations": max_violations,
            "seconds": elapsed}


def report(summary: dict, seed: int, workers: int) -> str:
    t = summary["totals"]
    steps, seconds = t.get("steps", 0), summary["seconds"]
    players = ", ".join(f"{n}p {c:,}" for n, c in sorted(summary["players"].items()))
    lines = [
        f"soak: {steps:,} steps checked in {seconds:,.1f} s ({steps / max(seconds, 1e-9):,.0f} steps/s), "
        f"seed {seed}, {workers} worker(s)",
        f"games {summary['games']:,} ({players}; {summary['greedy_games']:,} with greedy-v0 seats)",
        f"rounds {t.get('rounds', 0):,}, went out {t.get('went_out', 0):,}, turn caps hit {t.get('turn_caps', 0):,}, "
        f"reshuffles {t.get('reshuffles', 0):,}, discards under the ban {t.get('bans', 0):,}",
        f"configurations {summary['configurations']:,} distinct rule sets",
        f"solver checked at every round end; against the brute-force reference {t.get('reference_checks', 0):,} "
        f"times{'' if ref_least_penalty else ' (tests/reference_solver.py not found)'}, against the pure-Python "
        f"twin {t.get('twin_checks', 0):,} times",
        f"violations: {len(summary['violations'])}"
        + (f" (stopped at the limit, --max-violations {summary['max_violations']})"
           if len(summary["violations"]) >= summary["max_violations"] else ""),
    ]
    for v in summary["violations"]:
        lines += [f"  VIOLATION [{v['check']}] game {v['game']}, step {v['step']} of that game: {v['message']}",
                  "    (step k: after the game's k-th action; step 0: the deal)",
                  f"    at: {v['state']}",
                  f"    config: {v['config']}",
                  f"    reproduce: python benchmarks/soak.py --seed {seed} --game {v['game']}"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000,
                        help="steps (actions) to check, at least (default 100000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the run: every game's rules and deal (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1); results do not depend on it")
    parser.add_argument("--game", type=int, default=None, help="play only this game of the run and show it")
    parser.add_argument("--max-violations", type=int, default=20,
                        help="stop after this many games with a violation (default 20)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps {args.steps}: use an integer >= 1")
    if args.seed < 0:
        parser.error(f"--seed {args.seed}: use an integer >= 0")
    if args.workers < 1:
        parser.error(f"--workers {args.workers}: use an integer >= 1")
    if args.max_violations < 1:
        parser.error(f"--max-violations {args.max_violations}: use an integer >= 1")
    if args.game is not None:
        if args.game < 0:
            parser.error(f"--game {args.game}: use an integer >= 0")
        spec = game_spec(args.seed, args.game)
        result = play_game(spec)
        print(f"game {args.game} of seed {args.seed}: {spec.describe()}")
        print(f"{result.steps:,} steps, {result.rounds} rounds, {result.reshuffles} reshuffles, "
              f"{result.turn_caps} turn caps hit, {result.went_out} went out")
        if result.violation:
            v = result.violation
            print(f"VIOLATION [{v['check']}] at step {v['step']}: {v['message']}\n  at: {v['state']}")
            return 1
        print("no violation")
        return 0
    summary = run(args.steps, args.seed, args.workers, progress=not args.quiet, max_violations=args.max_violations)
    print(report(summary, args.seed, args.workers))
    return 1 if summary["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
