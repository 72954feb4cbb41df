"""What a CUDA graph of a step would bake in, recorded on a CPU: a stand-in for ``CudaGraphs``.

A graph replays the kernels that its capture launched, with the arguments they had then. So a
step is safe to capture when, at every step of a phase, it runs the same operations, with the
same Python values, on the same long-lived tensors, and never reads a tensor on the host.
:class:`StepTrace` records a step's operations with torch's dispatch mode (and the Triton
kernels it launches, interpreted), naming each tensor by where it comes from instead of its
address: a graph input, the output of an earlier operation of the step, or a tensor that lived
before it. :class:`RecordedGraphs` is a ``tt_env.batch.graphs.GraphBackend`` whose replay runs
the step again and fails where the step did not run the program it captured.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

HOST_READS = {"aten._local_scalar_dense.default", "aten.nonzero.default", "aten.is_nonzero.default",
              "aten.equal.default", "aten.masked_select.default", "aten.repeat_interleave.Tensor",
              "aten._unique2.default", "aten.unique_consecutive.default"}
"""Operations that wait on the device, which a capture refuses."""
HOST_DATA = {"aten.lift_fresh.default", "aten.lift_fresh_copy.default"}
"""A tensor made from host data in the step (``torch.tensor(...)``): on a GPU a copy from the host,
each step anew, which a capture refuses or bakes in as it was. (Not a 0-dim one: that is how a CPU
makes the scalar of ``x[index] = 0``, which a GPU fills on the device.)"""


_RECORDING: list[StepTrace] = []


def stand_in(fn: Callable) -> Callable:
    """``fn`` recorded as one operation, its own work unrecorded: for a part that stands in for one
    checked apart (the C solver for the fused meld program, on a CPU)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if not _RECORDING:
            return fn(*args, **kwargs)
        trace = _RECORDING[-1]
        with _disable_current_modes():
            out = fn(*args, **kwargs)
        return trace._record(("stand-in", fn.__name__, trace._describe(args), trace._describe(kwargs)), out)

    return run


class StepTrace(TorchDispatchMode):
    """The operations run inside ``with StepTrace(inputs):`` (see the module), in :attr:`ops`."""

    def __init__(self, inputs: list[torch.Tensor]) -> None:
        super().__init__()
        self.ops: list[tuple] = []
        self.refused: list[str] = []
        self._names: dict[int, tuple] = {_storage(t): ("input", i) for i, t in enumerate(inputs)}
        self._triton_run: Callable | None = None

    def __enter__(self) -> StepTrace:
        _RECORDING.append(self)
        interpreted = _interpreted_function()
        if interpreted is None:  # (no Triton: no kernels to record)
            return super().__enter__()
        self._triton_run = interpreted.run
        trace = self

        def recorded_run(kernel, *args, grid, warmup, **kwargs):
            trace.ops.append(("triton", kernel.fn.__name__, grid, trace._describe(args), trace._describe(kwargs)))
            with _disable_current_modes():
                return trace._triton_run(kernel, *args, grid=grid, warmup=warmup, **kwargs)

        interpreted.run = recorded_run
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        if self._triton_run is not None:
            _interpreted_function().run = self._triton_run
        _RECORDING.remove(self)
        super().__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        name = str(func)
        if name in HOST_READS or (name.startswith("aten.index") and _bool_index(args)):
            self.refused.append(f"{name} at {_caller()}: waits on the device")
        if name in HOST_DATA and args[0].dim() > 0:
            self.refused.append(f"{name} at {_caller()}: a tensor made from host data")
        if name in HOST_DATA and args[0].dim() == 0:  # a fresh scalar each time: named by its value
            entry = (name, ("scalar", args[0].item()))
        else:
            entry = (name, self._describe(args), self._describe(kwargs))
        return self._record(entry, func(*args, **kwargs))

    def _record(self, entry: tuple, out: Any) -> Any:
        """Append ``entry``, and name ``out``'s tensors as its outputs."""
        self.ops.append(entry)
        index = len(self.ops) - 1
        for j, t in enumerate(_tensors(out)):
            if self._names.get(_storage(t), ("",))[0] != "input":  # (an input written in place keeps its name)
                self._names[_storage(t)] = ("op", index, j)
        return out

    def _describe(self, value: Any) -> Any:
        """``value`` with each tensor named by where it comes from, and its layout."""
        if isinstance(value, torch.Tensor):
            where = self._names.get(_storage(value), ("lived before the step", _storage(value)))
            return (where, tuple(value.shape), tuple(value.stride()), value.storage_offset(), value.dtype)
        if isinstance(value, (list, tuple)):
            return type(value)(self._describe(v) for v in value)
        if isinstance(value, dict):
            return {k: self._describe(v) for k, v in value.items()}
        return value


class RecordedKernel:
    """A Triton kernel stand-in (``kernel[grid](...)``) that computes nothing and, inside a
    :class:`StepTrace`, records its launch: what a graph of the kernel would bake in."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getitem__(self, grid: tuple) -> Callable[..., None]:
        def launch(*args: Any, **kwargs: Any) -> None:
            if _RECORDING:
                trace = _RECORDING[-1]
                trace.ops.append(("triton", self.name, grid, trace._describe(args), trace._describe(kwargs)))

        return launch


class RecordedGraphs:
    """A CPU stand-in for ``tt_env.batch.graphs.CudaGraphs``. Capture runs the step under a
    :class:`StepTrace` and puts the inputs back as they were (a real capture runs nothing); a replay
    runs it again, asserts that it ran the captured program, writes into the captured outputs, and
    puts back the attributes of ``hosts`` (the game and its state: a real replay runs no Python)."""

    def __init__(self, hosts: Sequence[object] = ()) -> None:
        self.hosts = list(hosts)
        self.replays = 0

    def eager(self, fn: Callable[[], Any]) -> Any:
        return fn()

    def capture(self, fn: Callable[[], Any], inputs: list[torch.Tensor]) -> tuple[Any, Any]:
        before = [t.clone() for t in inputs]
        with StepTrace(inputs) as trace:
            out = fn()
        assert not trace.refused, f"a capture would fail or bake these in: {trace.refused[:5]}"
        for t, value in zip(inputs, before, strict=True):
            t.copy_(value)
        return (fn, inputs, trace.ops, out), out

    def replay(self, graph: Any) -> None:
        fn, inputs, ops, out = graph
        attributes = [dict(vars(host)) for host in self.hosts]
        with StepTrace(inputs) as trace:
            again = fn()
        for host, saved in zip(self.hosts, attributes, strict=True):
            vars(host).clear()
            vars(host).update(saved)
        for i, (captured, ran) in enumerate(zip(ops, trace.ops, strict=False)):
            assert captured == ran, f"operation {i} differs from the captured one:\n  {captured}\n  {ran}"
        assert len(ops) == len(trace.ops), f"{len(trace.ops)} operations ran where {len(ops)} were captured"
        for mine, value in zip(_tensors(out), _tensors(again), strict=True):
            if mine is not value:
                mine.copy_(value)
        self.replays += 1


def _interpreted_function() -> type | None:
    """Triton's interpreted kernel class, or None without Triton."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return None
    return InterpretedFunction


def _caller() -> str:
    """The innermost line of the package in the running stack."""
    frames = [f for f in traceback.extract_stack() if "tt_env" in f.filename]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _bool_index(args: tuple) -> bool:
    """Whether an indexing operation's indices hold a bool mask (a host read of its count)."""
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for a in args[1:2] if isinstance(a, (list, tuple))
               for i in a)
