"""Checkpoints: a ``state_dict`` saved with ``torch.save`` plus a JSON sidecar that rebuilds it.

``NAME.pt`` holds the weights only (loaded with ``torch.load(..., weights_only=True)``, so a
checkpoint cannot run code); ``NAME.json`` beside it says how to rebuild the network and what
it was trained for::

    {"format": "three-thirteen-checkpoint", "format_version": 1,
     "network": {"class": "CardNet", "kwargs": {"num_players": 2, ...}},
     "obs_version": 1, "obs_size": 294, "num_actions": 54, "num_players": 2,
     "rules": {...Rules.to_dict() of the training games...},
     "training_steps": 1234567, "evaluation": {...or null...},
     "weights_sha256": "...", "created": "...", "torch_version": "...", "extra": {...}}

Exporters (SB3, RLlib) write the same two files with :func:`save_checkpoint`; the network
classes and their keyword arguments are those of :mod:`models.networks` (an SB3 or RLlib
MLP is an :class:`~models.networks.MLPPolicy`). :func:`load_checkpoint` checks the player
count and observation layout the caller expects and the weights' hash, and raises
:class:`CheckpointError` (a ``ValueError``) saying what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import torch

from tt_env import jsonio

from .networks import NETWORKS, PolicyValueNet, build_network

FORMAT = "three-thirteen-checkpoint"
FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint is missing, corrupt, or does not fit the environment it is loaded into."""


def sidecar_path(path: str | os.PathLike) -> Path:
    """The JSON sidecar of checkpoint ``path``: same name, ``.json``."""
    return Path(path).with_suffix(".json")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save_checkpoint(path: str | os.PathLike, net: PolicyValueNet, *, obs_version: int, rules: dict[str, Any],
                    training_steps: int, evaluation: dict[str, Any] | None = None,
                    extra: dict[str, Any] | None = None) -> Path:
    """Write ``path`` (weights) and its sidecar atomically; returns ``path``.

    ``rules`` is the ``Rules.to_dict()`` of the training games; its ``num_players`` must be
    the network's. ``evaluation`` is the result at save time (any JSON data).
    """
    path = Path(path)
    if path.suffix != ".pt":
        raise CheckpointError(f"checkpoint path {str(path)!r} must end in .pt")
    if int(rules.get("num_players", -1)) != net.num_players:
        raise CheckpointError(f"rules are for num_players={rules.get('num_players')!r} but the network "
                              f"takes {net.num_players}-player observations")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_pt, tmp_js = path.with_suffix(".pt.tmp"), path.with_suffix(".json.tmp")
    state = {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
    torch.save(state, tmp_pt)
    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "network": {"class": type(net).__name__, "kwargs": net.config()},
        "obs_version": int(obs_version), "obs_size": net.obs_size, "num_actions": net.num_actions,
        "num_players": net.num_players, "rules": rules, "training_steps": int(training_steps),
        "evaluation": evaluation, "weights_sha256": _sha256(tmp_pt),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "torch_version": torch.__version__,
        "extra": extra or {},
    }
    tmp_js.write_text(jsonio.dumps(meta, indent=2) + "\n")
    os.replace(tmp_pt, path)
    os.replace(tmp_js, sidecar_path(path))
    return path


def read_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """The sidecar of checkpoint ``path``, checked for format and required keys."""
    path = Path(path)
    side = sidecar_path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    if not side.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} has no JSON sidecar {str(side)!r}")
    try:
        meta = json.loads(side.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"sidecar {str(side)!r} is corrupt or truncated (not valid JSON: {exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"sidecar {str(side)!r} is not a {FORMAT} file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {str(path)!r} has format_version {meta.get('format_version')!r}; "
                              f"this code reads version {FORMAT_VERSION}")
    required = ("network", "obs_version", "obs_size", "num_players", "rules", "training_steps")
    missing = [k for k in required if k not in meta]
    if missing:
        raise CheckpointError(f"sidecar {str(side)!r} lacks the key(s) {missing}")
    cls = meta["network"].get("class") if isinstance(meta["network"], dict) else None
    if cls not in {c.__name__ for c in NETWORKS.values()}:
        raise CheckpointError(f"checkpoint {str(path)!r} names network class {cls!r}: known are "
                              f"{sorted(c.__name__ for c in NETWORKS.values())}")
    return meta


def check_compatible(meta: dict[str, Any], *, num_players: int | None = None, obs_version: int | None = None,
                     obs_size: int | None = None, where: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` naming the mismatch between ``meta`` and the environment."""
    if num_players is not None and meta["num_players"] != num_players:
        raise CheckpointError(f"{where} was trained for {meta['num_players']} players, but the environment has "
                              f"{num_players} players (player count mismatch)")
    if obs_version is not None and meta["obs_version"] != obs_version:
        raise CheckpointError(f"{where} was trained on observation layout version {meta['obs_version']}, but "
                              f"the environment uses version {obs_version} (observation layout mismatch)")
    if obs_size is not None and meta["obs_size"] != obs_size:
        raise CheckpointError(f"{where} takes observations of length {meta['obs_size']}, but the environment "
                              f"gives length {obs_size} (observation layout mismatch)")


def load_checkpoint(path: str | os.PathLike, *, num_players: int | None = None, obs_version: int | None = None,
                    obs_size: int | None = None) -> tuple[PolicyValueNet, dict[str, Any]]:
    """The network of checkpoint ``path`` (eval mode, CPU) and its sidecar.

    Pass what the environment has (``num_players``, ``obs_version``, ``obs_size``) to get a
    clear error on a mismatch instead of nonsense actions.
    """
    path = Path(path)
    meta = read_metadata(path)
    check_compatible(meta, num_players=num_players, obs_version=obs_version, obs_size=obs_size,
                     where=f"checkpoint {str(path)!r}")
    digest = meta.get("weights_sha256")
    if digest is not None and _sha256(path) != digest:
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or truncated: its weights do not match the "
                              f"sha256 recorded in its sidecar")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for a damaged zip
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or truncated ({type(exc).__name__}: "
                              f"{exc})") from None
    try:
        net = build_network(meta["network"]["class"], **meta["network"].get("kwargs", {}))
        net.load_state_dict(state)
    except (ValueError, TypeError, RuntimeError, KeyError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r} does not fit its network description "
                              f"{meta['network']}: {exc}") from None
    if net.obs_size != meta["obs_size"]:
        raise CheckpointError(f"checkpoint {str(path)!r}: sidecar says obs_size {meta['obs_size']} but the "
                              f"network takes {net.obs_size}")
    return net.eval(), meta
