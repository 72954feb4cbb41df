"""Soak of the batched engine: table steps against the scalar engine, over random rule configurations.

Run from the repository root::

    python benchmarks/batch_soak.py --steps 1000000 --seed 0        # every path, in turn
    python benchmarks/batch_soak.py --steps 200000 --paths every-row-gathered
    python benchmarks/batch_soak.py --seed 0 --chunk 12             # run one chunk again
    python benchmarks/batch_soak.py --device cuda --seconds 60 --cuda-graphs

Chunk ``k`` of a run is one :class:`tt_env.batch.BatchGame` of ``--tables`` tables, played for
``--chunk-steps`` steps under a configuration drawn from ``(--seed, k)`` alone (:func:`chunk_spec`):

- the rules of ``benchmarks/soak_checks.py``'s games (2 to 8 players, both ace rules, all
  rounds or a few, ``discard_drawn_discard`` and ``meld_needs_natural`` both ways, turn caps
  from 1 to 200, the three reward modes), with at most 4 decks, the batched engine's limit;
- the engine's path, from ``--paths`` in turn: ``auto`` (what the engine picks on ``--device``:
  on a CPU the C loops on the rows that need them, on CUDA the fused kernels and gathered
  solving), ``every-row-kept`` and ``every-row-gathered`` (a GPU's every-row path run on a CPU,
  with the tensor code and the C solver, each way of solving); only when asked for,
  ``every-row-triton`` (the same with the GPU's fused Triton step kernels, interpreted on a CPU:
  slow);
- in about a quarter of the chunks some seats play the batched ``greedy-v0`` (the scalar
  agent's choices, ``tests/test_batch_agents.py``), which goes out far more often than random
  play; the others play uniformly random legal moves;
- in about a quarter, partial steps (``active=``: each table takes part with probability 3/4);
- in about a quarter, the batch saves its state and loads it back (``BatchGame.load_state``)
  every 23 steps, at draws and at discards alike: play must go on as before.

Every table is checked at every step by ``tests/batch_differential.py``: the observation, mask
and seat before it, then the rewards, scores, round points, flags and next state against
``engine.game.apply``; a table left out of a step must not change. The run plays chunks 0, 1,
2, ... until ``--steps`` table steps are checked or ``--seconds`` have passed, prints what they
went through and every mismatch (an error the engine raises is one) with the command that runs
its chunk again, and exits 1 if there was one, else 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, ROOT)
sys.path.insert(2, os.path.join(ROOT, "tests"))  # the differential check lives with the tests
from _common import device_arg  # noqa: E402
from batch_differential import Mismatch, SideBySide  # noqa: E402
from soak_checks import game_spec  # noqa: E402

from tt_env.batch import BatchGame, solver_triton  # noqa: E402
from tt_env.batch.agents import BatchGreedy  # noqa: E402
from tt_env.batch.game import MAX_BATCH_DECKS  # noqa: E402
from tt_env.engine import game as engine  # noqa: E402
from tt_env.engine.rules import Rules, auto_decks  # noqa: E402

PATHS = ("auto", "every-row-kept", "every-row-gathered")
"""The default ``--paths``: which of the engine's code paths the chunks run, in turn (see the module)."""
SLOW_PATHS = ("every-row-triton",)
"""Paths only on request: the GPU's fused Triton step kernels, interpreted on a CPU (slow)."""
COUNTERS = ("steps", "rounds", "games", "went_out", "reshuffles", "idle", "greedy", "loads")
RELOAD_EVERY = 23
"""Steps between a chunk's loads of its own saved state (``BatchGame.load_state``), in the chunks that do."""


@dataclass(frozen=True)
class ChunkSpec:
    """Chunk ``index`` of a run: its rules, reward mode, engine path, seats and steps."""

    index: int
    seed: int
    rules: Rules
    reward_mode: str
    path: str
    greedy_seats: tuple[int, ...]
    partial: bool
    reload: bool

    def describe(self) -> str:
        agents = f"greedy-v0 at seats {list(self.greedy_seats)}" if self.greedy_seats else "random legal play"
        steps = "partial steps (each table with probability 3/4)" if self.partial else "every table every step"
        loads = f", saved and loaded every {RELOAD_EVERY} steps" if self.reload else ""
        return (f"rules {self.rules.to_dict()}, reward_mode {self.reward_mode!r}, path {self.path!r}, "
                f"engine seed {self.seed}, {agents}, {steps}{loads}")


def chunk_spec(run_seed: int, index: int, paths: Sequence[str]) -> ChunkSpec:
    """The configuration of chunk ``index``: a function of (run seed, index, paths) alone."""
    game = game_spec(run_seed, index)
    rules = game.rules
    rng = np.random.default_rng([run_seed, index, 7])
    if rules.num_decks > MAX_BATCH_DECKS:
        fewest = auto_decks(rules.num_players, rules.rounds[-1])
        rules = Rules(**{**rules.to_dict(), "decks": int(rng.integers(fewest, MAX_BATCH_DECKS + 1))})
    return ChunkSpec(index, int(rng.integers(2**31)), rules, game.reward_mode, paths[index % len(paths)],
                     game.greedy_seats, bool(rng.random() < 0.25), bool(rng.random() < 0.25))


def build_game(spec: ChunkSpec, tables: int, device: str, cuda_graphs: bool) -> BatchGame:
    """The chunk's batch, on its path."""
    every_row = spec.path != "auto"
    triton = spec.path == "every-row-triton"
    solving = "gathered" if triton else spec.path.removeprefix("every-row-") if every_row else "auto"
    game = BatchGame(spec.rules, tables, device=device, seed=spec.seed, reward_mode=spec.reward_mode,
                     solver="auto", solving=solving, cuda_graphs=cuda_graphs)
    if every_row:
        game._sparse = False
        game._kernel_backend = "triton" if triton else "torch"
    return game


def play_chunk(spec: ChunkSpec, tables: int, steps: int, device: str = "cpu", cuda_graphs: bool = False,
               raise_errors: bool = False) -> tuple[Counter, dict | None]:
    """Play one chunk side by side with the scalar engine: (what it went through, its mismatch or None).
    An error the engine raises counts as a mismatch (``raise_errors``: it propagates, with its traceback)."""
    game = build_game(spec, tables, device, cuda_graphs)
    rng = np.random.default_rng([spec.seed, 1])
    greedy = BatchGreedy(spec.rules) if spec.greedy_seats else None
    events: Counter = Counter()
    step, pair = 0, None
    try:
        pair = SideBySide(game, game.reset(), spec.reward_mode)
        while step < steps:
            step += 1
            pair.check_views()
            actions = [int(rng.choice(engine.legal_actions(st))) for st in pair.states]
            if greedy is not None:
                chosen = greedy.act(pair.ts.observation, pair.ts.action_mask).tolist()
                for i, st in enumerate(pair.states):
                    if st.current_player in spec.greedy_seats:
                        actions[i] = chosen[i]
                        events["greedy"] += 1
            active = (rng.random(tables) < 0.75).tolist() if spec.partial else None
            pair.step(actions, active)
            if spec.reload and step % RELOAD_EVERY == 0:
                pair.reload()
        pair.check_views()
        mismatch = None
    except Mismatch as exc:
        mismatch = {"chunk": spec.index, "step": step, "message": str(exc), "spec": spec.describe()}
    except Exception as exc:  # a crash is a finding too: reported with its chunk, the run goes on
        if raise_errors:
            raise
        mismatch = {"chunk": spec.index, "step": step, "message": f"raised {type(exc).__name__}: {exc}",
                    "spec": spec.describe()}
    if pair is not None:
        events.update(pair.events)
    return events, mismatch


def checked(totals: Counter) -> int:
    """Table steps checked: the moves, and the tables left out of a partial step."""
    return totals["steps"] + totals["idle"]


def run(seed: int, steps: int, seconds: float | None, tables: int, chunk_steps: int, paths: Sequence[str],
        device: str, cuda_graphs: bool, max_mismatches: int, progress: bool = True) -> dict:
    """Chunks 0, 1, ... until ``steps`` table steps are checked, ``seconds`` passed or
    ``max_mismatches`` chunks failed; the totals and the mismatches."""
    totals: Counter = Counter()
    mismatches: list[dict] = []
    configs: set = set()
    players: Counter = Counter()
    on_path: Counter = Counter()
    partial = reloading = 0
    t0 = time.perf_counter()
    next_report = 0.1
    chunk = 0
    while checked(totals) < steps and len(mismatches) < max_mismatches:
        if seconds is not None and time.perf_counter() - t0 >= seconds:
            break
        spec = chunk_spec(seed, chunk, paths)
        events, mismatch = play_chunk(spec, tables, chunk_steps, device, cuda_graphs)
        totals.update(events)
        configs.add(spec.rules)
        players[spec.rules.num_players] += 1
        on_path[spec.path] += 1
        partial += spec.partial
        reloading += spec.reload
        if mismatch is not None:
            mismatches.append(mismatch)
        chunk += 1
        done = checked(totals)
        if progress and next_report * steps <= done < steps:
            print(f"  {done:,} table steps ({done / steps:.0%}), {chunk} chunks, "
                  f"{len(mismatches)} mismatches, {time.perf_counter() - t0:,.0f} s", flush=True)
            next_report = min(1.0, done / steps + 0.1)
    return {"totals": dict(totals), "chunks": chunk, "configurations": len(configs), "players": dict(players),
            "paths": dict(on_path), "partial_chunks": partial, "reload_chunks": reloading, "mismatches": mismatches,
            "max_mismatches": max_mismatches, "seconds": time.perf_counter() - t0}


def report(summary: dict, args: argparse.Namespace) -> str:
    t = Counter(summary["totals"])
    steps, seconds = checked(t), summary["seconds"]
    players = ", ".join(f"{n}p {c:,}" for n, c in sorted(summary["players"].items()))
    paths = ", ".join(f"{p} {c:,}" for p, c in summary["paths"].items())
    lines = [
        f"batch soak: {steps:,} table steps checked in {seconds:,.1f} s ({steps / max(seconds, 1e-9):,.0f} a second), "
        f"seed {args.seed}, {args.tables} tables a chunk, device {args.device}"
        + (", CUDA graphs" if args.cuda_graphs else ""),
        f"chunks {summary['chunks']:,} ({players}; paths: {paths}; {summary['partial_chunks']:,} with partial steps, "
        f"{summary['reload_chunks']:,} with loads), "
        f"{summary['configurations']:,} distinct rule sets",
        f"rounds {t.get('rounds', 0):,}, games {t.get('games', 0):,}, went out {t.get('went_out', 0):,}, "
        f"reshuffles {t.get('reshuffles', 0):,}, greedy-v0 decisions {t.get('greedy', 0):,}, "
        f"moves {t['steps']:,}, tables left out of a step {t['idle']:,}, loads {t['loads']:,}",
        f"mismatches: {len(summary['mismatches'])}"
        + (f" (stopped at the limit, --max-mismatches {summary['max_mismatches']})"
           if len(summary["mismatches"]) >= summary["max_mismatches"] else ""),
    ]
    graphs = " --cuda-graphs" if args.cuda_graphs else ""
    for m in summary["mismatches"]:
        lines += [f"  MISMATCH chunk {m['chunk']}, step {m['step']} (0: the deal): {m['message']}",
                  f"    config: {m['spec']}",
                  f"    reproduce: python benchmarks/batch_soak.py --seed {args.seed} --chunk {m['chunk']} "
                  f"--tables {args.tables} --chunk-steps {args.chunk_steps} --paths {','.join(args.paths)} "
                  f"--device {args.device}{graphs}"]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000, help="table steps to check, at least (default 100000)")
    parser.add_argument("--seconds", type=float, default=None, help="stop after the chunk that passes this time")
    parser.add_argument("--seed", type=int, default=0, help="seed of the run: every chunk's configuration (default 0)")
    parser.add_argument("--tables", type=int, default=32, help="tables in a chunk's batch (default 32)")
    parser.add_argument("--chunk-steps", type=int, default=300, help="steps of each chunk (default 300)")
    parser.add_argument("--paths", default=",".join(PATHS),
                        help=f"engine paths, taken in turn by the chunks (default {','.join(PATHS)})")
    parser.add_argument("--device", type=device_arg, default="cpu", help="torch device of the batch (default cpu)")
    parser.add_argument("--cuda-graphs", action="store_true", help="BatchGame(cuda_graphs=True) (CUDA only)")
    parser.add_argument("--chunk", type=int, default=None, help="play only this chunk of the run")
    parser.add_argument("--max-mismatches", type=int, default=5, help="stop after this many failed chunks (default 5)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    for name in ("steps", "tables", "chunk_steps", "max_mismatches"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)}: use an integer >= 1")
    if args.seed < 0:
        parser.error(f"--seed {args.seed}: use an integer >= 0")
    if args.chunk is not None and args.chunk < 0:
        parser.error(f"--chunk {args.chunk}: use an integer >= 0")
    if args.seconds is not None and not args.seconds > 0:
        parser.error(f"--seconds {args.seconds}: use a number > 0")
    args.paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = [p for p in args.paths if p not in PATHS + SLOW_PATHS]
    if unknown or not args.paths:
        parser.error(f"--paths {','.join(unknown) or '(empty)'}: use a comma-separated list of "
                     f"{', '.join(PATHS + SLOW_PATHS)}")
    device = torch.device(args.device)
    if args.cuda_graphs and device.type != "cuda":
        parser.error("--cuda-graphs needs --device cuda")
    if "every-row-triton" in args.paths and device.type != "cpu":
        parser.error("--paths every-row-triton runs the Triton kernels interpreted, on a CPU: use --device cpu "
                     "(on CUDA, the path auto takes the compiled kernels)")
    if "every-row-triton" in args.paths and not solver_triton.available():
        parser.error("--paths every-row-triton needs Triton (pip install -e '.[gpu]')")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.chunk is not None:
        spec = chunk_spec(args.seed, args.chunk, args.paths)
        print(f"chunk {args.chunk} of seed {args.seed}: {spec.describe()}", flush=True)
        events, mismatch = play_chunk(spec, args.tables, args.chunk_steps, args.device, args.cuda_graphs,
                                      raise_errors=True)
        print(", ".join(f"{k} {events.get(k, 0):,}" for k in COUNTERS))
        if mismatch is not None:
            print(f"MISMATCH at step {mismatch['step']} (0: the deal): {mismatch['message']}")
            return 1
        print("no mismatch")
        return 0
    summary = run(args.seed, args.steps, args.seconds, args.tables, args.chunk_steps, args.paths, args.device,
                  args.cuda_graphs, args.max_mismatches, progress=not args.quiet)
    print(report(summary, args))
    return 1 if summary["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
