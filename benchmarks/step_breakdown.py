"""Where a step of the batched engine goes: milliseconds per step, part by part.

Run from the repository root::

    python benchmarks/step_breakdown.py
    python benchmarks/step_breakdown.py --tables 4096,16384 --threads 2 --players 4
    python benchmarks/step_breakdown.py --device cuda --tables 16384,65536

Random masked play as in ``benchmarks/bench_batch.py`` (``random-v0`` picks, ``BatchGame.step``
plays), with the engine's parts wrapped in timers for the run (wall time, in process; the
engine is not changed otherwise):

- ``observe_and_mask``: the next observation and action mask (every step);
- ``moves``: ``apply_moves`` and ``end_turns`` (``tt_env.batch.moves``), the draws, discards and
  ends of turns (every step);
- ``go-out check``: ``BatchGame._penalty_is_zero``, which gathers the movers' hands and asks
  ``melds_completely`` (on a discard step);
- ``round ends and deals``: ``BatchGame._on_rows``, ``_deal_tables`` and ``_refill_stocks``,
  the rows whose round ended (scoring, the next deal) and the rare reshuffle;
- ``agent``: ``BatchRandom.act``;
- ``rest of the step``: the action checks, the rewards, the scores and the TimeStep;

and the page faults per step (the process's minor faults: fresh memory the kernel maps and
zeroes, which a step that allocates large tensors may pay again and again).

On a GPU (``--device cuda``; actions unchecked, as the fastest runs play) each timed part
waits for the device before it starts and before it stops, so that its time is its own: the
parts then run one after the other instead of overlapping the host's work with the device's,
and the whole step is slower than in ``bench_batch.py``. Compare the parts, not the total.

A step alternates between a draw step and a discard step (the tables stay in lockstep), so the
parts are averaged over both. Medians over ``--repeats`` timed runs of ``--seconds`` each.
Timings on a shared machine move between runs: compare parts within one run.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import device_arg, print_header, print_table  # noqa: E402

from tt_env.batch import game as game_module  # noqa: E402
from tt_env.batch.agents import BatchRandom  # noqa: E402
from tt_env.cli_checks import int_at_least, int_list, positive_float, seed_arg  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402

PARTS = {  # label: the (owner, attribute) pairs timed under it
    "observe_and_mask": [(game_module, "observe_and_mask")],
    "moves": [(game_module, "apply_moves")],
    "end of turns": [(game_module, "end_turns")],
    "go-out check": [(game_module.BatchGame, "_penalty_is_zero")],
    "round ends and deals": [(game_module.BatchGame, "_on_rows"), (game_module.BatchGame, "_deal_tables"),
                             (game_module.BatchGame, "_refill_stocks")],
    "agent": [(BatchRandom, "act")],
}


def _timed(spent: dict[str, float], label: str, fn: Callable, inside: list[float], sync: Callable[[], None]
           ) -> Callable:
    """``fn`` adding its own time to ``spent[label]``: less that of the timed parts it calls (a
    stock refill inside the moves counts as a round's rare part, once); ``sync`` waits for the
    device at both ends."""
    def wrapper(*args, **kwargs):
        sync()
        start = time.perf_counter()
        inside.append(0.0)
        try:
            return fn(*args, **kwargs)
        finally:
            sync()
            elapsed = time.perf_counter() - start
            spent[label] += elapsed - inside.pop()
            if inside:
                inside[-1] += elapsed
    return wrapper


def breakdown(players: int, tables: int, seconds: float, repeats: int, warmup_steps: int,
              seed: int, device: torch.device | None = None) -> dict[str, float]:
    """Median milliseconds per step of each part, of the whole step and decisions per second
    (``device``: the engine's, a CPU by default)."""
    device = torch.device("cpu") if device is None else device
    spent: dict[str, float] = defaultdict(float)
    targets = [(label, owner, name) for label, pairs in PARTS.items() for owner, name in pairs]
    originals = {(owner, name): getattr(owner, name) for _, owner, name in targets}
    inside: list[float] = []  # the time of timed parts called by the timed part running
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    for label, owner, name in targets:
        setattr(owner, name, _timed(spent, label, originals[owner, name], inside, sync))
    try:
        rules = Rules(num_players=players)
        game = game_module.BatchGame(rules, tables, device=device, seed=seed, check_actions=device.type == "cpu")
        agent = BatchRandom(rules, seed=seed + 1, device=device)
        ts = game.reset()
        for _ in range(warmup_steps):
            ts = game.step(agent.act(ts.observation, ts.action_mask))
        runs: dict[str, list[float]] = defaultdict(list)
        for _ in range(repeats):
            spent.clear()
            steps, start, faults = 0, time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            while steps % 2 or time.perf_counter() - start < seconds:  # whole draw + discard pairs
                ts = game.step(agent.act(ts.observation, ts.action_mask))
                steps += 1
            sync()
            total = (time.perf_counter() - start) / steps * 1e3
            runs["whole step"].append(total)
            runs["page faults"].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / steps)
            for label in PARTS:
                runs[label].append(spent[label] / steps * 1e3)
            runs["rest of the step"].append(total - sum(spent[label] for label in PARTS) / steps * 1e3)
        result = {label: statistics.median(values) for label, values in runs.items()}
        result["decisions/s"] = tables / result["whole step"] * 1e3
        return result
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int_list(1), default=[16384],
                        help="comma-separated batch sizes (default 16384)")
    parser.add_argument("--players", type=int, default=2, help="2..8 (default 2)")
    parser.add_argument("--threads", type=int_at_least(1), default=1, help="torch threads (default 1)")
    parser.add_argument("--seconds", type=positive_float(), default=2.0, help="seconds per timed run (default 2)")
    parser.add_argument("--repeats", type=int_at_least(1), default=5, help="timed runs; medians are shown (default 5)")
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--device", type=device_arg, default="cpu",
                        help="torch device of the engine (cpu, cuda, cuda:1)")
    args = parser.parse_args()
    tables = args.tables
    if not 2 <= args.players <= 8:
        parser.error(f"--players={args.players}: use 2..8")
    device = torch.device(args.device)
    if device.type not in ("cpu", "cuda"):
        parser.error(f"--device={args.device!r}: use cpu or cuda (cuda:N)")
    torch.set_num_threads(args.threads)
    info = vars(args) | ({"gpu": torch.cuda.get_device_name(device)} if device.type == "cuda" else {})
    print_header(f"Batched engine: where a {device.type.upper()} step goes (ms per step, medians)", info)
    results = {t: breakdown(args.players, t, args.seconds, args.repeats, 20, args.seed, device) for t in tables}
    labels = ["whole step", *PARTS, "rest of the step"]
    rows = [[label] + [f"{results[t][label]:.2f} ({results[t][label] / results[t]['whole step']:.0%})"
                       for t in tables] for label in labels]
    rows.append(["decisions/s"] + [f"{results[t]['decisions/s']:,.0f}" for t in tables])
    rows.append(["page faults per step"] + [f"{results[t]['page faults']:,.0f}" for t in tables])
    print_table(["part", *(f"{t:,} tables" for t in tables)], rows)


if __name__ == "__main__":
    main()
