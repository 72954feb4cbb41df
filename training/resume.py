"""Resuming training runs: the state saved with ``checkpoints/latest.pt``, and stopping on a signal.

``latest.pt`` is an ordinary checkpoint of the current network (``models.checkpoint``) with two
attachments, saved atomically together with it:

* ``latest.resume-tensors.pt``: tensors only (optimiser state, random-generator states, the
  opponent pool's weights, SB3's policy), written with ``torch.save`` and read back with
  ``torch.load(..., weights_only=True)``: reading it cannot run code;
* ``latest.resume.json``: everything else as JSON (counters, numpy generator states, the games
  in progress, the evaluation history, the config the run trained with).

A run started again with ``--resume`` checks that the keys in :data:`FROZEN` (those that would
change what was learned so far) are unchanged, then continues from that state; ``--resume
--set total_steps=N`` trains a finished run longer. SIGINT and SIGTERM (:class:`StopSignals`)
make a run save ``latest.pt`` at the next safe point and exit, printing the command that
resumes it; a second signal stops at once. SIGKILL cannot be caught: a run saves
``latest.pt`` every ``save_every`` steps, so it loses at most that much.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Sequence

from models.checkpoint import CheckpointError, deserialize_state, read_attachment, save_checkpoint, serialize_state
from tt_env import jsonio
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION

from .config import ConfigError
from .run_utils import RunDir

TENSORS = "resume-tensors.pt"
STATE = "resume.json"
STATE_FORMAT = "three-thirteen-resume/1"
FROZEN = ("network", "network_kwargs", "hidden_sizes", "num_players", "rules", "reward_mode", "seed",
          "eval_opponents", "eval_deals")
"""Config keys a resumed run may not change: the network, the game it learned, the seed and the
evaluation that the history is comparable over."""


def save_latest(run: RunDir, net: Any, cfg: Any, *, step: int, trainer: str, tensors: dict[str, Any],
                state: dict[str, Any], history: list[dict[str, Any]] | None = None) -> None:
    """Save ``latest.pt`` (the network ``net``) with the resume state (``tensors`` + JSON ``state``).

    ``history``: the evaluations up to ``step`` (default: all of ``run.history``).
    """
    history = run.history if history is None else history
    evaluation = None
    if history:
        last = history[-1]
        evaluation = {"step": last["step"], "deals": cfg.eval_deals, "full_game": True, "results": last["results"]}
    record = {"format": STATE_FORMAT, "trainer": trainer, "config": cfg.to_dict(), "step": int(step),
              "history": history, **state}
    save_checkpoint(run.latest, net, obs_version=OBS_VERSION, rules=cfg.train_rules().to_dict(), training_steps=step,
                    evaluation=evaluation, extra={"trainer": trainer, "config": cfg.to_dict()},
                    attachments={TENSORS: serialize_state(tensors), STATE: jsonio.dumps(record).encode()})


def load_latest(run: RunDir, trainer: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(tensors, JSON state) saved with the run's ``latest.pt``; :class:`CheckpointError` if unusable."""
    where = f"resume state of {str(run.latest)!r}"
    try:
        data = read_attachment(run.latest, STATE)
    except CheckpointError as exc:
        if "has no attachment" not in str(exc):
            raise
        raise CheckpointError(f"{str(run.latest)!r} holds no resume state (saved by an older version?): the run "
                              f"cannot be resumed; start it again with --overwrite") from None
    try:
        state = json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{where} is not valid JSON ({exc})") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise CheckpointError(f"{where} is not a {STATE_FORMAT} record")
    if state.get("trainer") != trainer:
        raise CheckpointError(f"{str(run.path)!r} is a run of {state.get('trainer')!r}: resume it with that "
                              f"script, not {trainer}")
    tensors = deserialize_state(read_attachment(run.latest, TENSORS), where)
    if not isinstance(tensors, dict):
        raise CheckpointError(f"{where} does not hold a mapping of tensors")
    return tensors, state


def _resolved(key: str, config: dict[str, Any]) -> Any:
    """A config value as it acts: rule options as the full resolved ``Rules``."""
    if key == "rules":
        options = dict(config.get("rules") or {})
        if isinstance(options.get("rounds"), list):
            options["rounds"] = tuple(options["rounds"])
        try:
            return Rules(num_players=config.get("num_players", 2), **options).to_dict()
        except (TypeError, ValueError):
            return config.get("rules")
    return config.get(key)


def check_resumable(saved: dict[str, Any], cfg: Any, frozen: Sequence[str] = FROZEN) -> None:
    """Raise :class:`ConfigError` naming the first key of ``frozen`` that differs from the saved run's."""
    now = cfg.to_dict()
    for key in frozen:
        if key not in now and key not in saved:
            continue
        old, new = _resolved(key, saved), _resolved(key, now)
        if old != new:
            raise ConfigError(f"--resume cannot change {key}: the run has {key}={old!r}, the command line gives "
                              f"{key}={new!r} (it would change what was learned so far); start a new run instead")


def rng_to_json(generator: Any) -> dict[str, Any]:
    """A numpy ``Generator``'s bit-generator state (a JSON-able dict)."""
    return generator.bit_generator.state


def rng_from_json(generator: Any, state: dict[str, Any]) -> None:
    generator.bit_generator.state = state


class StopRequested(Exception):
    """Raised at a safe point after SIGINT/SIGTERM: save ``latest.pt`` and stop."""


class StopSignals:
    """While active, SIGINT and SIGTERM ask the run to stop at its next safe point (a second one stops at once)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is not None:
            self.__exit__()
            raise KeyboardInterrupt
        self.signum = signum
        print(f"\n{signal.Signals(signum).name}: stopping at the end of this step of training, after saving "
              f"checkpoints/latest.pt (send it again to stop at once, without saving)", file=sys.stderr, flush=True)

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def check(self, *_: object) -> None:
        """Raise :class:`StopRequested` if a stop was asked for (usable as an ``on_deal`` callback)."""
        if self.signum is not None:
            raise StopRequested


def resume_command(prog: str, argv: Sequence[str] | None) -> str:
    """The command line that resumes a run started with ``prog argv``."""
    args = list(sys.argv[1:] if argv is None else argv)
    return " ".join([prog, shlex.join([a for a in args if a not in ("--resume", "--overwrite")] + ["--resume"])])


def default_resume_command(script: str, run: RunDir) -> str:
    return f"python {script} --config {shlex.quote(str(Path(run.path) / 'config.yaml'))} --resume"
