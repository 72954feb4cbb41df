"""Speed of ``tt_env.search.determinize`` (search's hot path): microseconds per call on fixed positions.

Run from the repository root::

    python benchmarks/bench_determinize.py                 # defaults: 2, 3 and 4 players, 7 repetitions
    python benchmarks/bench_determinize.py --players 2 --repeats 11

Positions: every decision of ``--games`` random-play games (all rounds) per player count, as
(observation, action mask) of the seat to move, recorded before any timing. A repetition calls
``determinize`` once on every position (the mask given, as ``ismcts-v0`` does) and divides
the loop's time by the number of positions. Medians (min, max) over the repetitions are
printed, wall clock and per CPU second of this process.

``--baseline FILE`` times a second ``determinize`` in the same process, round-robin with this
checkout's: ``FILE`` is another version of ``tt_env/search.py`` (say ``git show
ed7a31e:tt_env/search.py > /tmp/search_before.py``), loaded as a module of this ``tt_env``
package, so both run on the same positions under the same load; the ratio of the medians
is printed (quote it, not single runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import print_header, print_table, summarize

from tt_env.engine import game
from tt_env.engine.rules import Rules
from tt_env.observation import encode
from tt_env.search import determinize


def record_positions(rules: Rules, games: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, action mask) of the seat to move at every decision of ``games`` random games."""
    rng = np.random.default_rng(seed)
    positions = []
    for _ in range(games):
        state = game.new_game(rules, rng)
        while not state.game_over:
            positions.append((encode(state, state.current_player), game.action_mask(state)))
            game.apply(state, int(rng.choice(game.legal_actions(state))))
    return positions


def load_baseline(path: str):
    """``determinize`` of another version of ``tt_env/search/worlds.py`` (or the older
    ``tt_env/search.py``), imported as a module of ``tt_env``."""
    # tt_env/search/worlds.py imports from ``..``; the older tt_env/search.py from ``.``
    package_level = "from ..engine" in Path(path).read_text(encoding="utf-8")
    name = "tt_env.search._worlds_baseline" if package_level else "tt_env._search_baseline"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.determinize


def time_once(positions: list[tuple[np.ndarray, np.ndarray]], rules: Rules, seed: int,
              determinize=determinize) -> tuple[float, float]:
    """(wall, CPU) microseconds per determinize call over ``positions``."""
    rng = np.random.default_rng(seed)
    wall, cpu = time.perf_counter(), time.process_time()
    for obs, mask in positions:
        determinize(obs, rules, rng, action_mask=mask)
    n = len(positions)
    return (time.perf_counter() - wall) * 1e6 / n, (time.process_time() - cpu) * 1e6 / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", default="2,3,4", help="player counts, comma-separated (default 2,3,4)")
    parser.add_argument("--games", type=int, default=2, help="random games recorded per player count (default 2)")
    parser.add_argument("--repeats", type=int, default=7, help="repetitions (default 7)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", metavar="FILE", help="another version of tt_env/search.py, timed alongside")
    args = parser.parse_args(argv)
    print_header("determinize: microseconds per call", vars(args))
    import tt_env
    print(f"tt_env from:    {os.path.dirname(tt_env.__file__)}\n")
    counts = [int(p) for p in args.players.split(",")]
    pools = {n: record_positions(Rules(num_players=n), args.games, args.seed) for n in counts}
    versions = {"this checkout": determinize}
    if args.baseline:
        versions["baseline"] = load_baseline(args.baseline)
    walls = {(v, n): [] for v in versions for n in counts}
    cpus = {(v, n): [] for v in versions for n in counts}
    for rep in range(args.repeats):
        for n in counts:
            for v, fn in versions.items():
                w, c = time_once(pools[n], Rules(num_players=n), args.seed + rep, fn)
                walls[v, n].append(w)
                cpus[v, n].append(c)
        print(f"repetition {rep + 1}: " + ", ".join(f"{v} {n}p {walls[v, n][-1]:.1f} us"
                                                   for n in counts for v in versions))
    print()
    rows = []
    for n in counts:
        for v in versions:
            wm, wlo, whi = summarize(walls[v, n])
            cm, clo, chi = summarize(cpus[v, n])
            rows.append([f"{v}, {n} players", str(len(pools[n])), f"{wm:.1f} ({wlo:.1f}-{whi:.1f})",
                         f"{cm:.1f} ({clo:.1f}-{chi:.1f})"])
    print_table(["determinize, positions", "count", "us/call wall, median (min-max)",
                 "us/call CPU, median (min-max)"], rows)
    if args.baseline:
        print()
        for n in counts:
            wr = summarize(walls["this checkout", n])[0] / summarize(walls["baseline", n])[0]
            cr = summarize(cpus["this checkout", n])[0] / summarize(cpus["baseline", n])[0]
            print(f"{n} players: this checkout / baseline = {wr:.3f} (wall), {cr:.3f} (CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
