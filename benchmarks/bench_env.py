"""Environment throughput under random masked play: ours against RLCard and OpenSpiel.

Run from the repository root (after ``pip install -e ".[bench]"``)::

    python benchmarks/bench_env.py                       # defaults: 5 repetitions x 2 s per env
    python benchmarks/bench_env.py --repeats 7 --seconds 3
    python benchmarks/bench_env.py --envs tt_raw,openspiel

What one "step" is, for every environment: one *player decision*, i.e. one legal action
chosen uniformly at random (seeded ``numpy.random.Generator``) after reading that step's
observation and legal-action set. Work the environment has to do between decisions is
inside the timed loop but is not counted as a step:

* ours (PettingZoo AEC, ``raw_env`` and the wrapped ``env``): each iteration calls
  ``e.last()`` (which builds the observation dict), reads ``obs["observation"]`` and
  ``obs["action_mask"]``, and either ``e.step(a)`` with a random legal action (counted) or
  ``e.step(None)`` for an agent that is already terminated/truncated (timed, NOT counted).
  When no agents are left, ``e.reset()`` (timed).
* RLCard ``gin-rummy``: every ``env.step(a)`` is a player decision and is counted; the state
  returned by ``env.step`` already contains ``obs`` (a numpy array) and ``legal_actions``,
  both read each step. ``env.reset()`` when ``env.is_over()`` (timed).
* OpenSpiel ``gin_rummy`` (C++ through pybind11): at a decision node we convert
  ``state.observation_tensor()`` to a numpy float32 array, read ``state.legal_actions()``
  and ``state.apply_action(a)`` (counted). Chance nodes (the deal, and the card revealed
  after every stock draw) are sampled from ``state.chance_outcomes()`` and applied inside
  the timed loop but NOT counted, so all environments count decisions only.

The environments are interleaved round-robin within each repetition, so load from other
jobs on a shared machine hits all of them alike; the table shows the median, min and max
over the repetitions (wall clock), plus the median of steps per CPU second of this
process (``time.process_time``), which is steadier when other jobs share the cores. Games
have different lengths; the decisions-per-game column says
how long an episode is for each.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (Timed, add_timing_args, fmt_rate, print_header, print_table, run_for,  # noqa: E402
                     summarize, time_round_robin)

CHECK_EVERY = 32  # steps between clock reads inside the timed loop


@dataclass
class Runner(Timed):
    """One environment under test: ``run(seconds)`` plays on and returns (steps, elapsed)."""

    episodes: Callable[[], int]
    note: str = ""
    steps_total: int = 0


# --------------------------------------------------------------------------------------
# PettingZoo AEC (ours, or connect_four_v3 as a stand-in while ours does not exist)
# --------------------------------------------------------------------------------------

def make_aec_runner(name: str, make_env: Callable[[], object], seed: int, note: str = "") -> Runner:
    e = make_env()
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    state = {"episodes": 0}

    def play() -> int:
        env = e
        last, step = env.last, env.step
        integers, flatnonzero = rng.integers, np.flatnonzero
        steps = 0
        for _ in range(CHECK_EVERY):
            obs, _rew, term, trunc, _info = last()
            if term or trunc:
                step(None)
            else:
                _x = obs["observation"]
                legal = flatnonzero(obs["action_mask"])
                step(int(legal[integers(len(legal))]))
                steps += 1
            if not env.agents:
                state["episodes"] += 1
                env.reset()
                last, step = env.last, env.step
        return steps

    return Runner(name, lambda seconds: run_for(seconds, play), lambda: state["episodes"], note)


# --------------------------------------------------------------------------------------
# RLCard gin rummy
# --------------------------------------------------------------------------------------

def make_rlcard_runner(seed: int) -> Runner:
    import rlcard

    env = rlcard.make("gin-rummy", config={"seed": seed})
    rng = np.random.default_rng(seed)
    box = {"state": env.reset()[0], "episodes": 0}  # reset() returns (state, player_id)

    def play() -> int:
        state = box["state"]
        integers = rng.integers
        for _ in range(CHECK_EVERY):
            _x = state["obs"]
            legal = list(state["legal_actions"])  # OrderedDict: action id -> None
            state, _pid = env.step(legal[integers(len(legal))])
            if env.is_over():
                box["episodes"] += 1
                state, _pid = env.reset()
        box["state"] = state
        return CHECK_EVERY

    return Runner("rlcard gin-rummy", lambda seconds: run_for(seconds, play), lambda: box["episodes"], "python")


# --------------------------------------------------------------------------------------
# OpenSpiel gin rummy (C++)
# --------------------------------------------------------------------------------------

def make_openspiel_runner(seed: int) -> Runner:
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = np.random.default_rng(seed)
    box = {"state": game.new_initial_state(), "episodes": 0}

    def play() -> int:
        state = box["state"]
        integers, random, asarray, f32 = rng.integers, rng.random, np.asarray, np.float32
        steps = 0
        for _ in range(CHECK_EVERY):
            if state.is_terminal():
                box["episodes"] += 1
                state = game.new_initial_state()
            elif state.is_chance_node():  # timed, not counted
                u, acc = random(), 0.0
                outcomes = state.chance_outcomes()
                for a, p in outcomes:
                    acc += p
                    if u < acc:
                        break
                state.apply_action(a)
            else:
                _x = asarray(state.observation_tensor(), dtype=f32)
                legal = state.legal_actions()
                state.apply_action(legal[integers(len(legal))])
                steps += 1
        box["state"] = state
        return steps

    return Runner("openspiel gin_rummy", lambda seconds: run_for(seconds, play), lambda: box["episodes"],
                  "C++ via pybind11")


# --------------------------------------------------------------------------------------

def build_runners(selected: list[str], seed: int, num_players: int) -> list[Runner]:
    runners: list[Runner] = []
    try:
        tt = importlib.import_module("tt_env.three_thirteen_v0")
        tt_raw = lambda: tt.raw_env(num_players=num_players)  # noqa: E731
        tt_env = lambda: tt.env(num_players=num_players)  # noqa: E731
        tt_label, tt_note = f"three-thirteen {num_players}p", "ours"
    except ImportError as exc:
        print(f"WARNING: tt_env.three_thirteen_v0 not importable ({exc}); using PettingZoo's "
              "connect_four_v3 as a stand-in so the harness still runs.\n")
        try:
            import pygame  # noqa: F401  (connect_four imports it at module level, only to render)
        except ImportError:
            import types
            sys.modules["pygame"] = types.ModuleType("pygame")  # rendering is never used here
        from pettingzoo.classic import connect_four_v3 as tt
        tt_raw, tt_env = tt.raw_env, tt.env
        tt_label, tt_note = "STAND-IN connect_four_v3", "not ours"
    for key in selected:
        if key == "tt_raw":
            runners.append(make_aec_runner(f"{tt_label} raw_env", tt_raw, seed, tt_note))
        elif key == "tt_env":
            runners.append(make_aec_runner(f"{tt_label} env (wrapped)", tt_env, seed, tt_note))
        elif key == "rlcard":
            runners.append(make_rlcard_runner(seed))
        elif key == "openspiel":
            runners.append(make_openspiel_runner(seed))
        else:
            raise SystemExit(f"unknown env {key!r}: choose from tt_raw, tt_env, rlcard, openspiel")
    return runners


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_timing_args(parser, "env")
    parser.add_argument("--num-players", type=int, default=2, help="players in our env (default 2)")
    parser.add_argument("--envs", default="tt_raw,tt_env,rlcard,openspiel",
                        help="comma-separated subset of tt_raw,tt_env,rlcard,openspiel")
    args = parser.parse_args()

    print_header("Environment steps/s under random masked play (one step = one player decision)",
                 vars(args))
    runners = build_runners([s.strip() for s in args.envs.split(",") if s.strip()],
                            args.seed, args.num_players)

    for r in runners:
        r.run(args.warmup)
    episodes0 = {r.name: r.episodes() for r in runners}
    for r, steps in zip(runners, time_round_robin(runners, args.repeats, args.seconds), strict=True):
        r.steps_total += steps
    print()

    rows, med, cpu_med = [], {}, {}
    for r in runners:
        m, lo, hi = summarize(r.rates)
        med[r.name] = m
        games = r.episodes() - episodes0[r.name]
        cpu_med[r.name] = summarize(r.cpu_rates)[0]
        per_game = f"{r.steps_total / games:,.1f}" if games else "n/a"
        rows.append([r.name, fmt_rate(m), fmt_rate(lo), fmt_rate(hi), fmt_rate(cpu_med[r.name]),
                     per_game, r.note])
    print_table(["env", "median steps/s", "min", "max", "steps/CPU-s", "decisions/game", "note"],
                rows)
    print("(steps/s: wall clock, time.perf_counter; steps/CPU-s: the same steps over this "
          "process's CPU time,\n time.process_time, which is less sensitive to other jobs on a "
          "shared machine)")
    print()

    def ratio(num_pred, den_pred, label):
        num = next((r for r in runners if num_pred(r.name)), None)
        den = next((r for r in runners if den_pred(r.name)), None)
        if num and den:
            print(f"{label:<34} {med[num.name] / med[den.name]:6.2f}x wall, "
                  f"{cpu_med[num.name] / cpu_med[den.name]:5.2f}x CPU  "
                  f"({num.name} / {den.name}, medians)")

    ratio(lambda n: n.endswith("raw_env"), lambda n: n.startswith("openspiel"),
          "ratio our raw_env / OpenSpiel:")
    ratio(lambda n: n.endswith("(wrapped)"), lambda n: n.startswith("rlcard"),
          "ratio our env / RLCard:")
    ratio(lambda n: n.endswith("raw_env"), lambda n: n.startswith("rlcard"),
          "ratio our raw_env / RLCard:")
    ratio(lambda n: n.endswith("(wrapped)"), lambda n: n.endswith("raw_env"),
          "ratio wrapped env / raw_env:")


if __name__ == "__main__":
    main()
