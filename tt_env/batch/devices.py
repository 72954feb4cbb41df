"""The ``device`` argument of the batched engine, its agents and its wrappers: one check, one message.

torch's own errors for a bad device come from deep inside the first tensor made on it, and do not
say what would do ("Torch not compiled with CUDA enabled", or a list of every backend torch knows).
Here a device that cannot be used is refused up front, by name, with what this machine allows;
so is any device type but ``cpu`` and ``cuda`` (``mps``, ``xpu``, ``meta`` ...): the engine's
kernels and its reads of the host run on those two only.
"""

from __future__ import annotations

from typing import Any

import torch

ALLOWED = "'cpu', 'cuda' or 'cuda:K' (a str, a torch.device, or K for cuda:K)"
"""The values every message names."""


def checked_device(device: Any, key: str = "device") -> torch.device:
    """``device`` as a ``torch.device``; ``ValueError`` if it is malformed, not a CPU or CUDA device,
    or a CUDA device this machine lacks."""
    if isinstance(device, bool) or not isinstance(device, (str, torch.device, int)):
        raise ValueError(f"{key}={device!r} is not allowed: use {ALLOWED}")
    try:
        parsed = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    except (RuntimeError, ValueError):
        raise ValueError(f"{key}={device!r} is not allowed: use {ALLOWED}") from None
    if parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"{key}={device!r} is not allowed: the batched engine runs on CPUs and CUDA GPUs only; "
                         f"use {ALLOWED}")
    missing = missing_cuda(parsed)
    if missing is not None:
        raise ValueError(f"{key}={device!r} is not available here: {missing}"
                         + ("; use 'cpu'" if not torch.cuda.is_available() else ""))
    return parsed


def missing_cuda(device: torch.device) -> str | None:
    """Why this machine cannot use ``device``, a CUDA device it lacks ("this machine has no CUDA
    device ..."); None when it can, or when ``device`` is not CUDA. The one check of it for the
    engine and for the trainers' ``--device`` (``training.common.device``)."""
    if device.type != "cuda":
        return None
    if not torch.cuda.is_available():
        return "this machine has no CUDA device (torch.cuda.is_available() is False)"
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        return f"this machine has {count} CUDA device(s), cuda:0..cuda:{count - 1}"
    return None
