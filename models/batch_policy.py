"""Logits of many observations at once, each row bitwise the same whatever the batch.

CPU kernels may round a row differently with the batch it is computed in, and an argmax can
then flip on a near-tie, so a network's move could depend on how many games were evaluated
side by side. Measured with torch 2.13 on CPU (``tests/test_eval_batch.py``): oneDNN and
NNPACK pick their convolution algorithms by batch size; the matrix products of batches of
1 to 3 rows use other kernels than larger ones, and the leftover rows of a batch (past a
multiple of 4) yet others; and for some layer sizes (a 37-input, 8-output linear layer, say)
a row's result depends on its position in the batch modulo 4.

:class:`BatchPolicy` therefore runs forward passes of a few fixed sizes only
(:data:`PASS_ROWS`: a batch is cut into passes of 128 and 32 rows, and the rest padded with
zero rows, whose logits are dropped, up to passes of 8), with oneDNN and NNPACK off
(convolutions by im2col and matrix product: one algorithm, and the fastest for these small
planes). On its first batch it checks (:func:`agreeing_sizes`, on seeded dense random
rows, where kernels that round differently practically always disagree somewhere) that a
row gets bitwise the same logits at any position of an 8-row pass, among any other rows, and
the same in a pass of each larger size; a size that fails is not used, and if 8-row passes
fail it runs one row per pass (slower, and independent of the batch by construction). Every
pass runs on one thread, whatever the caller's setting (:func:`fixed_kernels`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import torch

from .networks import PolicyValueNet

PASS_ROWS = (128, 32, 8)
"""Rows of a forward pass, largest first; a single decision costs a pass of the last (8 rows:
fewer cost nearly as much, and larger passes are cheaper per row)."""
PROBE_ROWS = 128
"""Seeded random rows (uniform in [0, 1)) :func:`agreeing_sizes` computes in every pass size and in several orders."""

Policy = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


@contextlib.contextmanager
def fixed_kernels() -> Iterator[None]:
    """One thread, oneDNN and NNPACK off (all restored after): convolutions by im2col and
    matrix product, whatever the caller's settings (more threads are much slower for passes
    this small, and could round differently)."""
    threads = torch.get_num_threads()
    mkldnn = torch.backends.mkldnn.enabled
    torch.set_num_threads(1)
    torch.backends.mkldnn.enabled = False
    nnpack = torch.backends.nnpack.set_flags(False)
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = mkldnn
        torch.backends.nnpack.set_flags(*nnpack)
        torch.set_num_threads(threads)


def padded(x: torch.Tensor, rows: int) -> torch.Tensor:
    """``x`` with zero rows appended up to a multiple of ``rows`` rows."""
    missing = -x.shape[0] % rows
    if not missing:
        return x
    return torch.cat([x, x.new_zeros((missing, x.shape[1]))])


def trace_policy(net: PolicyValueNet, example: torch.Tensor) -> Policy:
    """``net.logits_and_value`` traced with ``example`` (eager if it cannot be traced or if
    the trace does not give the eager logits on ``example``).

    torch's own trace check is off: it imports ``torch.testing`` (about a second of
    start-up); the comparison here does that job for the logits.
    """
    eager = net.logits_and_value
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace_module(net, {"logits_and_value": example}, check_trace=False).logits_and_value
            if torch.allclose(traced(example)[0], eager(example)[0], rtol=1e-4, atol=1e-5):
                return traced
    except Exception:  # noqa: BLE001 - a network that cannot be traced runs eagerly
        pass
    return eager


def in_passes(policy: Policy, x: torch.Tensor, sizes: tuple[int, ...]) -> torch.Tensor:
    """Logits of ``x``'s rows by passes of ``sizes`` rows (largest first, the rest padded up to
    the last size)."""
    rows = x.shape[0]
    x = padded(x, sizes[-1])
    parts, start = [], 0
    for size in sizes:
        while x.shape[0] - start >= size:
            parts.append(policy(x[start:start + size])[0])
            start += size
    out = parts[0] if len(parts) == 1 else torch.cat(parts)
    return out[:rows]


def agreeing_sizes(policy: Policy, probes: torch.Tensor, orders: int = 2, seed: int = 0) -> tuple[int, ...]:
    """The sizes of :data:`PASS_ROWS` whose passes give ``probes``' rows bitwise the logits of 8-row
    passes, whatever their order; ``()`` if 8-row passes themselves depend on the order.

    ``probes``: rows (a multiple of 128) on which differently rounding kernels would show,
    computed in their order and in ``orders`` random ones (call under :func:`fixed_kernels`).
    """
    smallest = PASS_ROWS[-1]
    gen = torch.Generator().manual_seed(seed)
    shuffles = [torch.randperm(probes.shape[0], generator=gen) for _ in range(orders)]
    try:
        reference = in_passes(policy, probes, (smallest,))
        if not all(torch.equal(in_passes(policy, probes[o], (smallest,)), reference[o]) for o in shuffles):
            return ()
        return tuple(size for size in PASS_ROWS[:-1]
                     if torch.equal(in_passes(policy, probes, (size,)), reference)
                     and all(torch.equal(in_passes(policy, probes[o], (size,)), reference[o]) for o in shuffles)
                     ) + (smallest,)
    except Exception:  # noqa: BLE001 - a trace that takes its example's shape only
        return ()


class BatchPolicy:
    """The logits of a network for batches of preprocessed inputs, each row independent of the batch."""

    def __init__(self, net: PolicyValueNet) -> None:
        self.net = net
        self._policy: Policy | None = None
        self.pass_rows: tuple[int, ...] = PASS_ROWS
        """The pass sizes in use: those of ``PASS_ROWS`` that passed the check, or ``(1,)``."""

    @torch.inference_mode()
    def logits(self, x: torch.Tensor) -> np.ndarray:
        """Unmasked logits ``(B, 54)`` as float64 of preprocessed inputs ``x`` ``(B, input_size)``."""
        with fixed_kernels():
            if self._policy is None:
                self._first_batch(x)
            out = in_passes(self._policy, x, self.pass_rows)
        return out.double().cpu().numpy()

    def _first_batch(self, x: torch.Tensor) -> None:
        """Trace the network and choose the pass sizes, on seeded random rows shaped like ``x``'s
        (not on ``x`` itself: every process, whatever its first batch, makes the same choice)."""
        probes = torch.rand((PROBE_ROWS, x.shape[1]), generator=torch.Generator().manual_seed(0), dtype=x.dtype)
        smallest = PASS_ROWS[-1]
        self._policy = trace_policy(self.net, probes[:smallest])
        self.pass_rows = agreeing_sizes(self._policy, probes)
        if not self.pass_rows:
            self._policy, self.pass_rows = trace_policy(self.net, probes[:1]), (1,)
