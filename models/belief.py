"""A learned belief over the opponents' hidden cards: ``load_belief(spec).card_probs(observation)``.

The belief reads one seat's observation and gives, for each opponent in the observation's
order, the expected number of copies of each card type among that opponent's *unknown*
cards (its hand minus the cards it is known to hold because it took them from the discard
pile). Its hand model (:mod:`models.belief_math`) is Fisher's noncentral hypergeometric
distribution over the unseen copies with per-card weights from the network
(:mod:`models.belief_net`), so each row adds up to the opponent's unknown-card count, no
entry exceeds the copies still unseen, an entry is zero where none are, and exact samples of
whole hands come from the same model (:meth:`Belief.sample_unknown`, used by
``tt_env.search.sample_world(..., belief=model)``).

A belief checkpoint is ``NAME.pt``, a ``state_dict`` loaded with
``torch.load(..., weights_only=True)``, and ``NAME.json``::

    {"format": "three-thirteen-belief", "format_version": 1,
     "network": {"class": "BeliefNet", "kwargs": {"num_players": 2, "width": 48, "blocks": 3}},
     "obs_version": 1, "obs_size": 294, "num_players": 2, "rules": {...}, "history": true,
     "weights_sha256": "...", "created": "...", "torch_version": "...", "extra": {...}}

:func:`load_belief` checks the format, the sizes the sidecar claims (before building
anything), the weights' hash, that every weight is finite, and, when given, the player count,
observation layout and rules of the game (:class:`~models.checkpoint.CheckpointError` naming
the problem). Shipped beliefs (``belief-2p-v0``, ``belief-3p-v0``, ``belief-4p-v0``) load by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tt_env import jsonio
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION, get_layout

from .belief_math import expected_counts_np, sample_counts, suffix_table
from .belief_net import BeliefNet, belief_inputs, unseen_and_unknown
from .checkpoint import (MAX_FILE_BYTES, MAX_SIDECAR_BYTES, PENDING, CheckpointError, _fsync_dir, _write,
                         check_compatible, check_finite, check_sizes, check_state_dict, deserialize_state,
                         serialize_state)
from .shipped import CHECKPOINT_DIR

FORMAT = "three-thirteen-belief"
FORMAT_VERSION = 1
SHIPPED_DIR = CHECKPOINT_DIR
SHIPPED = {f"belief-{n}p-v0": SHIPPED_DIR / f"belief-{n}p-v0.pt" for n in (2, 3, 4)}
"""Shipped belief names and their files."""
LOGIT_BOUND = 12.0
"""Logits are clipped to +-this, so every weight is positive and finite: every hand the unseen
copies allow keeps a positive probability."""


class Belief:
    """A belief network with the rules it was trained for; reads only observations."""

    def __init__(self, net: BeliefNet, rules: Rules, *, history: bool = True, name: str = "belief") -> None:
        if net.num_players != rules.num_players:
            raise ValueError(f"the network is for {net.num_players} players, the rules for {rules.num_players}")
        self.net = net.eval()
        torch.set_num_threads(1)  # one small forward pass a call: more threads only contend
        self.rules = rules
        self.history = history
        self.name = name
        self.num_players = rules.num_players
        self.obs_size = get_layout(self.num_players).size
        self._last: tuple[bytes, tuple] | None = None
        """The last observation read and what was computed from it (search draws many worlds of one)."""

    def _check(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim != 1 or obs.shape[0] != self.obs_size:
            raise ValueError(f"{self.name} reads {self.num_players}-player observations of shape ({self.obs_size},), "
                             f"not {obs.shape}")
        return obs

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """``(opponents, 52)`` float64 per-card logits (clipped to +-``LOGIT_BOUND``) of one observation."""
        return self._prepared(observation)[0]

    def _logits(self, observation: np.ndarray) -> np.ndarray:
        obs = self._check(observation)[None]
        planes, scalars = belief_inputs(obs, self.num_players, self.rules.num_decks)
        if not self.history:
            planes[:, 6:8] = 0.0
            planes[:, 10] = 0.0
            scalars[:, 21] = 0.0
        with torch.inference_mode():
            out = self.net(torch.from_numpy(planes), torch.from_numpy(scalars))
        return np.clip(out.double().numpy(), -LOGIT_BOUND, LOGIT_BOUND)

    def unseen(self, observation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The unseen copies ``(52,)`` and each opponent's unknown-card count ``(opponents,)``."""
        unseen, unknown = unseen_and_unknown(self._check(observation)[None], self.num_players, self.rules.num_decks)
        return unseen[0], unknown[0]

    def _prepared(self, observation: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(logits, unseen, unknown, the first opponent's sampling table) of ``observation``, cached."""
        obs = self._check(observation)
        key = obs.tobytes()
        if self._last is None or self._last[0] != key:
            logits = self._logits(obs)
            unseen, unknown = self.unseen(obs)
            table = suffix_table(logits[0], unseen, int(unknown[0])) if int(unknown[0]) <= unseen.sum() else None
            self._last = (key, (logits, unseen, unknown, table))
        return self._last[1]

    def card_probs(self, observation: np.ndarray) -> np.ndarray:
        """``(num_players - 1, 52)``: per opponent (the observation's order), the expected copies of each
        card type among its unknown cards. Rows add up to the unknown counts; entries lie in
        ``[0, unseen copies]``."""
        logits, unseen, unknown, _ = self._prepared(observation)
        return np.stack([expected_counts_np(logits[k], unseen, int(unknown[k])) for k in range(len(unknown))])

    def sample_unknown(self, observation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``(opponents, 52)`` counts: one draw of every opponent's unknown cards, opponent by opponent in
        the observation's order, each from the unseen copies the earlier ones left."""
        logits, unseen, unknown, table = self._prepared(observation)
        pool = unseen.copy()
        out = np.zeros((len(unknown), 52), dtype=np.int64)
        for k in range(len(unknown)):
            if unknown[k] > pool.sum():
                raise ValueError(f"opponent {k} holds {unknown[k]} unknown cards, but only {pool.sum()} are unseen")
            out[k] = sample_counts(logits[k], pool, int(unknown[k]), rng, suffix=table if k == 0 else None)[0]
            pool -= out[k]
        return out


# ------------------------------------------------------------------ files

def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save_belief(path: str | os.PathLike, belief: Belief, *, extra: dict[str, Any] | None = None) -> Path:
    """Write ``path`` (weights) and its sidecar, atomically as a pair, by the policy checkpoints'
    protocol (:mod:`models.checkpoint`): the weights go to ``path.pending``, replacing the sidecar
    (which names the weights' hash) is the commit, then the pending file is renamed into place. A
    kill at any moment leaves the old pair or the new one loadable (:func:`load_belief` takes the
    pending weights whose hash the sidecar names), and the next save completes or drops what a cut
    one left."""
    path = Path(path)
    if path.suffix != ".pt":
        raise CheckpointError(f"belief path {str(path)!r} must end in .pt")
    state = {k: v.detach().cpu().clone() for k, v in belief.net.state_dict().items()}
    check_finite(state, f"refusing to save belief {str(path)!r}")
    weights = serialize_state(state)
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION,
            "network": {"class": "BeliefNet", "kwargs": belief.net.config()},
            "obs_version": OBS_VERSION, "obs_size": belief.obs_size, "num_players": belief.num_players,
            "rules": belief.rules.to_dict(), "history": belief.history, "weights_sha256": _sha256(weights),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "torch_version": torch.__version__,
            "extra": extra or {}}
    sidecar = (jsonio.dumps(meta, indent=2) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    _finish_interrupted_save(path)
    pending = _pending(path)
    _write(pending, weights)
    side = path.with_suffix(".json")
    tmp = side.with_name(side.name + ".tmp")
    _write(tmp, sidecar)
    os.replace(tmp, side)  # the commit: from here on the sidecar names the new weights
    os.replace(pending, path)
    _fsync_dir(path.parent)
    return path


def _finish_interrupted_save(path: Path) -> None:
    """Rename the pending weights of a save cut short after its commit into place; drop those of one
    cut short before it."""
    pending = _pending(path)
    if not pending.exists():
        return
    try:
        sha = json.loads(path.with_suffix(".json").read_text("utf-8")).get("weights_sha256")
    except (OSError, ValueError, AttributeError):
        sha = None
    if sha is not None and _sha256(pending.read_bytes()) == sha:
        os.replace(pending, path)
    else:
        pending.unlink()


def _pending(path: Path) -> Path:
    return path.with_name(path.name + PENDING)


def _read(path: Path, limit: int, what: str) -> bytes:
    if not path.is_file():
        raise CheckpointError(f"{what} {str(path)!r} does not exist")
    if path.stat().st_size > limit:
        raise CheckpointError(f"{what} {str(path)!r} is over the {limit} bytes allowed: not a file this code wrote")
    return path.read_bytes()


def _read_weights(path: Path, sha: str, where: str) -> bytes:
    """The weights whose sha256 the sidecar names: ``path``, or its pending file (a save cut short
    after its commit)."""
    pending = _pending(path)
    data = _read(path, MAX_FILE_BYTES, "belief weights") if path.exists() or not pending.is_file() else b""
    if _sha256(data) == sha:
        return data
    if pending.is_file() and pending.stat().st_size <= MAX_FILE_BYTES and _sha256(pending.read_bytes()) == sha:
        return pending.read_bytes()
    raise CheckpointError(f"{where} is corrupt or truncated: its contents do not match the sha256 in its sidecar")


SIDECAR_TYPES: dict[str, tuple[type, str]] = {
    "obs_version": (int, "an integer >= 0"), "obs_size": (int, "an integer >= 1"),
    "num_players": (int, "an integer from 2 to 8"), "weights_sha256": (str, "64 hex digits"),
    "history": (bool, "true or false"), "rules": (dict, "an object of rule options"),
    "extra": (dict, "an object"), "created": (str, "text"), "torch_version": (str, "text"),
}
"""The type of each sidecar field (``history``, ``extra``, ``created``, ``torch_version`` may be absent)."""


def _check_sidecar_types(meta: dict[str, Any], where: str) -> None:
    for key, (kind, allowed) in SIDECAR_TYPES.items():
        if key not in meta:
            continue
        value = meta[key]
        ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
        if ok and key == "weights_sha256":
            ok = len(value) == 64 and all(c in "0123456789abcdef" for c in value)
        elif ok and key in ("obs_version", "obs_size", "num_players"):
            ok = value >= {"obs_version": 0, "obs_size": 1, "num_players": 2}[key] and \
                (key != "num_players" or value <= 8)
        if not ok:
            raise CheckpointError(f"{where}: the sidecar's {key}={str(json.dumps(value))[:60]} is not allowed: it "
                                  f"must be {allowed}")


def load_belief(spec: str | os.PathLike, *, rules: Rules | None = None, allow_rule_mismatch: bool = False) -> Belief:
    """A shipped belief by name (``belief-2p-v0``, ...) or a belief checkpoint by path.

    With ``rules`` (the game's), a belief for another player count, deck count or scoring is
    refused with :class:`~models.checkpoint.CheckpointError`; other scoring is allowed with
    ``allow_rule_mismatch``.
    """
    if isinstance(spec, str) and spec in SHIPPED:
        path, name = SHIPPED[spec], spec
    elif isinstance(spec, str) and not spec.endswith(".pt") and "/" not in spec and os.sep not in spec \
            and not Path(spec).with_suffix(".json").exists():  # a name, not a path: of no shipped belief
        raise CheckpointError(f"unknown belief {spec!r}: shipped beliefs are {sorted(SHIPPED)}, or give a path")
    else:
        path, name = Path(spec), str(spec)
    where = f"belief {str(path)!r}"
    side = _read(path.with_suffix(".json"), MAX_SIDECAR_BYTES, "belief sidecar")
    try:
        meta = json.loads(side.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CheckpointError(f"{where}: the sidecar is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{where}: the sidecar is not a {FORMAT} file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{where} has format_version {meta.get('format_version')!r}; this code reads "
                              f"version {FORMAT_VERSION}")
    missing = [k for k in ("network", "obs_version", "obs_size", "num_players", "rules", "weights_sha256")
               if k not in meta]
    if missing:
        raise CheckpointError(f"{where}: the sidecar lacks the key(s) {missing}")
    _check_sidecar_types(meta, where)
    network = meta["network"]
    if not isinstance(network, dict) or network.get("class") != "BeliefNet" or \
            not isinstance(network.get("kwargs"), dict):
        raise CheckpointError(f"{where}: the sidecar's network must be {{'class': 'BeliefNet', 'kwargs': {{...}}}}")
    check_sizes(network["kwargs"], where=where)
    try:
        trained = Rules.from_dict(meta["rules"])
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise CheckpointError(f"{where}: the sidecar's rules are not valid ({exc})") from None
    if meta["obs_version"] != OBS_VERSION or meta["obs_size"] != get_layout(trained.num_players).size:
        raise CheckpointError(f"{where} reads observation layout version {meta['obs_version']} of size "
                              f"{meta['obs_size']}; this code writes version {OBS_VERSION} of size "
                              f"{get_layout(trained.num_players).size} (observation layout mismatch)")
    if rules is not None:
        check_compatible(meta, num_players=rules.num_players, rules=rules, where=where,
                         allow_rule_mismatch=allow_rule_mismatch)
        if rules.num_decks != trained.num_decks:
            raise CheckpointError(f"{where} was trained with {trained.num_decks} deck(s), but the game has "
                                  f"{rules.num_decks} (deck count mismatch)")
    weights = _read_weights(path, meta["weights_sha256"], where)
    state = check_state_dict(deserialize_state(weights, where), where)
    check_finite(state, where)
    try:
        net = BeliefNet(**network["kwargs"])
        net.load_state_dict(state)
    except (ValueError, TypeError, RuntimeError, KeyError) as exc:
        raise CheckpointError(f"{where} does not fit its network description {network}: {exc}") from None
    if net.num_players != trained.num_players:
        raise CheckpointError(f"{where}: the network is for {net.num_players} players, its rules for "
                              f"{trained.num_players}")
    return Belief(net, trained, history=meta.get("history", True), name=name)
