"""Shared helpers for the benchmark scripts: header, versions, statistics, table printing, and the
timing of play: the timed loop (:func:`run_for`), the timing options (:func:`add_timing_args`)
and the round-robin repetitions (:func:`time_round_robin`)."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

SHARED_MACHINE_NOTE = (
    "NOTE: this machine may be shared with other jobs. Every number below is a median over\n"
    "repetitions (min and max shown); quote the medians and the ratios, not single runs."
)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def print_header(title: str, args: dict) -> None:
    """Print the title, the shared-machine note, the run settings and the versions."""
    import numpy as np

    print("=" * 78)
    print(title)
    print("=" * 78)
    print(SHARED_MACHINE_NOTE)
    print()
    print(f"settings:       {', '.join(f'{k}={v}' for k, v in args.items())}")
    print(f"python:         {sys.version.split()[0]} ({platform.python_implementation()})")
    print(f"numpy:          {np.__version__}")
    for dist in ("three-thirteen", "pettingzoo", "gymnasium", "rlcard", "open_spiel"):
        print(f"{dist + ':':<16}{_version(dist)}")
    try:
        from tt_env.engine.melds import SOLVER_BACKEND
        print(f"tt solver:      {SOLVER_BACKEND} backend")
    except Exception as exc:  # pragma: no cover - informative only
        print(f"tt solver:      unavailable ({exc})")
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    print(f"machine:        {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {', '.join(f'{x:.2f}' if isinstance(x, float) else x for x in load)}")
    print()


def summarize(values: list[float]) -> tuple[float, float, float]:
    """(median, min, max) of a list of rates."""
    return statistics.median(values), min(values), max(values)


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    """Left-align the first column, right-align the others."""
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    def line(cells):
        out = [str(cells[0]).ljust(widths[0])]
        out += [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join(out)
    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


@dataclass
class Timed:
    """One thing under test: ``run(seconds)`` plays on and returns (steps, elapsed wall seconds);
    :func:`time_round_robin` adds the steps/s of each timed run to ``rates`` and ``cpu_rates``.
    A benchmark's own kind adds what it counts besides (episodes, games, chance nodes)."""

    name: str
    run: Callable[[float], tuple[int, float]]
    rates: list[float] = field(default_factory=list, kw_only=True)
    cpu_rates: list[float] = field(default_factory=list, kw_only=True)


def run_for(seconds: float, play: Callable[[], int]) -> tuple[int, float]:
    """(steps, elapsed wall seconds) of calling ``play`` until ``seconds`` have passed (at least once).

    ``play`` makes a fixed number of moves (a benchmark's ``CHECK_EVERY``) and returns how many of
    them count as steps: the clock is read once per call, not once per move, so reading it costs
    next to nothing, and every runner of a benchmark is timed by this same loop."""
    steps = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        steps += play()
        now = time.perf_counter()
        if now >= deadline:
            return steps, now - t0


def add_timing_args(parser: argparse.ArgumentParser, unit: str) -> None:
    """Add ``--repeats``, ``--seconds``, ``--warmup`` and ``--seed``, for :func:`time_round_robin`
    over runners called ``unit`` (``env``, ``contender``) in the help."""
    parser.add_argument("--repeats", type=int, default=5, help=f"repetitions per {unit} (default 5)")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help=f"timed seconds per {unit} per repetition (default 2.0)")
    parser.add_argument("--warmup", type=float, default=0.5, help=f"untimed warm-up seconds per {unit}")
    parser.add_argument("--seed", type=int, default=0)


def time_round_robin(runners: Sequence[Timed], repeats: int, seconds: float) -> list[int]:
    """Time ``repeats`` rounds of ``runner.run(seconds)``, each round one run of every runner, so
    that load from other jobs affects every runner alike.

    Each run's wall and CPU rates go to ``runner.rates`` and ``runner.cpu_rates``; a line per round
    is printed. Returns the steps each runner made, in order."""
    totals = [0] * len(runners)
    for rep in range(repeats):
        for i, r in enumerate(runners):
            c0 = time.process_time()
            steps, elapsed = r.run(seconds)
            r.cpu_rates.append(steps / max(time.process_time() - c0, 1e-9))
            r.rates.append(steps / elapsed)
            totals[i] += steps
        print(f"  repetition {rep + 1}/{repeats}: "
              + ", ".join(f"{r.name} {fmt_rate(r.rates[-1])}" for r in runners), flush=True)
    return totals


def expert_positions(rules, games: int, seed: int) -> list:
    """(observation, action mask) of every decision of ``games`` full expert-v0 self-play games
    (game ``g`` dealt from ``default_rng([seed, g])``), recorded once, before any timing."""
    import numpy as np

    from tt_env.agents import ExpertAgent
    from tt_env.evaluation import play_game

    agent, rng = ExpertAgent(rules), np.random.default_rng(seed)
    positions = []
    for g in range(games):
        play_game([agent] * rules.num_players, rules, np.random.default_rng([seed, g]),
                  agent_rngs=[rng] * rules.num_players,
                  on_decision=lambda _state, _seat, obs, mask, _action, _seconds: positions.append((obs, mask)))
    return positions


def device_arg(text: str) -> str:
    """An ``argparse`` type for a benchmark's ``--device``: ``cpu``, ``cuda`` or ``cuda:K`` that this
    machine has (the batched engine's own check, :func:`tt_env.batch.devices.checked_device`)."""
    import argparse

    from tt_env.batch.devices import checked_device

    try:
        checked_device(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text
