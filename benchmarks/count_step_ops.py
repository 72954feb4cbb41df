"""Tensor operations a GPU step launches, counted on a CPU.

Run from the repository root::

    python benchmarks/count_step_ops.py
    python benchmarks/count_step_ops.py --players 4 --tables 256

On a GPU every tensor operation is a kernel launch, a few microseconds of the host's time
whatever the batch size, so up to tens of thousands of tables a step costs about its number of
launches (docs/batched-engine.md). This counts them without a GPU, with torch's dispatch mode
(views, which launch nothing, left out):

- one draw step and one discard step of ``BatchGame`` on the every-row path a GPU takes, in
  each ``solving`` mode, with the C solver standing in for the meld program, and the
  observation and mask, the moves, the end of the turns, the go-out filter, the deals and the
  stock refills by the tensor code and (where Triton is installed, interpreted here) by the
  fused kernels a GPU runs with Triton, whose launches are counted apart;
- one call of the fused meld program (``least_penalty(..., backend="triton")``): its tensor
  operations and its Triton kernel launches, the kernels replaced by stubs that only count
  (the values are not computed, so nothing here needs Triton);
- the go-out filter ``could_meld_completely`` in both its layouts;
- a step replayed as a CUDA graph (``BatchGame(cuda_graphs=True)``): the operations around the
  graph's one launch (the actions copied in, the outputs cloned), with a stand-in that counts
  the replays.

A GPU step launches about the engine's operations plus, per meld program call (counted in the
table: the discard step's go-out check, which with ``gathered`` solves the round ends' hands
too), the program's launches.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import print_header, print_table  # noqa: E402

from tt_env.batch import (  # noqa: E402
    BatchGame,
    deal_triton,
    go_out_filter,
    go_out_filter_triton,
    moves_triton,
    observe_triton,
    solver,
    solver_triton,
)
from tt_env.batch import game as game_module  # noqa: E402
from tt_env.batch.agents import BatchRandom  # noqa: E402
from tt_env.batch.graphs import StepGraphs  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402

VIEWS = {"aten.view.default", "aten._unsafe_view.default", "aten.unsqueeze.default", "aten.expand.default",
         "aten.select.int", "aten.slice.Tensor", "aten.t.default", "aten.permute.default", "aten.alias.default",
         "aten.squeeze.dim", "aten.reshape.default", "aten.detach.default", "aten.empty.memory_format",
         "aten.lift_fresh.default"}


OBSERVATIONS = {"torch": "tensor code", "triton": "fused kernels"}
"""The every-row path's observation, moves, go-out filter, deals and refills: by the tensor code or the
Triton kernels."""


class CountOps(TorchDispatchMode):
    """Counts the aten operations dispatched inside it, views and allocations left out."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if str(func) not in VIEWS:
            self.count += 1
        return func(*args, **(kwargs or {}))


class _CountedKernel:
    """Wraps a Triton kernel: ``kernel[grid](...)`` counts one launch and runs it (interpreted on
    a CPU) outside the dispatch mode, whose count it would otherwise swell with the
    interpreter's copies."""

    launches = 0

    def __init__(self, kernel) -> None:
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(*args, **kwargs) -> None:
            _CountedKernel.launches += 1
            with _disable_current_modes():
                self.kernel[grid](*args, **kwargs)
        return launch


def engine_ops(players: int, tables: int, solving: str, observation: str) -> dict[bool, tuple[int, int, int]]:
    """Per step kind (True: a draw step, False: a discard step), the tensor operations, the Triton
    kernel launches and the meld solver calls of the every-row path, the C solver standing in for
    the meld program, the observation, moves and deals by ``observation`` ("torch", or "triton":
    the fused kernels a GPU runs when Triton is installed)."""
    rules = Rules(num_players=players)
    game = BatchGame(rules, tables, check_actions=False, solver="auto", solving=solving)
    game._sparse = False  # the path a GPU takes
    game._kernel_backend = observation  # and its observation
    agent = BatchRandom(rules)
    ts = game.reset()
    for _ in range(10):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    counts: dict[bool, tuple[int, int, int]] = {}
    solve, calls = game_module.least_penalty, [0]

    def counted_solve(*args, **kwargs) -> torch.Tensor:
        calls[0] += 1
        return solve(*args, **kwargs)

    game_module.least_penalty = solver.least_penalty = counted_solve  # (kept solving calls the game's name,
    # gathered solving tt_env.batch.go_out's, through the solver module)
    kernel, deal_kernels, move_kernels = observe_triton._kernel, deal_triton._kernels, moves_triton._kernels
    filter_kernel = go_out_filter_triton._kernel
    observe_triton._kernel = lambda interpret: _CountedKernel(kernel(interpret))
    go_out_filter_triton._kernel = lambda interpret: _CountedKernel(filter_kernel(interpret))
    deal_triton._kernels = lambda interpret: [_CountedKernel(k) for k in deal_kernels(interpret)]
    moves_triton._kernels = lambda interpret: [_CountedKernel(k) for k in move_kernels(interpret)]
    try:
        for _ in range(2):
            drawing = game._lockstep_phase == 0
            actions = agent.act(ts.observation, ts.action_mask)
            _CountedKernel.launches, calls[0] = 0, 0
            with CountOps() as ops:
                ts = game.step(actions)
            counts[drawing] = (ops.count, _CountedKernel.launches, calls[0])
    finally:
        observe_triton._kernel, deal_triton._kernels, moves_triton._kernels = kernel, deal_kernels, move_kernels
        go_out_filter_triton._kernel, game_module.least_penalty, solver.least_penalty = filter_kernel, solve, solve
    return counts


class _CountedGraphs:
    """A ``tt_env.batch.graphs.GraphBackend`` that counts replays and runs nothing on them (its
    capture runs the step once, whose outputs stand for the graph's): what a replayed step
    launches besides its graph."""

    replays = 0

    def eager(self, fn):
        return fn()

    def capture(self, fn, inputs):
        return None, fn()

    def replay(self, graph) -> None:
        _CountedGraphs.replays += 1


def replayed_ops(players: int, tables: int) -> dict[bool, tuple[int, int]]:
    """Per step kind (True: a draw step), the tensor operations of ``BatchGame.step`` around a
    replayed CUDA graph (the action's copy in, the outputs' clones) and the graph launches."""
    rules = Rules(num_players=players)
    game = BatchGame(rules, tables, check_actions=False)
    game._sparse = False  # the path a GPU takes
    game._graphs = StepGraphs(game, _CountedGraphs())
    agent = BatchRandom(rules)
    ts = game.reset()
    for _ in range(6):  # two warm-ups of each phase, then each phase's capture
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    counts = {}
    for _ in range(2):
        drawing = game._lockstep_phase == 0
        actions = agent.act(ts.observation, ts.action_mask)
        _CountedGraphs.replays = 0
        with CountOps() as ops:
            ts = game.step(actions)
        counts[drawing] = (ops.count, _CountedGraphs.replays)
    return counts


class _StubKernel:
    """Stands in for a Triton kernel: ``kernel[grid](...)`` counts one launch."""

    launches = 0

    def __getitem__(self, grid):
        def launch(*args, **kwargs) -> None:
            _StubKernel.launches += 1
        return launch


def program_ops(players: int, tables: int, prefix: bool) -> tuple[int, int]:
    """(tensor operations, kernel launches) of one fused meld program call on ``tables`` hands."""
    rules = Rules(num_players=players)
    kernels = solver_triton._kernels
    available = solver_triton.available
    solver_triton._kernels = lambda interpret: (_StubKernel(), _StubKernel(), _StubKernel())
    solver_triton.available = lambda: True
    try:
        counts = torch.zeros(tables, 52, dtype=torch.uint8)

        def call() -> None:
            solver.least_penalty(counts, 3, rules, backend="triton", check=False,  # as the engine calls it
                                 prefix=torch.tensor([tables // 8]) if prefix else None)

        call()  # the first call makes the plan's tensors once (cached): not a step's work
        _StubKernel.launches = 0
        with CountOps() as ops:
            call()
        return ops.count, _StubKernel.launches
    finally:
        solver_triton._kernels, solver_triton.available = kernels, available


def filter_ops(tables: int) -> dict[str, int]:
    """Operations of the go-out filter's two layouts."""
    cards = torch.zeros(tables, 4, 13, dtype=torch.uint8)
    wild = torch.full((tables,), 3)
    out = {}
    for name, fn in (("bits (a CPU's)", go_out_filter._wilds_needed_bits),
                     ("slices (a GPU's)", go_out_filter._wilds_needed_slices)):
        with CountOps() as ops:
            fn(cards, wild)
        out[name] = ops.count
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--tables", type=int, default=256)
    args = parser.parse_args()
    if not 2 <= args.players <= 8 or args.tables < 8:
        raise SystemExit("--players must be 2..8 and --tables >= 8")
    print_header("Tensor operations (kernel launches on a GPU) of the every-row path, counted on a CPU", vars(args))
    rows = []
    observations = ("torch", "triton") if solver_triton.available() else ("torch",)
    for observation in observations:
        for solving in ("gathered", "kept"):
            counts = engine_ops(args.players, args.tables, solving, observation)
            cells = [f"{ops}" + (f" + {kernels} kernels" if observation == "triton" else "")
                     + (f", {calls} solver call{'s' if calls > 1 else ''}" if calls else "")
                     for ops, kernels, calls in (counts[True], counts[False])]
            rows.append([f"BatchGame.step, solving={solving}, {OBSERVATIONS[observation]}", *cells, ""])
    graphed = replayed_ops(args.players, args.tables)
    rows.append(["BatchGame.step, cuda_graphs=True, a replay", *(f"{ops} + {launches} graph launch"
                                                                for ops, launches in (graphed[True], graphed[False])),
                 ""])
    for prefix in (True, False):
        ops, launches = program_ops(args.players, args.tables, prefix)
        rows.append([f"fused meld program, {'with' if prefix else 'without'} a prefix", "", "",
                     f"{ops} operations + {launches} kernels"])
    for name, ops in filter_ops(args.tables).items():
        rows.append([f"go-out filter, {name}", "", "", f"{ops} operations"])
    print_table(["work", "draw step", "discard step", "per call"], rows)


if __name__ == "__main__":
    main()
