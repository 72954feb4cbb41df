"""How the batched engine builds its Triton kernels: compiled on CUDA, interpreted on a CPU.

A kernel is a plain function whose body uses ``triton.language`` as ``tl``; :func:`build` makes
it a ``triton.jit`` kernel, or wraps it for Triton's interpreter (CPU tensors: the tests run
every kernel that way). Device helpers that a kernel calls by name are bound into its globals
as ``triton.jit`` functions, or as the plain functions for the interpreter, which runs the
kernel's body as Python (it can call neither a ``triton.jit`` function nor one it cannot see in
the kernel's globals). For the same reason a kernel sums with ``tl.reduce(x, axis,
tl.standard._sum_combine)``, the combine function of ``tl.sum``, which the interpreter runs as a
numpy sum, never ``tl.sum`` itself.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence


def build(kernels: Sequence[Callable], interpret: bool, helpers: Sequence[Callable] = ()) -> list:
    """``kernels`` as Triton kernels (``kernel[grid](...)``), sharing one set of globals in which
    ``triton.language`` is ``tl`` and each of ``helpers`` (plain functions, which may call one
    another) is bound by its name."""
    import triton
    import triton.language as tl

    scope = {**kernels[0].__globals__, "tl": tl}

    def rebound(fn: Callable) -> Callable:
        copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
        copy.__annotations__, copy.__qualname__ = dict(fn.__annotations__), fn.__qualname__  # tl.constexpr marks
        return copy

    for helper in helpers:
        scope[helper.__name__] = rebound(helper) if interpret else triton.jit(rebound(helper))
    if interpret:
        from triton.runtime.interpreter import InterpretedFunction

        return [InterpretedFunction(rebound(kernel)) for kernel in kernels]
    return [triton.jit(rebound(kernel)) for kernel in kernels]
