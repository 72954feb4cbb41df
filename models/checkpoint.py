"""Checkpoints: a ``state_dict`` saved with ``torch.save`` plus a JSON sidecar that rebuilds it.

``NAME.pt`` holds the weights only (loaded with ``torch.load(..., weights_only=True)``, so a
checkpoint cannot run code); ``NAME.json`` beside it says how to rebuild the network and what
it was trained for::

    {"format": "three-thirteen-checkpoint", "format_version": 1,
     "network": {"class": "CardNet", "kwargs": {"num_players": 2, ...}},
     "obs_version": 1, "obs_size": 294, "num_actions": 54, "num_players": 2,
     "rules": {...Rules.to_dict() of the training games...},
     "training_steps": 1234567, "evaluation": {...or null...},
     "weights_sha256": "...", "created": "...", "torch_version": "...", "extra": {...},
     "attachments": {"NAME": {"file": "...", "sha256": "...", "bytes": 123}}}

``attachments`` (optional) names further files saved with the checkpoint (the training
scripts keep their resume state there); older sidecars without it load unchanged.

Exporters (SB3, RLlib) write the same two files with :func:`save_checkpoint`; the network
classes and their keyword arguments are those of :mod:`models.networks` (an SB3 or RLlib
MLP is an :class:`~models.networks.MLPPolicy`). :func:`load_checkpoint` checks the player
count, observation layout and scoring rules the caller expects, the sizes the sidecar claims
(before building anything), the weights' hash and that every weight is finite, and raises
:class:`CheckpointError` (a ``ValueError``) saying what is wrong.

Saving is atomic as a whole. New files are first written beside their targets as
``FILE.pending``; replacing the sidecar is the commit; then each pending file is renamed into
place. The sidecar records the sha256 of every file, so a reader that meets a save cut short
between the commit and the renames takes the pending file whose hash the sidecar names. A
crash before the commit leaves the previous checkpoint as it was; a crash after it leaves the
new one; the next save first completes (or discards) what an interrupted one left.
"""

from __future__ import annotations

import glob
import hashlib
import io
import os
import re
import time
from pathlib import Path
from typing import Any

import torch

from tt_env import jsonio
from tt_env.agents.registry import RULE_MISMATCH_HINT

from .networks import NETWORKS, PolicyValueNet, build_network

FORMAT = "three-thirteen-checkpoint"
FORMAT_VERSION = 1
MAX_SIDECAR_BYTES = 1 << 20
"""A sidecar larger than this is refused before it is read (ours are a few KB)."""
MAX_FILE_BYTES = 1 << 30
"""Weights or attachment files larger than this are refused before they are read."""
MAX_LAYER_SIZE = 4096
"""Largest integer a sidecar may give a network size option (channels, hidden, hidden_sizes...)."""
MAX_LIST_LENGTH = 64
MAX_PARAMETERS = 50_000_000
"""Most parameters a network described by a sidecar may have (measured without allocating)."""
SCORING_RULES = {"aces": "low", "meld_needs_natural": False}
"""Rule options that change scoring, with their defaults: a checkpoint refuses a game that differs."""
PENDING = ".pending"
_ATTACHMENT_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


class CheckpointError(ValueError):
    """A checkpoint is missing, corrupt, or does not fit the environment it is loaded into."""


def sidecar_path(path: str | os.PathLike) -> Path:
    """The JSON sidecar of checkpoint ``path``: same name, ``.json``."""
    return Path(path).with_suffix(".json")


def attachment_path(path: str | os.PathLike, name: str) -> Path:
    """The file of attachment ``name`` of checkpoint ``path``: ``STEM.name`` beside it."""
    path = Path(path)
    return path.with_name(f"{path.stem}.{name}")


def _pending(path: Path) -> Path:
    return path.with_name(path.name + PENDING)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` and make it durable before anything refers to it."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def check_finite(state: dict[str, torch.Tensor], where: str) -> None:
    """Raise :class:`CheckpointError` naming the first tensor of ``state`` with a NaN or infinity."""
    for key, tensor in state.items():
        if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"{where}: tensor {key!r} has non-finite values (NaN or infinity)")


def check_state_dict(state: Any, where: str) -> dict[str, torch.Tensor]:
    """``state`` if it maps parameter names (strings) to tensors, else :class:`CheckpointError` naming the first
    entry that does not: ``load_state_dict`` would fail on it with torch's own ``AttributeError``."""
    what = f"{where} does not hold a state_dict of tensors"
    if not isinstance(state, dict):
        raise CheckpointError(f"{what} but something of type {type(state).__name__}")
    for key, value in state.items():
        if not isinstance(key, str):
            raise CheckpointError(f"{what}: its key {key!r} (of type {type(key).__name__}) is not a parameter "
                                  f"name (a string)")
        if not isinstance(value, torch.Tensor):
            raise CheckpointError(f"{what}: its {key!r} is of type {type(value).__name__}, not a tensor")
    return state


def serialize_state(state: Any) -> bytes:
    """``torch.save`` of tensors / state dicts / plain containers, as bytes."""
    buf = io.BytesIO()
    torch.save(state, buf)
    return buf.getvalue()


def deserialize_state(data: bytes, where: str) -> Any:
    """The inverse of :func:`serialize_state`, with ``weights_only=True`` (no code can run)."""
    try:
        return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for a damaged or hostile file
        raise CheckpointError(f"{where} is corrupt or truncated, or not plain tensor data "
                              f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None


def save_checkpoint(path: str | os.PathLike, net: PolicyValueNet, *, obs_version: int, rules: dict[str, Any],
                    training_steps: int, evaluation: dict[str, Any] | None = None,
                    extra: dict[str, Any] | None = None, attachments: dict[str, bytes] | None = None) -> Path:
    """Write ``path`` (weights), its sidecar and its ``attachments``, atomically as a whole; returns ``path``.

    ``rules`` is the ``Rules.to_dict()`` of the training games; its ``num_players`` must be
    the network's. ``evaluation`` is the result at save time (any JSON data). ``attachments``
    maps names (lower-case letters, digits, ``._-``) to file contents saved as ``STEM.NAME``
    (:func:`read_attachment` reads them back, checked against their sha256).
    """
    path = Path(path)
    if path.suffix != ".pt":
        raise CheckpointError(f"checkpoint path {str(path)!r} must end in .pt")
    if int(rules.get("num_players", -1)) != net.num_players:
        raise CheckpointError(f"rules are for num_players={rules.get('num_players')!r} but the network "
                              f"takes {net.num_players}-player observations")
    state = {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
    check_finite(state, f"refusing to save checkpoint {str(path)!r}")
    weights = serialize_state(state)
    files = {path: weights}
    listed = {}
    for name, data in (attachments or {}).items():
        if not _ATTACHMENT_NAME.match(name) or name in ("json", "pt"):
            raise CheckpointError(f"attachment name {name!r} is not allowed: use lower-case letters, digits, "
                                  f"'.', '_' and '-' (not 'json' or 'pt')")
        target = attachment_path(path, name)
        files[target] = bytes(data)
        listed[name] = {"file": target.name, "sha256": _sha256(files[target]), "bytes": len(files[target])}
    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "network": {"class": type(net).__name__, "kwargs": net.config()},
        "obs_version": int(obs_version), "obs_size": net.obs_size, "num_actions": net.num_actions,
        "num_players": net.num_players, "rules": rules, "training_steps": int(training_steps),
        "evaluation": evaluation, "weights_sha256": _sha256(weights),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "torch_version": torch.__version__,
        "extra": extra or {},
    }
    if listed:
        meta["attachments"] = listed
    sidecar = (jsonio.dumps(meta, indent=2) + "\n").encode()
    if len(sidecar) > MAX_SIDECAR_BYTES:
        raise CheckpointError(f"the sidecar of {str(path)!r} would be {len(sidecar)} bytes, over the "
                              f"{MAX_SIDECAR_BYTES} a sidecar may have: keep 'evaluation' and 'extra' small")
    path.parent.mkdir(parents=True, exist_ok=True)
    finish_interrupted_save(path)
    for target, data in files.items():
        _write(_pending(target), data)
    side = sidecar_path(path)
    tmp = side.with_name(side.name + ".tmp")
    _write(tmp, sidecar)
    os.replace(tmp, side)  # the commit: from here on the sidecar names the new files
    for target in files:
        os.replace(_pending(target), target)
    _fsync_dir(path.parent)
    return path


def _named_files(path: Path, meta: dict[str, Any]) -> list[tuple[Path, str]]:
    """(file, sha256) of every file a sidecar names: the weights, then the attachments."""
    out = []
    if isinstance(meta.get("weights_sha256"), str):
        out.append((path, meta["weights_sha256"]))
    attachments = meta.get("attachments")
    for name, entry in (attachments if isinstance(attachments, dict) else {}).items():
        if isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and _ATTACHMENT_NAME.match(str(name)):
            out.append((attachment_path(path, name), entry["sha256"]))
    return out


def finish_interrupted_save(path: str | os.PathLike) -> None:
    """Complete a save of ``path`` cut short after its commit, and drop pending files of one cut short before."""
    path = Path(path)
    try:
        meta = _read_sidecar(path)
    except CheckpointError:
        meta = {}
    named = dict(_named_files(path, meta))
    for pending in path.parent.glob(f"{glob.escape(path.stem)}.*{PENDING}"):
        target = pending.with_name(pending.name[: -len(PENDING)])
        sha = named.get(target)
        if sha is not None and _file_sha(pending) == sha and (not target.exists() or _file_sha(target) != sha):
            os.replace(pending, target)
        else:
            pending.unlink()


def _file_sha(path: Path) -> str | None:
    try:
        return _sha256(path.read_bytes())
    except OSError:
        return None


def _read_bounded(path: Path, limit: int, what: str) -> bytes:
    if not path.is_file():  # a folder, or a FIFO that would block the read forever
        raise CheckpointError(f"{what} {str(path)!r} is not a regular file")
    size = path.stat().st_size
    if size > limit:
        raise CheckpointError(f"{what} {str(path)!r} is {size} bytes, over the {limit} bytes allowed: "
                              f"not a checkpoint this code wrote")
    return path.read_bytes()


def _read_sidecar(path: Path) -> dict[str, Any]:
    side = sidecar_path(path)
    if not side.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} has no JSON sidecar {str(side)!r}")
    data = _read_bounded(side, MAX_SIDECAR_BYTES, "sidecar")
    try:
        meta = jsonio.loads(data, f"sidecar {str(side)!r}")
    except ValueError as exc:  # not JSON, not UTF-8, nested too deeply (RecursionError), huge integers
        raise CheckpointError(f"{exc}: the sidecar is corrupt or truncated") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"sidecar {str(side)!r} is not a {FORMAT} file")
    return meta


def has_checkpoint_sidecar(path: str | os.PathLike) -> bool:
    """Whether checkpoint ``path``'s ``.json`` is a readable sidecar of this format: a writer that
    replaces it loses nothing but an older checkpoint (any other ``.json`` is someone else's file)."""
    try:
        _read_sidecar(Path(path))
    except (CheckpointError, OSError):
        return False
    return True


def read_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """The sidecar of checkpoint ``path``, checked for format, required keys and bounded sizes."""
    path = Path(path)
    if path.suffix == ".json":  # its own sidecar: the weights' check would call it corrupt
        raise CheckpointError(f"checkpoint {str(path)!r} is a sidecar (the JSON beside the weights): give the "
                              f"weights file, {str(path.with_suffix('.pt'))!r}")
    if not path.exists() and not (_pending(path).exists() and sidecar_path(path).exists()):
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    meta = _read_sidecar(path)
    side = sidecar_path(path)
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {str(path)!r} has format_version {meta.get('format_version')!r}; "
                              f"this code reads version {FORMAT_VERSION}")
    required = ("network", "obs_version", "obs_size", "num_players", "rules", "training_steps")
    missing = [k for k in required if k not in meta]
    if missing:
        raise CheckpointError(f"sidecar {str(side)!r} lacks the key(s) {missing}")
    for key, low, high in (("obs_version", 0, None), ("obs_size", 1, None), ("num_players", 2, 8),
                           ("training_steps", 0, None)):
        value = meta[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
            allowed = f"an integer from {low} to {high}" if high is not None else f"an integer >= {low}"
            raise CheckpointError(f"sidecar {str(side)!r}: {key}={value!r} is not allowed: it must be {allowed}")
    for key in ("rules", "extra", "attachments"):
        if meta.get(key) is not None and not isinstance(meta[key], dict):
            raise CheckpointError(f"sidecar {str(side)!r}: {key} must be a mapping, not {type(meta[key]).__name__}")
    cls = meta["network"].get("class") if isinstance(meta["network"], dict) else None
    if cls not in {c.__name__ for c in NETWORKS.values()}:
        raise CheckpointError(f"checkpoint {str(path)!r} names network class {cls!r}: known are "
                              f"{sorted(c.__name__ for c in NETWORKS.values())}")
    if not isinstance(meta["network"].get("kwargs", {}), dict):
        raise CheckpointError(f"sidecar {str(side)!r}: network kwargs must be a mapping")
    check_sizes(meta["network"].get("kwargs", {}), where=f"checkpoint {str(path)!r}")
    return meta


def check_sizes(kwargs: dict[str, Any], where: str) -> None:
    """Refuse network options a sidecar could use to make us allocate without bound."""
    for key, value in kwargs.items():
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and len(value) > MAX_LIST_LENGTH:
            raise CheckpointError(f"{where}: network option {key} has {len(value)} entries, over the "
                                  f"{MAX_LIST_LENGTH} allowed")
        for v in values:
            if isinstance(v, bool) or v is None or isinstance(v, str) and len(v) <= 100:
                continue
            if not isinstance(v, int):
                raise CheckpointError(f"{where}: network option {key}={value!r} is not allowed: use ints, "
                                      f"lists of ints, bools or short strings")
            if not 0 <= v <= MAX_LAYER_SIZE:
                raise CheckpointError(f"{where}: network option {key}={value!r} is out of bounds: sizes "
                                      f"must be ints from 0 to {MAX_LAYER_SIZE}")


def check_compatible(meta: dict[str, Any], *, num_players: int | None = None, obs_version: int | None = None,
                     obs_size: int | None = None, rules: Any = None, allow_rule_mismatch: bool = False,
                     where: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` naming the mismatch between ``meta`` and the environment.

    ``rules`` (a ``Rules`` or its ``to_dict()``) is the game's: a checkpoint trained with
    other scoring (``aces``, ``meld_needs_natural``) is refused unless ``allow_rule_mismatch``.
    Round subsets, turn limits and decks may differ freely.
    """
    if num_players is not None and meta["num_players"] != num_players:
        raise CheckpointError(f"{where} was trained for {meta['num_players']} players, but the environment has "
                              f"{num_players} players (player count mismatch)")
    if obs_version is not None and meta["obs_version"] != obs_version:
        raise CheckpointError(f"{where} was trained on observation layout version {meta['obs_version']}, but "
                              f"the environment uses version {obs_version} (observation layout mismatch)")
    if obs_size is not None and meta["obs_size"] != obs_size:
        raise CheckpointError(f"{where} takes observations of length {meta['obs_size']}, but the environment "
                              f"gives length {obs_size} (observation layout mismatch)")
    if rules is not None and not allow_rule_mismatch:
        game = rules.to_dict() if hasattr(rules, "to_dict") else dict(rules)
        trained = meta["rules"] if isinstance(meta["rules"], dict) else {}
        for key, default in SCORING_RULES.items():
            was, now = trained.get(key, default), game.get(key, default)
            if was != now:
                raise CheckpointError(f"{where} was trained with {key}={was!r}, but the game has {key}={now!r} "
                                      f"(rule mismatch: the network learned other scoring){RULE_MISMATCH_HINT}")


def _resolve(path: Path, sha: str | None, what: str) -> bytes:
    """The bytes of ``path`` (or of its pending file, mid-save) whose sha256 is ``sha``."""
    candidates = [p for p in (path, _pending(path)) if p.exists()]
    if not candidates:
        raise CheckpointError(f"{what} {str(path)!r} does not exist")
    for candidate in candidates:
        data = _read_bounded(candidate, MAX_FILE_BYTES, what)
        if sha is None or _sha256(data) == sha:
            return data
    raise CheckpointError(f"{what} {str(path)!r} is corrupt or truncated: its contents do not match the sha256 "
                          f"recorded in its sidecar")


def read_attachment(path: str | os.PathLike, name: str) -> bytes:
    """The contents of attachment ``name`` of checkpoint ``path``, checked against its sha256."""
    path = Path(path)
    meta = read_metadata(path)
    entry = (meta.get("attachments") or {}).get(name)
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        raise CheckpointError(f"checkpoint {str(path)!r} has no attachment {name!r}")
    return _resolve(attachment_path(path, name), entry["sha256"], f"attachment {name!r} of checkpoint")


def load_checkpoint(path: str | os.PathLike, *, num_players: int | None = None, obs_version: int | None = None,
                    obs_size: int | None = None, rules: Any = None, allow_rule_mismatch: bool = False
                    ) -> tuple[PolicyValueNet, dict[str, Any]]:
    """The network of checkpoint ``path`` (eval mode, CPU) and its sidecar.

    Pass what the environment has (``num_players``, ``obs_version``, ``obs_size``, the game's
    ``rules``) to get a clear error on a mismatch instead of nonsense actions.
    """
    path = Path(path)
    where = f"checkpoint {str(path)!r}"
    meta = read_metadata(path)
    check_compatible(meta, num_players=num_players, obs_version=obs_version, obs_size=obs_size, rules=rules,
                     allow_rule_mismatch=allow_rule_mismatch, where=where)
    cls, kwargs = meta["network"]["class"], meta["network"].get("kwargs", {})
    try:
        with torch.device("meta"):  # count the parameters without allocating them
            size = sum(p.numel() for p in build_network(cls, **kwargs).parameters())
    except (ValueError, TypeError) as exc:
        raise CheckpointError(f"{where} does not fit its network description {meta['network']}: {exc}") from None
    if size > MAX_PARAMETERS:
        raise CheckpointError(f"{where}: its network description {meta['network']} has {size} parameters, over "
                              f"the {MAX_PARAMETERS} allowed")
    data = _resolve(path, meta.get("weights_sha256"), "checkpoint")
    state = check_state_dict(deserialize_state(data, where), where)
    check_finite(state, where)
    try:
        net = build_network(cls, **kwargs)
        net.load_state_dict(state)
    except (ValueError, TypeError, RuntimeError, KeyError) as exc:
        raise CheckpointError(f"{where} does not fit its network description {meta['network']}: {exc}") from None
    if net.obs_size != meta["obs_size"]:
        raise CheckpointError(f"{where}: sidecar says obs_size {meta['obs_size']} but the network takes "
                              f"{net.obs_size}")
    return net.eval(), meta
