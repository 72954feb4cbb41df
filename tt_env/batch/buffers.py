"""Output tensors on a CPU that are reused once nobody holds them.

A CPU step at 16,384 tables returns a new 19 MB observation. Freshly allocated, its pages are
often handed back to the kernel by the allocator and faulted in (and zeroed) again at the next
step: in such runs that doubled the time of the observation. :class:`ReusedArrays` hands out
tensors over numpy arrays it keeps, and hands an array out again only when no tensor, view or
array made from it is left (a tensor from ``torch.from_numpy`` keeps its array alive, and so does
every view of it): what a caller holds never changes under it.
"""

from __future__ import annotations

import sys

import numpy as np
import torch


class ReusedArrays:
    """Up to ``size`` arrays, handed out as CPU tensors and reused once nothing refers to them."""

    def __init__(self, size: int = 4) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"size={size!r} is not allowed: use an int >= 1")
        self.size = size
        self._arrays: list[np.ndarray] = []

    def _free(self, k: int) -> bool:
        """Whether nothing but the pool holds array ``k`` (its references: the pool's list and this
        call's argument)."""
        return sys.getrefcount(self._arrays[k]) == 2

    def empty(self, shape: tuple[int, ...], dtype: np.dtype | type) -> torch.Tensor:
        """An uninitialised CPU tensor of ``shape`` and numpy ``dtype``: a free pooled array's
        memory where one fits, else a new array (kept in the pool while it has room, or in place
        of a free one that does not fit)."""
        dtype, shape = np.dtype(dtype), tuple(shape)
        free = [k for k in range(len(self._arrays)) if self._free(k)]
        for k in free:
            if self._arrays[k].shape == shape and self._arrays[k].dtype == dtype:
                return torch.from_numpy(self._arrays[k])
        array = np.empty(shape, dtype)
        if len(self._arrays) < self.size:
            self._arrays.append(array)
        elif free:
            self._arrays[free[0]] = array
        return torch.from_numpy(array)
