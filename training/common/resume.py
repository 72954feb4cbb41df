"""Resuming training runs: the state saved with ``checkpoints/latest.pt``, and stopping on a signal.

``latest.pt`` is an ordinary checkpoint of the current network (``models.checkpoint``) with two
attachments, saved atomically together with it:

* ``latest.resume-tensors.pt``: tensors only (optimiser state, random-generator states, the
  opponent pool's weights, SB3's policy), moved to the CPU and written with ``torch.save``, read
  back with ``torch.load(..., weights_only=True, map_location="cpu")``: reading it cannot run
  code, and a run trained on a GPU loads on a machine without one;
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

import shlex
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from models.checkpoint import CheckpointError, deserialize_state, read_attachment, save_checkpoint, serialize_state
from tt_env import jsonio
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION

from .config import ConfigError
from .device import to_cpu
from .run_utils import RunDir
from .signals import CaughtSignals
from .value_checks import short as _short

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
                    attachments={TENSORS: serialize_state(to_cpu(tensors)), STATE: jsonio.dumps(record).encode()})


Check = Callable[[Any], bool]


def is_count(value: Any) -> bool:
    """An int >= 0 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_number(value: Any) -> bool:
    """An int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_count_or_none(value: Any) -> bool:
    return value is None or is_count(value)


def is_number_or_none(value: Any) -> bool:
    """A number, or ``None`` (what a non-finite number is saved as)."""
    return value is None or is_number(value)


def is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def is_list(value: Any) -> bool:
    return isinstance(value, list)


def is_str(value: Any) -> bool:
    return isinstance(value, str)


COMMON_KEYS: dict[str, Check] = {"step": is_count, "config": is_dict, "history": is_list,
                                 "last_eval": is_count_or_none, "next_eval": is_number_or_none}
"""Keys every resume state has, with the check of their values (trainers add their own)."""
RESULT_KEYS: dict[str, Check] = {"opponent": is_str, "deals": is_count, "games": is_count,
                                 "score_diff": is_number_or_none, "ci95": is_number_or_none,
                                 "win_rate": is_number_or_none}
"""The keys of one evaluation result in the history (``EvalResult.to_dict``; non-finite numbers are saved as null)."""


def history_problem(history: list[Any], step: int) -> str | None:
    """What is wrong with a saved evaluation history (``None`` if nothing): the steps must increase up to ``step``."""
    previous = -1
    for i, entry in enumerate(history):
        if not isinstance(entry, dict) or not is_count(entry.get("step")) or not isinstance(entry.get("results"), list):
            return f"history[{i}] is not an evaluation ({{'step': int >= 0, 'results': [...]}})"
        if not previous < entry["step"] <= step:
            return (f"history[{i}] is at step {entry['step']}, which is not after the evaluation before it "
                    f"({previous}) and at most the saved step ({step})")
        previous = entry["step"]
        for j, result in enumerate(entry["results"]):
            if not isinstance(result, dict):
                return f"history[{i}].results[{j}] is not a mapping"
            bad = [k for k, check in RESULT_KEYS.items() if not check(result.get(k))]
            if bad:
                return f"history[{i}].results[{j}] has a missing or wrong {', '.join(bad)}"
    return None


def check_state(state: dict[str, Any], tensors: dict[str, Any], where: str, keys: Mapping[str, Check],
                tensor_keys: Sequence[str]) -> None:
    """Raise :class:`CheckpointError` naming the first key of a resume state that is missing or malformed.

    ``keys``: the JSON keys the trainer reads (besides :data:`COMMON_KEYS`) and their checks;
    ``tensor_keys``: the entries its tensors must have.
    """
    for key, check in {**COMMON_KEYS, **keys}.items():
        if key not in state:
            raise CheckpointError(f"{where} is damaged: it has no {key!r}")
        if not check(state[key]):
            raise CheckpointError(f"{where} is damaged: {key}={_short(state[key])} is not allowed")
    if state["last_eval"] is not None and state["last_eval"] > state["step"]:
        raise CheckpointError(f"{where} is damaged: last_eval={state['last_eval']} is after step={state['step']}")
    problem = history_problem(state["history"], state["step"])
    if problem:
        raise CheckpointError(f"{where} is damaged: {problem}")
    missing = [k for k in tensor_keys if k not in tensors]
    if missing:
        raise CheckpointError(f"{where} is damaged: its tensors lack {missing}")


def load_latest(run: RunDir, trainer: str, keys: Mapping[str, Check] | None = None,
                tensor_keys: Sequence[str] = ()) -> tuple[dict[str, Any], dict[str, Any]]:
    """(tensors, JSON state) saved with the run's ``latest.pt``; :class:`CheckpointError` if unusable.

    The state is checked (:func:`check_state`) with the trainer's ``keys`` and ``tensor_keys``, so a
    damaged or edited file is refused here, in one line, before anything is built from it.
    """
    where = f"resume state of {str(run.latest)!r}"
    try:
        data = read_attachment(run.latest, STATE)
    except CheckpointError as exc:
        if "has no attachment" not in str(exc):
            raise
        raise CheckpointError(f"{str(run.latest)!r} holds no resume state (saved by an older version?): the run "
                              f"cannot be resumed; start it again with --overwrite") from None
    try:
        state = jsonio.loads(data, where)
    except ValueError as exc:
        raise CheckpointError(str(exc)) from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise CheckpointError(f"{where} is not a {STATE_FORMAT} record")
    if state.get("trainer") != trainer:
        raise CheckpointError(f"{str(run.path)!r} is a run of {state.get('trainer')!r}: resume it with that "
                              f"script, not {trainer}")
    tensors = deserialize_state(read_attachment(run.latest, TENSORS), where)
    if not isinstance(tensors, dict):
        raise CheckpointError(f"{where} does not hold a mapping of tensors")
    check_state(state, tensors, where, keys or {}, tensor_keys)
    return tensors, state


RESTORE_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError, RuntimeError)
"""What restoring a damaged state into the trainer's objects raises (torch, numpy, the engine's replay)."""


def restore_failed(run: RunDir, exc: BaseException) -> CheckpointError:
    """The one-line error for a resume state that passed :func:`check_state` but does not fit the run."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return CheckpointError(f"resume state of {str(run.latest)!r} does not fit this run ({type(exc).__name__}: "
                           f"{text[:200]}): it is damaged or from another version; start again with --overwrite")


@contextmanager
def restoring(run: RunDir) -> Iterator[None]:
    """Load a resume state into the trainer's objects inside this block: what :data:`RESTORE_ERRORS`
    it raises becomes :func:`restore_failed`'s one-line ``CheckpointError`` (which passes as it is)."""
    try:
        yield
    except CheckpointError:
        raise
    except RESTORE_ERRORS as exc:  # passed check_state, but does not fit these objects
        raise restore_failed(run, exc) from None


def _resolved(key: str, config: dict[str, Any]) -> Any:
    """A config value as it acts: rule options as the full resolved ``Rules``."""
    if key == "rules":
        options = dict(config.get("rules") or {})
        try:
            return Rules(num_players=config.get("num_players", 2), **options).to_dict()
        except (TypeError, ValueError):
            return config.get("rules")
    return config.get(key)


def check_resumable(saved: dict[str, Any], cfg: Any, frozen: Sequence[str] = FROZEN) -> None:
    """Raise :class:`ConfigError` naming the first key of ``frozen`` that differs from the saved run's, or
    a ``pool_size`` below the saved run's."""
    now = cfg.to_dict()
    for key in frozen:
        if key not in now and key not in saved:
            continue
        old, new = _resolved(key, saved), _resolved(key, now)
        if old != new:
            raise ConfigError(f"--resume cannot change {key}: the run has {key}={old!r}, the command line gives "
                              f"{key}={new!r} (it would change what was learned so far); start a new run instead")
    # a lower pool_size was a no-op (a snapshot drops one network as it adds one): refused, not ignored
    old_pool, new_pool = saved.get("pool_size"), now.get("pool_size")
    if isinstance(old_pool, int) and isinstance(new_pool, int) and new_pool < old_pool:
        raise ConfigError(f"--resume cannot lower pool_size: the run has pool_size={old_pool}, the command line "
                          f"gives {new_pool} (the saved pool keeps its networks, and the tables their places in "
                          f"it); keep pool_size >= {old_pool}, or start a new run")


def rng_to_json(generator: Any) -> dict[str, Any]:
    """A numpy ``Generator``'s bit-generator state (a JSON-able dict)."""
    return generator.bit_generator.state


def rng_from_json(generator: Any, state: dict[str, Any]) -> None:
    generator.bit_generator.state = state


class StopRequested(Exception):
    """Raised at a safe point after SIGINT/SIGTERM: save ``latest.pt`` and stop."""


class StopSignals(CaughtSignals):
    """While active, SIGINT and SIGTERM ask the run to stop at its next safe point (a second one stops at once)."""

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
