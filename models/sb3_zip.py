"""Stable-Baselines3 ``.zip`` models as agents, without unpickling anything.

A model saved with ``MaskablePPO.save("model.zip")`` (sb3-contrib; plain SB3 ``PPO`` too) with
the default ``MlpPolicy`` on ``gymnasium.make("tt_env/ThreeThirteen-v0")`` plays anywhere a
checkpoint does::

    python -m training.evaluate model.zip greedy-v0 --games 200
    python -m models.sb3_zip model.zip runs/sb3/model.pt     # or export it to our checkpoint format

SB3's own ``load`` unpickles (``cloudpickle``) parts of the zip, which can run any code, so it
is never used. Of the zip only two members are read: ``policy.pth``, the policy's
``state_dict``, with ``torch.load(weights_only=True)``, and ``data``, JSON, of which only plain
text is looked at (the ``:serialized:`` pickles in it are not decoded). Every member is read
with a size limit. The network is rebuilt from the shapes of the weights as our
:class:`~models.networks.MLPPolicy` (the same ``Linear``/``Tanh`` actor and critic, the copy
that ``training/train_sb3.py`` makes during training): the hidden sizes from the weight
matrices, the player count from the observation length. Refused with
:class:`~models.checkpoint.CheckpointError`: another activation than ``Tanh``, actor and
critic of different sizes, a shared or learned feature extractor, anything but 54 actions.

The zip does not say which rules the model was trained on: it is taken to have learned the
default scoring (``aces="low"``, ``meld_needs_natural=False``) and the current observation
layout, and the exported sidecar says so (``extra.rules_assumed``).
"""

from __future__ import annotations

import argparse
import lzma
import os
import re
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from tt_env import jsonio
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION, observation_size

from .checkpoint import (MAX_FILE_BYTES, MAX_LAYER_SIZE, MAX_LIST_LENGTH, MAX_SIDECAR_BYTES, CheckpointError,
                         check_finite, check_state_dict, deserialize_state, has_checkpoint_sidecar,
                         save_checkpoint, sidecar_path)
from .networks import NUM_ACTIONS, MLPPolicy

POLICY = "policy.pth"
DATA = "data"
MAX_DATA_BYTES = 16 * MAX_SIDECAR_BYTES
"""Largest ``data`` member read (SB3 keeps the last observations there: tens of KB for us)."""
MAX_MEMBERS = 64
_LAYER = re.compile(r"^mlp_extractor\.(policy_net|value_net)\.(\d+)\.(weight|bias)$")
_HEADS = {"action_net.weight", "action_net.bias", "value_net.weight", "value_net.bias"}
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, zlib.error, lzma.LZMAError)
"""What reading a damaged zip raises: a broken directory, a corrupt deflate/LZMA/bzip2 stream
(``zlib.error``, ``LZMAError``, ``OSError``). An encrypted member and an unknown compression method
are refused before they are read (:func:`_member`)."""
_COMPRESSIONS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
                 zipfile.ZIP_LZMA: "LZMA"}
"""The compression methods zipfile reads (SB3 writes deflate)."""


def is_sb3_zip(path: str | Path) -> bool:
    """Whether ``path`` names an SB3 model file (by its ``.zip`` suffix)."""
    return str(path).lower().endswith(".zip")


def _member(archive: zipfile.ZipFile, name: str, limit: int, where: str) -> bytes:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise CheckpointError(f"{where} has no {name!r}: it is not a model saved by Stable-Baselines3") from None
    if info.file_size > limit:
        raise CheckpointError(f"{where}: its {name!r} is {info.file_size} bytes, over the {limit} allowed")
    if info.flag_bits & 0x1:
        raise CheckpointError(f"{where} is not a readable zip file ({name!r} is encrypted: SB3 writes none)")
    if info.compress_type not in _COMPRESSIONS:
        raise CheckpointError(f"{where} is not a readable zip file ({name!r} uses compression method "
                              f"{info.compress_type}: only {', '.join(_COMPRESSIONS.values())} are read)")
    with archive.open(info) as f:  # zipfile reads no more than the size checked above
        return f.read(limit)


def _text(value: Any) -> str:
    """The readable text SB3 stores beside (or instead of) a pickle, '' if there is none."""
    return value if isinstance(value, str) else ""


def _check_data(data: dict[str, Any], where: str) -> None:
    """Refuse what the JSON ``data`` says (in plain text) that :class:`MLPPolicy` cannot be."""
    kwargs = data.get("policy_kwargs")
    if isinstance(kwargs, dict):
        activation = _text(kwargs.get("activation_fn"))
        if activation and not activation.endswith(".Tanh'>"):
            raise CheckpointError(f"{where}: its policy uses activation {activation}; only Tanh (SB3's default "
                                  f"for MlpPolicy) can be loaded")
        shared = kwargs.get("share_features_extractor")
        if shared not in (None, True, "True"):
            raise CheckpointError(f"{where}: share_features_extractor={shared!r} is not supported")
    policy = data.get("policy_class")
    module = _text(policy.get("__module__")) if isinstance(policy, dict) else ""
    if module and module not in ("sb3_contrib.common.maskable.policies", "stable_baselines3.common.policies"):
        raise CheckpointError(f"{where}: its policy comes from {module!r}; an actor-critic MlpPolicy of "
                              f"MaskablePPO or PPO can be loaded")


def _hidden_sizes(state: dict[str, torch.Tensor], where: str) -> tuple[list[int], int]:
    """(hidden sizes, observation length) read from the weights' shapes; refuses any other layout."""
    layers: dict[str, dict[int, dict[str, torch.Tensor]]] = {"policy_net": {}, "value_net": {}}
    for key, tensor in state.items():
        match = _LAYER.match(key)
        if match:
            layers[match[1]].setdefault(int(match[2]), {})[match[3]] = tensor
        elif key not in _HEADS:
            raise CheckpointError(f"{where}: its policy has the weight {key!r}, which an MlpPolicy of separate "
                                  f"actor and critic MLPs does not (a feature extractor with weights, a shared "
                                  f"network?): it cannot be loaded")
    sizes = {}
    for net, found in layers.items():
        indices = sorted(found)
        if not indices or indices != list(range(0, 2 * len(indices), 2)) or len(indices) > MAX_LIST_LENGTH:
            raise CheckpointError(f"{where}: mlp_extractor.{net} is not a stack of Linear layers")
        shapes = []
        for i in indices:
            weight, bias = found[i].get("weight"), found[i].get("bias")
            if weight is None or bias is None or weight.dim() != 2 or bias.shape != weight.shape[:1]:
                raise CheckpointError(f"{where}: mlp_extractor.{net}.{i} is not a Linear layer")
            shapes.append(tuple(weight.shape))
        for (out_a, _), (_, in_b) in zip(shapes, shapes[1:], strict=False):
            if out_a != in_b:
                raise CheckpointError(f"{where}: the layers of mlp_extractor.{net} do not chain")
        sizes[net] = ([s[0] for s in shapes], shapes[0][1])
    if sizes["policy_net"] != sizes["value_net"]:
        raise CheckpointError(f"{where}: actor {sizes['policy_net'][0]} and critic {sizes['value_net'][0]} "
                              f"differ in size; only equal sizes (net_arch pi == vf) can be loaded")
    hidden, obs_size = sizes["policy_net"]
    if any(not 1 <= h <= MAX_LAYER_SIZE for h in hidden):
        raise CheckpointError(f"{where}: hidden sizes {hidden} are out of bounds (1 to {MAX_LAYER_SIZE})")
    for head, rows in (("action_net", NUM_ACTIONS), ("value_net", 1)):
        missing = [f"{head}.{p}" for p in ("weight", "bias") if f"{head}.{p}" not in state]
        if missing:
            raise CheckpointError(f"{where}: its policy has no {' or '.join(missing)}: not an actor-critic MlpPolicy")
        weight, bias = state[f"{head}.weight"], state[f"{head}.bias"]
        if tuple(weight.shape) != (rows, hidden[-1]) or bias.shape != (rows,):
            raise CheckpointError(f"{where}: {head} does not map {hidden[-1]} features to {rows} output(s) "
                                  f"({NUM_ACTIONS} actions: a model of this game's Gymnasium environment)")
    return hidden, obs_size


def mlp_state_from_sb3(sb3: dict[str, torch.Tensor], depth: int) -> dict[str, torch.Tensor]:
    """An SB3 ``MlpPolicy`` ``state_dict`` renamed to :class:`MLPPolicy`'s (``depth`` hidden layers)."""
    ours = {}
    for head, src, out in (("actor", "policy_net", "action_net"), ("critic", "value_net", "value_net")):
        for i in range(depth):
            for p in ("weight", "bias"):
                ours[f"{head}.{2 * i}.{p}"] = sb3[f"mlp_extractor.{src}.{2 * i}.{p}"]
        for p in ("weight", "bias"):
            ours[f"{head}.{2 * depth}.{p}"] = sb3[f"{out}.{p}"]
    return ours


def read_sb3_zip(path: str | Path) -> tuple[MLPPolicy, dict[str, Any]]:
    """The network of SB3 model ``path`` (eval mode) and a sidecar-like description of it."""
    path = Path(path)
    where = f"SB3 model {str(path)!r}"
    if not path.is_file():
        raise CheckpointError(f"{where} does not exist" if not path.exists() else f"{where} is not a file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise CheckpointError(f"{where} is over the {MAX_FILE_BYTES} bytes allowed")
    try:
        with zipfile.ZipFile(path) as archive:
            if len(archive.infolist()) > MAX_MEMBERS:
                raise CheckpointError(f"{where} has over {MAX_MEMBERS} files: not a model saved by Stable-Baselines3")
            raw_data = _member(archive, DATA, MAX_DATA_BYTES, where)
            weights = _member(archive, POLICY, MAX_FILE_BYTES, where)
            version = ""
            if "_stable_baselines3_version" in archive.namelist():
                version = _member(archive, "_stable_baselines3_version", 100, where).decode("utf-8", "replace").strip()
    except _ZIP_ERRORS as exc:
        raise CheckpointError(f"{where} is not a readable zip file ({exc})") from None
    try:
        data = jsonio.loads(raw_data, f"the 'data' of {where}")
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{where}: its 'data' is not a JSON object")
    _check_data(data, where)
    state = check_state_dict(deserialize_state(weights, f"the policy weights of {where}"), f"{where}: its {POLICY!r}")
    hidden, obs_size = _hidden_sizes(state, where)
    players = [n for n in range(2, 9) if observation_size(n) == obs_size]
    if not players:
        raise CheckpointError(f"{where} takes observations of length {obs_size}, which no player count of this "
                              f"environment gives (observation layout version {OBS_VERSION})")
    check_finite(state, where)
    net = MLPPolicy(players[0], hidden_sizes=hidden)
    net.load_state_dict(mlp_state_from_sb3(state, len(hidden)))
    steps = data.get("num_timesteps")
    meta = {"network": {"class": "MLPPolicy", "kwargs": net.config()}, "obs_version": OBS_VERSION,
            "obs_size": obs_size, "num_actions": NUM_ACTIONS, "num_players": players[0],
            "rules": Rules(num_players=players[0]).to_dict(),
            "training_steps": steps if isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0 else 0,
            "evaluation": None,
            "extra": {"source": str(path), "trainer": "stable-baselines3 zip", "sb3_version": version[:40],
                      "rules_assumed": "default scoring and the current observation layout (the zip does not say)"}}
    return net.eval(), meta


def load_sb3_agent(path: str | Path, rules: Rules | None = None, greedy: bool = True,
                   allow_rule_mismatch: bool = False) -> Any:
    """A :class:`models.checkpoint_agent.CheckpointAgent` playing SB3 model ``path``, checked against ``rules``."""
    from .checkpoint_agent import CheckpointAgent
    from .checkpoint import check_compatible

    rules = rules or Rules()
    net, meta = read_sb3_zip(path)
    check_compatible(meta, num_players=rules.num_players, obs_version=OBS_VERSION,
                     obs_size=observation_size(rules.num_players), rules=rules,
                     allow_rule_mismatch=allow_rule_mismatch, where=f"SB3 model {str(path)!r}")
    torch.set_num_threads(1)
    return CheckpointAgent(net, name=Path(path).stem, greedy=greedy, meta=meta, rules=rules)


def export(path: str | Path, out: str | Path, overwrite: bool = False) -> Path:
    """Write SB3 model ``path`` as our checkpoint ``out`` (``.pt`` + sidecar); returns ``out``.

    An existing ``out`` or sidecar is replaced only with ``overwrite``, and a ``.json`` that is not
    a checkpoint sidecar (a game record, a config...) never: nobody named it to be replaced.
    """
    out = Path(out)
    side = sidecar_path(out)
    if os.path.lexists(side) and not has_checkpoint_sidecar(out):
        raise CheckpointError(f"{str(side)!r}, the sidecar {out.name} would have, exists and is not a checkpoint "
                              f"sidecar: it is not replaced, even with --overwrite; move it or export to another name")
    existing = [str(p) for p in (out, side) if os.path.lexists(p)]
    if existing and not overwrite:
        raise CheckpointError(f"{' and '.join(map(repr, existing))} exist{'s' if len(existing) == 1 else ''}: "
                              f"give --overwrite to replace the checkpoint")
    net, meta = read_sb3_zip(path)
    return save_checkpoint(out, net, obs_version=meta["obs_version"], rules=meta["rules"],
                           training_steps=meta["training_steps"], extra=meta["extra"])


def main(argv: Sequence[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(prog="python -m models.sb3_zip",
                                     description="Export a Stable-Baselines3 MaskablePPO/PPO .zip (MlpPolicy) to "
                                                 "this project's checkpoint format, without unpickling it.")
    parser.add_argument("model", help="the .zip written by model.save()")
    parser.add_argument("out", help="the checkpoint to write (.pt; its .json sidecar goes beside it)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing checkpoint")
    args = parser.parse_args(argv)
    from tt_env.cli_checks import output_file_problem

    problem = output_file_problem(args.out, (".pt",), overwrite=True)  # export() refuses an existing pair
    if problem:
        parser.error(f"{args.out}: {problem}")
    try:
        path = export(args.model, args.out, overwrite=args.overwrite)
    except CheckpointError as exc:
        parser.error(str(exc))
    print(f"exported {path} (+ {path.with_suffix('.json').name})")
    return path


if __name__ == "__main__":
    main()
