"""The batched engine's CPU kernels and the one rule for choosing them over the tensor code.

The kernels are C loops over the tables in the optional extension ``tt_env.batch._kernels``
(``tt_env/batch/_kernels*.c``, built by ``pip install`` where a C compiler is found): the
observation and mask and a seat's hand as bytes (:mod:`tt_env.batch.observe`), the moves and
the end of each turn (:mod:`tt_env.batch.moves`), the deals and stock refills
(:mod:`tt_env.batch.deal`) and ``random-v0``'s pick (:func:`tt_env.batch.agents.nth_legal`).
Each is None here where the extension is not built. Every caller takes ``backend=`` with the
values :data:`KERNEL_BACKENDS` and asks :func:`use_c`, and, for the parts a GPU runs as fused
Triton kernels, :func:`use_triton`; the tensor code is the reference.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .state import BatchState, field_dtype

try:
    from ._kernels import apply_moves as c_apply_moves
    from ._kernels import deal_rows as c_deal_rows
    from ._kernels import end_turns as c_end_turns
    from ._kernels import nth_legal as c_nth_legal
    from ._kernels import observe_and_mask as c_observe_and_mask
    from ._kernels import reshuffle_rows as c_reshuffle_rows
    from ._kernels import seat_hands as c_seat_hands
except ImportError:  # built without a compiler: the tensor code on every device
    c_apply_moves = c_deal_rows = c_end_turns = c_nth_legal = c_observe_and_mask = c_reshuffle_rows = None
    c_seat_hands = None

KERNEL_BACKENDS = ("auto", "c", "torch", "triton")
"""The ``backend=`` values: ``"c"`` the C loop (CPU tensors, the built extension), ``"torch"``
the tensor code (any device), ``"triton"`` a fused Triton kernel where the part has one (the
observation, the moves, the deals and refills, the go-out filter: the ``*_triton`` modules;
interpreted on a CPU, for the tests) and the tensor code elsewhere, ``"auto"`` the C loop where
it can run, else the Triton kernel on CUDA where there is one, else the tensor code."""


def use_c(kernel: Callable | None, device: torch.device, backend: str) -> bool:
    """Whether ``backend`` means the C loop ``kernel`` (None where it is not built) for tensors
    on ``device``; a bad ``backend``, or ``"c"`` where it cannot run, raises ``ValueError``."""
    if backend not in KERNEL_BACKENDS:
        raise ValueError(f"backend={backend!r} is not allowed: use one of {', '.join(KERNEL_BACKENDS)}")
    usable = kernel is not None and device.type == "cpu"
    if backend == "c" and not usable:
        raise ValueError("backend='c' needs the built C extension (tt_env.batch._kernels) and CPU tensors; "
                         f"these are on {device.type}: use 'torch' or 'auto'")
    return usable and backend in ("auto", "c")


def use_triton(device: torch.device, backend: str) -> bool:
    """Whether ``backend`` means a part's fused Triton kernel for tensors on ``device``: asked
    for by name (interpreted on a CPU), or ``"auto"`` on CUDA where Triton is installed.
    ``"triton"`` without Triton raises ``ValueError``."""
    from .solver_triton import available

    if backend not in KERNEL_BACKENDS:
        raise ValueError(f"backend={backend!r} is not allowed: use one of {', '.join(KERNEL_BACKENDS)}")
    if backend == "triton" and not available():
        raise ValueError("backend='triton' needs Triton (pip install -e '.[gpu]'): use 'torch' or 'auto'")
    return backend == "triton" or (backend == "auto" and device.type == "cuda" and available())


def host_view(t: torch.Tensor, dtype: torch.dtype = torch.int64) -> np.ndarray:
    """A numpy view of a CPU tensor for a C loop to read (a copy only if it is not contiguous or
    not of ``dtype``)."""
    return t.to(dtype).contiguous().numpy()  # host: CPU tensors (checked by use_c)


def written_field(state: BatchState, name: str, dtype: torch.dtype | None = None) -> torch.Tensor:
    """The field ``name`` of ``state``, which a kernel writes in place: first made a contiguous
    tensor of ``dtype`` (default: the field's own, :func:`tt_env.batch.state.field_dtype`) if it
    is not one (never so in the engine's own states), so that the writes land in the state,
    never in a copy."""
    t = getattr(state, name)
    dtype = field_dtype(name) if dtype is None else dtype
    if t.dtype != dtype or not t.is_contiguous():
        t = t.to(dtype).contiguous()
        setattr(state, name, t)
    return t


def written_view(state: BatchState, name: str, dtype: torch.dtype = torch.int64) -> np.ndarray:
    """A numpy view of :func:`written_field` for a C loop (CPU tensors)."""
    return written_field(state, name, dtype).numpy()  # host: CPU tensors (checked by use_c)
