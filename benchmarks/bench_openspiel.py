"""Random play through pyspiel: our ``python_three_thirteen`` next to OpenSpiel's C++ ``gin_rummy``.

Run from the repository root (after ``pip install -e ".[openspiel]"``)::

    python benchmarks/bench_openspiel.py                     # 5 repetitions x 2 s per contender
    python benchmarks/bench_openspiel.py --repeats 7 --seconds 3 --num-players 3
    python benchmarks/bench_openspiel.py --profile           # plus where our game's time goes

Both games run the same loop, through pyspiel's API only: ``game.new_initial_state()`` when a
game ends; at a chance node, ``state.chance_outcomes()`` and one outcome sampled from them
(seeded ``numpy.random.Generator``) and applied; at a decision node ``state.legal_actions()``
and a uniformly random one applied. One *step* is one player decision: chance nodes are
timed but not counted, in both games (ours has one per card dealt and per stock draw; gin
rummy one per card dealt and per stock draw too). The ``+ obs`` rows also read
``state.observation_tensor()`` into a numpy array at every decision, as an RL loop does (for
ours, the env's observation). A third contender plays the same random game on our engine
directly (``engine.legal_actions``/``engine.apply``, its own random deals and draws, and
``tt_env.observation.encode`` in the ``+ obs`` row), which shows what the pyspiel layer costs.

Contenders are interleaved round-robin within each repetition, so load from other jobs hits
all alike; the table shows the median, min and max over the repetitions (wall clock) and the
median of steps per CPU second of this process. ``--profile`` runs our game's loop under
cProfile and sums the time by where it is spent (pyspiel's C++ and pybind11 layer, our adapter
module, the engine, the meld solver, the observation encoder, ...), then lists the top
functions.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _common import (Timed, add_timing_args, fmt_rate, print_header, print_table, run_for,  # noqa: E402
                     summarize, time_round_robin)

CHECK_EVERY = 64  # steps between clock reads inside the timed loop


@dataclass
class Contender(Timed):
    """One game under test: ``run(seconds)`` plays on and returns (decisions, elapsed)."""

    counts: dict


def make_contender(name: str, game, seed: int, observe: bool) -> Contender:
    """Random play of ``game`` through pyspiel (module docstring)."""
    rng = np.random.default_rng(seed)
    box = {"state": game.new_initial_state()}
    counts = {"games": 0, "decisions": 0, "chance": 0}

    def play() -> int:
        state = box["state"]
        integers, random, asarray, f32 = rng.integers, rng.random, np.asarray, np.float32
        steps = chance = 0
        for _ in range(CHECK_EVERY):
            if state.is_terminal():
                counts["games"] += 1
                state = game.new_initial_state()
            elif state.is_chance_node():  # timed, not counted as a step
                u, acc = random(), 0.0
                for a, p in state.chance_outcomes():
                    acc += p
                    if u < acc:
                        break
                state.apply_action(a)
                chance += 1
            else:
                if observe:
                    _x = asarray(state.observation_tensor(), dtype=f32)
                legal = state.legal_actions()
                state.apply_action(legal[integers(len(legal))])
                steps += 1
        box["state"] = state
        counts["decisions"] += steps
        counts["chance"] += chance
        return steps

    return Contender(name, lambda seconds: run_for(seconds, play), counts)


def make_engine_contender(name: str, rules, seed: int, observe: bool) -> Contender:
    """The same random play on our engine directly, without pyspiel (its own deals and draws)."""
    from tt_env.engine import game as engine
    from tt_env.observation import encode

    rng = np.random.default_rng(seed)
    box = {"state": engine.new_game(rules, np.random.default_rng(seed))}
    counts = {"games": 0, "decisions": 0, "chance": 0}
    legal_actions, apply = engine.legal_actions, engine.apply

    def play() -> int:
        state = box["state"]
        integers = rng.integers
        for _ in range(CHECK_EVERY):
            if state.game_over:
                counts["games"] += 1
                state = engine.new_game(rules, rng)
            if observe:
                _x = encode(state, state.current_player)
            legal = legal_actions(state)
            apply(state, legal[integers(len(legal))])
        box["state"] = state
        counts["decisions"] += CHECK_EVERY
        return CHECK_EVERY

    return Contender(name, lambda seconds: run_for(seconds, play), counts)


def build(args: argparse.Namespace) -> list[Contender]:
    import pyspiel

    import tt_env.openspiel.game  # noqa: F401  (registers python_three_thirteen)

    ours = pyspiel.load_game("python_three_thirteen", {"num_players": args.num_players, "rounds": args.rounds})
    gin = pyspiel.load_game("gin_rummy")
    label = f"python_three_thirteen {args.num_players}p"
    engine_label = f"our engine directly {args.num_players}p"
    contenders = [make_contender(label, ours, args.seed, False),
                  make_contender("gin_rummy (C++)", gin, args.seed, False),
                  make_engine_contender(engine_label, ours.rules, args.seed, False)]
    if not args.no_obs:
        contenders += [make_contender(f"{label} + obs", ours, args.seed, True),
                       make_contender("gin_rummy (C++) + obs", gin, args.seed, True),
                       make_engine_contender(f"{engine_label} + obs", ours.rules, args.seed, True)]
    return contenders


def where_the_time_goes(args: argparse.Namespace, seconds: float, top: int) -> None:
    """cProfile our game's random play and sum the time by layer."""
    import pyspiel

    game = pyspiel.load_game("python_three_thirteen", {"num_players": args.num_players, "rounds": args.rounds})
    contender = make_contender("profiled", game, args.seed, not args.no_obs)
    profile = cProfile.Profile()
    profile.enable()
    steps, _ = contender.run(seconds)
    profile.disable()
    stats = pstats.Stats(profile)
    layers: dict[str, float] = defaultdict(float)
    total = 0.0
    for (path, _line, func), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():
        layers[_layer(path, func)] += tottime
        total += tottime
    print(f"where the time goes: python_three_thirteen, {steps:,} decisions in {seconds:g} s under cProfile "
          f"(profiling slows Python code more than C++, so read the shares, not the rate)")
    rows = [[name, f"{t:.3f}", f"{100 * t / total:5.1f}%", f"{1e6 * t / max(steps, 1):.1f}"]
            for name, t in sorted(layers.items(), key=lambda kv: -kv[1])]
    print_table(["layer (own time)", "seconds", "share", "us / decision"], rows)
    print()
    print(f"top {top} functions by own time:")
    stats.sort_stats("tottime").print_stats(top)


def _layer(path: str, func: str) -> str:
    """The layer a profiled function belongs to."""
    norm = path.replace("\\", "/")
    if "pyspiel" in func or "pybind11" in func:
        return "pyspiel (C++ API and pybind11 calls)"
    if "/tt_env/engine/melds" in norm or "_meldsolver" in func or "least_penalty" in func:
        return "meld solver (engine, C)"
    if "/tt_env/engine/" in norm:
        return "engine (tt_env.engine)"
    if "/tt_env/openspiel" in norm:
        return "adapter (tt_env.openspiel_*)"
    if "/tt_env/" in norm:
        return "observation and other tt_env"
    if "bench_openspiel" in norm or "benchmarks/_common" in norm:
        return "benchmark loop"
    if "numpy" in norm or "numpy" in func:
        return "numpy"
    if "copy" in norm or "deepcopy" in func:
        return "copy module"
    return "other (builtins, stdlib)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_timing_args(parser, "contender")
    parser.add_argument("--num-players", type=int, default=2, help="players in our game (default 2)")
    parser.add_argument("--rounds", default="1,2,3,4,5,6,7,8,9,10,11", help="rounds of our game (default all)")
    parser.add_argument("--no-obs", action="store_true", help="skip the rows that also read observation_tensor()")
    parser.add_argument("--profile", action="store_true", help="also show where our game's time goes (cProfile)")
    parser.add_argument("--profile-seconds", type=float, default=5.0)
    parser.add_argument("--top", type=int, default=15, help="functions listed by --profile")
    args = parser.parse_args()
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("--repeats must be >= 1 and --seconds > 0")
    from tt_env.openspiel.game import rules_from_params

    try:
        rules_from_params({"num_players": args.num_players, "rounds": args.rounds})
    except ValueError as exc:
        parser.error(str(exc))

    print_header("Random play through pyspiel: decisions/s (chance nodes timed, not counted)", vars(args))
    contenders = build(args)
    for c in contenders:
        c.run(args.warmup)
    base = {c.name: dict(c.counts) for c in contenders}
    time_round_robin(contenders, args.repeats, args.seconds)
    print()
    rows, med, cpu = [], {}, {}
    for c in contenders:
        m, lo, hi = summarize(c.rates)
        med[c.name], cpu[c.name] = m, summarize(c.cpu_rates)[0]
        games = c.counts["games"] - base[c.name]["games"]
        decisions = c.counts["decisions"] - base[c.name]["decisions"]
        chance = c.counts["chance"] - base[c.name]["chance"]
        rows.append([c.name, fmt_rate(m), fmt_rate(lo), fmt_rate(hi), fmt_rate(cpu[c.name]),
                     f"{decisions / games:,.0f}" if games else "n/a",
                     f"{chance / max(decisions, 1):.2f}"])
    print_table(["game", "median steps/s", "min", "max", "steps/CPU-s", "decisions/game",
                 "chance/decision"], rows)
    print("(steps/s: wall clock; steps/CPU-s: the same steps over this process's CPU time)")
    print()
    label = f"python_three_thirteen {args.num_players}p"
    engine_label = f"our engine directly {args.num_players}p"
    for suffix in ("", " + obs"):
        ours, gin, direct = label + suffix, "gin_rummy (C++)" + suffix, engine_label + suffix
        if ours in med:
            what = suffix.strip(" +") or "play only"
            print(f"{what:>9}: python_three_thirteen / gin_rummy {med[ours] / med[gin]:5.2f}x wall, "
                  f"{cpu[ours] / cpu[gin]:5.2f}x CPU; engine directly / python_three_thirteen "
                  f"{med[direct] / med[ours]:5.2f}x wall, {cpu[direct] / cpu[ours]:5.2f}x CPU (medians)")
    if args.profile:
        print()
        where_the_time_goes(args, args.profile_seconds, args.top)


if __name__ == "__main__":
    main()
