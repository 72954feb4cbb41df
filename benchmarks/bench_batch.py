"""Batched engine throughput under random masked play, side by side with the scalar engines.

Run from the repository root::

    python benchmarks/bench_batch.py                                  # 2 players, CPU
    python benchmarks/bench_batch.py --batch-sizes 1024,4096,16384 --device cuda --players 2,4,8
    python benchmarks/bench_batch.py --envs batch                      # the batched engine only
    python benchmarks/bench_batch.py --device cuda --solving gathered,kept --envs batch   # GPU solving A/B
    python benchmarks/bench_batch.py --every-row --solving gathered,kept --envs batch    # the GPU's path, on a CPU
    python benchmarks/bench_batch.py --device cuda --prefix-programs 2048,8192,32768 --envs batch  # kernel tuning
    python benchmarks/bench_batch.py --device cuda --kernels auto,torch --envs batch     # fused step kernels A/B
    python benchmarks/bench_batch.py --device cuda --cuda-graphs off,on --envs batch     # CUDA graphs A/B

One "decision" is what it is in ``benchmarks/bench_env.py``: one legal action chosen uniformly
at random after reading that decision's observation and legal actions. For the batched engine a
call of ``BatchGame.step`` makes one decision at every table: it returns the observations and
masks of the next decisions, on which ``random-v0`` (``tt_env.batch.agents.BatchRandom``) picks
the next actions, all inside the timed loop; the decisions counted are ``tables x steps``.
Finished games start again by themselves (auto-reset), inside the timed loop too. On a GPU the
host queues steps ahead of the device (nothing in a step waits for it), as a training loop that
does not read its results would: the clock is read once every queued step has run.

The runs interleave round-robin within each repetition (the batched engine at each batch size,
the scalar ``raw_env`` at each player count, OpenSpiel's C++ gin rummy), so load from other jobs
hits all alike; the table gives the median and range over repetitions, the memory each table's
state takes, and per player count the ratio of the batched engine's best median to the scalar
``raw_env``'s at that player count.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import device_arg, fmt_rate, print_header, print_table, summarize  # noqa: E402
from bench_env import Runner, make_aec_runner, make_openspiel_runner  # noqa: E402

from tt_env.batch import BatchGame  # noqa: E402
from tt_env.batch.agents import BatchRandom  # noqa: E402
from tt_env.batch.game import SOLVING_MODES  # noqa: E402
from tt_env.batch.kernels import KERNEL_BACKENDS  # noqa: E402
from tt_env.cli_checks import int_at_least, int_list, positive_float, seed_arg  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def make_batch_runner(players: int, tables: int, device: torch.device, seed: int,
                      solver: str = "auto", solving: str = "auto", every_row: bool = False,
                      prefix_programs: int | None = None, kernels: str = "auto",
                      cuda_graphs: bool = False) -> tuple[Runner, int]:
    """A runner of ``tables`` batched tables, and the bytes of state per table (``every_row``: the
    accelerator's path even on a CPU; ``prefix_programs``: the fused kernels' programs per launch
    with a count, ``solver_triton.PREFIX_PROGRAMS``, set while this runner plays; ``kernels``: the
    backend of the step's other parts, ``kernels.KERNEL_BACKENDS``; ``cuda_graphs``: BatchGame's)."""
    rules = Rules(num_players=players)
    game = BatchGame(rules, tables, device=device, seed=seed, check_actions=False, solver=solver, solving=solving,
                     cuda_graphs=cuda_graphs)
    game._kernel_backend = kernels
    if every_row:
        game._sparse = False  # what a GPU runs: every row through the rare parts, with selects,
        if kernels == "auto":
            game._kernel_backend = "torch"  # and (unless asked otherwise) the tensor code, not the C loops
    agent = BatchRandom(rules, seed=seed, device=device)
    box = {"ts": game.reset(), "games": 0}

    def run(seconds: float) -> tuple[int, float]:
        if prefix_programs is not None:
            from tt_env.batch import solver_triton

            solver_triton.PREFIX_PROGRAMS = prefix_programs
        ts = box["ts"]
        steps = 0
        games = torch.zeros((), dtype=torch.int64, device=device)
        _sync(device)
        t0 = time.perf_counter()
        deadline = t0 + seconds
        per_check = 8 if device.type == "cpu" else 1  # a GPU step may be long: check the clock every step
        while True:
            for _ in range(per_check):
                ts = game.step(agent.act(ts.observation, ts.action_mask))
                games += ts.game_over.sum()
                steps += tables
            if time.perf_counter() >= deadline:
                # the host queues a GPU's steps ahead of it (nothing in a step waits for the device):
                # the time is taken once every queued step has run, so it counts their work
                _sync(device)
                box["ts"] = ts
                box["games"] += int(games)
                return steps, time.perf_counter() - t0

    per_table = game.state.memory_bytes() // tables
    mode = (("" if not every_row or device.type != "cpu" else ", every-row")
            + ("" if solving == "auto" else f", {solving}"))
    mode += "" if prefix_programs is None else f", {prefix_programs} programs"
    mode += "" if kernels == "auto" else f", {kernels} kernels"
    mode += ", CUDA graphs" if cuda_graphs else ""
    runner = Runner(f"batch {players}p x{tables} ({device.type}{mode})", run, lambda: box["games"], "ours, batched")
    return runner, per_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-sizes", type=int_list(1), default=[256, 1024, 4096],
                        help="comma-separated tables per batch")
    parser.add_argument("--players", type=int_list(2, 8, noun="player counts"), default=[2],
                        help="comma-separated player counts (the batched engine, and the scalar raw_env beside it at "
                             "each)")
    parser.add_argument("--device", type=device_arg, default="cpu",
                        help="torch device of the batched engine (cpu, cuda, cuda:1)")
    parser.add_argument("--envs", default="batch,tt_raw,openspiel", help="subset of batch,tt_raw,openspiel")
    parser.add_argument("--repeats", type=int_at_least(1), default=5)
    parser.add_argument("--seconds", type=positive_float(), default=2.0)
    parser.add_argument("--warmup", type=positive_float(), default=1.0)
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--threads", type=int_at_least(0), default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--solver", default="auto", choices=["auto", "torch", "triton", "c"],
                        help="meld solver backend of the batched engine (BatchGame's solver=)")
    parser.add_argument("--every-row", action="store_true",
                        help="on a CPU, run the accelerator's every-row path instead of the CPU's (to study the GPU "
                             "path's work without a GPU, the observation's tensor code included; with --solver auto "
                             "the meld solver stays C)")
    parser.add_argument("--solving", default="auto",
                        help=f"comma-separated BatchGame solving= modes to run side by side "
                             f"({', '.join(SOLVING_MODES)}; "
                             "they differ on the every-row path, any device but a CPU)")
    parser.add_argument("--prefix-programs", type=int_list(1), default=[None],
                        help="comma-separated values of the fused kernels' programs per launch with a count "
                             "(tt_env.batch.solver_triton.PREFIX_PROGRAMS), each run side by side (needs Triton)")
    parser.add_argument("--kernels", default="auto",
                        help=f"comma-separated backends of the step's observation, moves and deals "
                             f"({', '.join(KERNEL_BACKENDS)}; 'auto' is the C loops on a CPU and the Triton kernels "
                             "on CUDA, 'torch' the tensor code), each run side by side")
    parser.add_argument("--cuda-graphs", default="off",
                        help="comma-separated off,on: BatchGame(cuda_graphs=...), each run side by side "
                             "(on: CUDA only)")
    args = parser.parse_args()
    envs = {e.strip() for e in args.envs.split(",") if e.strip()}
    unknown = envs - {"batch", "tt_raw", "openspiel"}
    if unknown:
        raise SystemExit(f"unknown env(s) {sorted(unknown)}: choose from batch, tt_raw, openspiel")
    solving = [m.strip() for m in args.solving.split(",") if m.strip()]
    if not solving or set(solving) - set(SOLVING_MODES):
        raise SystemExit(f"--solving {args.solving!r}: choose from {', '.join(SOLVING_MODES)} (comma-separated)")
    kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    if not kernels or set(kernels) - set(KERNEL_BACKENDS):
        raise SystemExit(f"--kernels {args.kernels!r}: choose from {', '.join(KERNEL_BACKENDS)} (comma-separated)")
    switches = {"off": False, "on": True}
    graphs = [g.strip() for g in args.cuda_graphs.split(",") if g.strip()]
    if not graphs or set(graphs) - set(switches):
        raise SystemExit(f"--cuda-graphs {args.cuda_graphs!r}: choose from off, on (comma-separated)")
    if "on" in graphs and torch.device(args.device).type != "cuda":
        raise SystemExit(f"--cuda-graphs on needs --device cuda (got --device {args.device})")
    programs: list[int | None] = args.prefix_programs
    if programs != [None]:
        try:
            from tt_env.batch import solver_triton  # noqa: F401
        except ImportError as exc:
            raise SystemExit(f"--prefix-programs needs Triton (pip install -e '.[gpu]'): {exc}") from None
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    info = vars(args) | {"torch_threads": torch.get_num_threads()}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    print_header("Batched engine decisions/s under random masked play (one decision = one player's action)", info)

    runners: list[Runner] = []
    memory: dict[str, int] = {}
    if "batch" in envs:
        for players in args.players:
            for tables in args.batch_sizes:
                for mode, count, backend, graph in itertools.product(solving, programs, kernels, graphs):
                    runner, per_table = make_batch_runner(players, tables, device, args.seed, args.solver, mode,
                                                          args.every_row, count, backend, switches[graph])
                    runners.append(runner)
                    memory[runner.name] = per_table
    if "tt_raw" in envs:  # the scalar env at each player count, so that each ratio is like for like
        from tt_env.three_thirteen_v0 import raw_env

        for players in dict.fromkeys(args.players):
            runners.append(make_aec_runner(f"three-thirteen {players}p raw_env",
                                           lambda players=players: raw_env(num_players=players), args.seed,
                                           "ours, scalar"))
    if "openspiel" in envs:
        try:
            runners.append(make_openspiel_runner(args.seed))
        except ImportError as exc:
            print(f"(OpenSpiel not installed, skipped: {exc})")

    for r in runners:
        r.run(args.warmup)
    for rep in range(args.repeats):
        for r in runners:
            steps, elapsed = r.run(args.seconds)
            r.rates.append(steps / elapsed)
        print(f"  repetition {rep + 1}/{args.repeats}: " + ", ".join(f"{r.name} {fmt_rate(r.rates[-1])}"
                                                                   for r in runners), flush=True)
    print()
    rows, med = [], {}
    for r in runners:
        m, lo, hi = summarize(r.rates)
        med[r.name] = m
        mem = f"{memory[r.name]:,} B" if r.name in memory else ""
        rows.append([r.name, fmt_rate(m), fmt_rate(lo), fmt_rate(hi), mem, r.note])
    print_table(["env", "median decisions/s", "min", "max", "state/table", "note"], rows)
    batched = [r.name for r in runners if r.name in memory]
    for players in sorted({n.split()[1] for n in batched}, key=lambda p: int(p[:-1])):
        scalar = f"three-thirteen {players} raw_env"
        if scalar in med:
            best = max((n for n in batched if n.split()[1] == players), key=med.get)
            print(f"best batched {players} / scalar raw_env {players}: {med[best] / med[scalar]:.1f}x "
                  f"({best}: {fmt_rate(med[best])} vs {fmt_rate(med[scalar])}, medians)")
    osp = next((r.name for r in runners if r.name.startswith("openspiel")), None)
    if osp and batched:
        best = max(batched, key=med.get)
        print(f"best batched / OpenSpiel gin_rummy: {med[best] / med[osp]:.1f}x")


if __name__ == "__main__":
    main()
