"""The ``device`` of every trainer: one parser, one check, one resolution, the same messages everywhere.

A trainer's config key ``device`` (and its ``--device`` flag) is ``auto``, ``cpu``, ``cuda`` or
``cuda:K``. ``auto`` is ``cuda`` when ``torch.cuda.is_available()``, else ``cpu``. A value of
another form is refused when the config is read (:func:`check_device`); a CUDA device this
machine does not have is refused when the trainer starts, before anything is written
(:func:`resolve_device`). Both raise :class:`training.common.config.ConfigError`, which the command
lines turn into one line and exit code 2.

What the device changes, and what holds on CUDA, is in ``docs/devices.md``. The helpers below
also carry the resume state across devices: :func:`to_cpu` (saved tensors load on a machine
without a GPU), :func:`cuda_rng_state` / :func:`restore_cuda_rng` (the CUDA generators saved
with a run's resume state) and :func:`check_resume_device` (a run resumes on the device type it
trained on).
"""

from __future__ import annotations

import re
from typing import Any

from training.common.config import ConfigError

DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d{1,4})?)$")
ALLOWED = "auto, cpu, cuda or cuda:K (auto: cuda when torch.cuda.is_available(), else cpu)"
"""The allowed values, as every message names them."""
DEVICE_HELP = "auto | cpu | cuda | cuda:K (the config key device; overrides it; auto: cuda when available)"
"""The ``--device`` flag's help text, the same in every trainer."""


def check_device(value: Any, key: str = "device") -> None:
    """Raise :class:`ConfigError` unless ``value`` is ``auto``, ``cpu``, ``cuda`` or ``cuda:K`` (syntax only)."""
    if not (isinstance(value, str) and DEVICE_PATTERN.match(value)):
        raise ConfigError(f"{key}={value!r} is not allowed: use {ALLOWED}")


def resolve_device(value: Any, key: str = "device") -> Any:
    """The ``torch.device`` of a ``device`` value; :class:`ConfigError` for a bad value or a missing CUDA device."""
    import torch

    check_device(value, key)
    if value == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    from tt_env.batch.devices import missing_cuda

    device = torch.device(value)
    missing = missing_cuda(device)
    if missing is not None:
        raise ConfigError(f"{key}={value!r} is not allowed: it is not available here, {missing}: use {ALLOWED}"
                          + ("; here that means auto or cpu" if not torch.cuda.is_available() else ""))
    return device


def add_device_arg(parser: Any, *, config_key: bool = True) -> None:
    """Add ``--device`` to a trainer's command line (``config_key``: it overrides the config key ``device``)."""
    parser.add_argument("--device", default=None if config_key else "auto", metavar="DEVICE",
                        help=DEVICE_HELP if config_key else
                        "auto | cpu | cuda | cuda:K (default auto: cuda when torch.cuda.is_available(), else cpu)")


def parsed_device(parser: Any, args: Any) -> Any:
    """The ``torch.device`` of a tool's ``--device`` (:func:`add_device_arg` with ``config_key=False``).

    For the tools without a config (``training.imitate``, ``training.train_belief``): a bad or
    missing device is refused through ``parser.error``, one line and exit code 2, like their
    other arguments."""
    try:
        return resolve_device(args.device)
    except ConfigError as exc:
        parser.error(str(exc))


def device_override(args: Any) -> None:
    """Turn ``args.device`` (``--device``) into the override ``device=...`` of ``args.overrides``."""
    if getattr(args, "device", None) is not None:
        args.overrides = [*args.overrides, f"device={args.device}"]


def to_cpu(obj: Any) -> Any:
    """``obj`` with every tensor in it (nested dicts, lists, tuples) on the CPU: what a saved file holds.

    A tensor already on the CPU is returned as it is (no copy), so saving on a CPU is unchanged.
    """
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.cpu()
    if isinstance(obj, dict):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_cpu(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(to_cpu(v) for v in obj)
    return obj


def cuda_rng_state(device: Any) -> dict[str, Any]:
    """``{"cuda_rng": [one state per CUDA device]}`` when training on CUDA, else ``{}`` (for the resume tensors)."""
    import torch

    if getattr(device, "type", None) == "cuda":
        return {"cuda_rng": torch.cuda.get_rng_state_all()}
    return {}


def restore_cuda_rng(tensors: dict[str, Any], device: Any) -> None:
    """Restore what :func:`cuda_rng_state` saved (on CUDA; the devices this machine has, in order)."""
    import torch

    states = tensors.get("cuda_rng")
    if getattr(device, "type", None) != "cuda" or not states:
        return
    for index, state in enumerate(list(states)[:torch.cuda.device_count()]):
        torch.cuda.set_rng_state(state, index)


def check_resume_device(saved_type: Any, device: Any, value: str) -> None:
    """Raise :class:`ConfigError` if a run that trained on ``saved_type`` would resume on another device type.

    ``saved_type`` is the ``device_type`` of the resume state (``None``: saved before devices, on the CPU).
    """
    saved_type = saved_type or "cpu"
    if saved_type != device.type:
        raise ConfigError(f"--resume cannot change the device type: the run trained on {saved_type!r}, "
                          f"device={value!r} gives {device.type!r}; resume with --set device={saved_type} "
                          f"(or --device {saved_type})")
