"""CUDA graphs of a lockstep step: a whole ``BatchGame.step`` replayed as one launch.

A GPU step launches a couple of hundred kernels whatever the batch size, each a few microseconds
of the host's time, so up to tens of thousands of tables the host, not the GPU, sets the pace
(docs/batched-engine.md). The every-row path a GPU takes is a fixed program: fixed shapes, no
host synchronisation, and, in lockstep, the same operations at every draw step and at every
discard step. So each of the two is captured once as a CUDA graph and then replayed.

A graph bakes in what the host gave its kernels at capture; this keeps each of them right:

- **tensor addresses.** The state's fields and the kept penalties live in tensors of their own
  (``static``), which every replay reads and writes: a step that replaces a field copies the new
  value into them inside the graph, and before a replay a field that something else replaced
  (an eager step, a load, a reset) is copied back into them.
- **Python values** (the seed, the reward mode, auto-reset): a change drops the graphs, and the
  next steps capture again.
- **outputs.** A replay writes into the tensors captured once, so each step returns clones.

The steps a graph cannot take run eagerly: ``active=``, ``final_seat=``, and every step after
something ends the lockstep (``BatchGame.step`` says what). So do the first ``warmup`` steps of
each phase, which compile the Triton kernels and fill the caches that a capture must find full.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import torch

from .timestep import TimeStep

_KEPT = "_hand_penalty"
"""The one game attribute besides the state's fields that steps carry from one to the next."""


class GraphBackend(Protocol):
    """How graphs are made and run: :class:`CudaGraphs` on a GPU (tests give a CPU stand-in)."""

    def eager(self, fn: Callable[[], TimeStep]) -> TimeStep:
        """Run ``fn`` as a plain step (a warm-up)."""

    def capture(self, fn: Callable[[], TimeStep], inputs: list[torch.Tensor]) -> tuple[Any, TimeStep]:
        """(a graph of ``fn``, its outputs). Capturing runs nothing: ``inputs``, the tensors ``fn``
        reads and writes, keep their values."""

    def replay(self, graph: Any) -> None:
        """Run ``graph`` once, writing into the outputs that :meth:`capture` returned."""


class CudaGraphs:
    """:class:`GraphBackend` of ``torch.cuda.CUDAGraph``: warm-ups on a side stream, as torch's
    docs ask, and one memory pool per graph (the two phases' graphs never share temporaries)."""

    def eager(self, fn: Callable[[], TimeStep]) -> TimeStep:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            out = fn()
        torch.cuda.current_stream().wait_stream(side)
        return out

    def capture(self, fn: Callable[[], TimeStep], inputs: list[torch.Tensor]) -> tuple[Any, TimeStep]:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = fn()
        return graph, out

    def replay(self, graph: Any) -> None:
        graph.replay()


def step_graphs(game: Any, cuda_graphs: bool) -> StepGraphs | None:
    """``BatchGame(cuda_graphs=...)``'s graphs of ``game``: None when off; on needs a CUDA device (the
    flag itself is checked by ``BatchGame``, with its other flags)."""
    if cuda_graphs and game.device.type != "cuda":
        raise ValueError(f"cuda_graphs=True needs a CUDA device, not device={str(game.device)!r}: use "
                         f"device='cuda', or cuda_graphs=False")
    return StepGraphs(game) if cuda_graphs else None


class StepGraphs:
    """The captured draw and discard steps of one :class:`tt_env.batch.BatchGame` (see the module)."""

    def __init__(self, game: Any, backend: GraphBackend | None = None, warmup: int = 2) -> None:
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 1:
            raise ValueError(f"warmup={warmup!r} is not allowed: use an int >= 1 (eager steps of each phase "
                             f"before its capture)")
        self._game = game
        self._backend = backend if backend is not None else CudaGraphs()
        self._warmup = warmup
        self._graphs: dict[int, tuple[Any, TimeStep]] = {}
        self._eager_steps = [0, 0]
        self._baked: tuple | None = None
        self._static: dict[str, torch.Tensor] | None = None
        self._actions: torch.Tensor | None = None

    @property
    def captured(self) -> tuple[int, ...]:
        """The lockstep phases (0 draw, 1 discard) whose step is captured."""
        return tuple(sorted(self._graphs))

    def step(self, actions: torch.Tensor, advance: Callable[[torch.Tensor], TimeStep]) -> TimeStep:
        """The lockstep step of ``actions`` (checked (B,) int64, on the device): ``advance(actions)``
        run eagerly (a warm-up), captured and replayed, or replayed."""
        game = self._game
        phase = game._lockstep_phase
        if phase not in (0, 1):
            raise RuntimeError("StepGraphs.step needs the lockstep phase: BatchGame.step takes the eager path "
                               "out of lockstep")
        baked = (game._seed32, game.autoreset, game.reward_mode)
        if baked != self._baked:  # what a capture bakes in changed: capture again (after warm-ups)
            self._graphs.clear()
            self._eager_steps = [0, 0]
            self._baked = baked
        if phase not in self._graphs:
            if self._eager_steps[phase] < self._warmup:
                self._eager_steps[phase] += 1
                return self._backend.eager(lambda: advance(actions))
            self._capture(phase, actions, advance)
        graph, out = self._graphs[phase]
        self._bind(copy=True)
        self._actions.copy_(actions)
        self._backend.replay(graph)
        game._lockstep_phase = 1 - phase
        ts = TimeStep(*(t.clone() for t in out))
        if out.final_observation is out.observation:  # (the same tensor when no game can end)
            ts = ts._replace(final_observation=ts.observation)
        game._mask = ts.action_mask
        return ts

    def _capture(self, phase: int, actions: torch.Tensor, advance: Callable[[torch.Tensor], TimeStep]) -> None:
        game = self._game
        if self._static is None:
            self._static = {**game.state.fields(), _KEPT: getattr(game, _KEPT)}
            self._actions = torch.empty_like(actions)
        self._bind(copy=True)
        self._actions.copy_(actions)  # (a capture runs nothing, a stand-in runs the step: this one's)

        def body() -> TimeStep:
            out = advance(self._actions)
            for name, static in self._static.items():  # the fields this step replaced, into the graph's own
                value = self._current(name)
                if value is not static:
                    static.copy_(value)
            return out

        self._graphs[phase] = self._backend.capture(body, [*self._static.values(), self._actions])
        game._lockstep_phase = phase  # (the capture's Python ran the step's bookkeeping, not its work)
        self._bind(copy=False)

    def _current(self, name: str) -> torch.Tensor:
        return getattr(self._game, name) if name == _KEPT else getattr(self._game.state, name)

    def _bind(self, copy: bool) -> None:
        """Point the game at the static tensors, first copying in (``copy``) any value that replaced one."""
        for name, static in self._static.items():
            value = self._current(name)
            if value is static:
                continue
            if copy:
                static.copy_(value)
            setattr(self._game if name == _KEPT else self._game.state, name, static)
