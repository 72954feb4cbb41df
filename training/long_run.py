"""A long training run in resumable chunks, carried from machine to machine in a store folder.

A run of tens of millions of steps outlives the session that starts it, and the next session may
get a fresh machine without the ``runs/`` folder. This command trains in chunks (one trainer
process each, ``--resume`` from the second on); after every chunk it copies the run's resume state
(``checkpoints/latest.*``), ``config.yaml``, ``eval.json`` and learning curve into
``<store>/<name>/`` and appends the chunk's wall time to ``<store>/<name>/chunks.jsonl``. On a
machine whose run folder is missing it first restores the run from the store, so the same command
goes on where the last machine stopped (bit-identical on a CPU: the trainers resume exactly).

    python -m training.long_run --config configs/batch_ppo_scratch_2p_v1.yaml --device cpu
    python -m training.long_run --config configs/batch_ppo_scratch_2p_v1.yaml --report

``--report`` trains nothing: it prints the run's evaluations against learner steps and against the
wall time of its chunks (a Markdown table) and draws both curves into ``<store>/<name>/curve.png``.

SIGINT or SIGTERM to this command while a chunk trains is passed on to the trainer (which runs in
its own session, so a terminal's Ctrl-C reaches it once, through here): the trainer saves and
exits, then the store is updated and the chunk recorded, and no further chunk starts.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.common.config import ConfigError, load_config
from training.common.device import add_device_arg
from training.common.run_lock import RunLock
from training.common.long_run_report import CHUNKS_FILE, CURVE_FILE, read_json, report
from training.common.run_utils import RunFolderError
from training.common.signals import CaughtSignals
from tt_env.cli_checks import CommandParser, output_dir_problem

TRAINERS = {"batch_ppo": "training.batch_ppo", "selfplay": "training.selfplay"}
"""Trainers with the shared command line (``training.common.trainer_cli``), by ``--trainer`` name."""
RUN_FILES = ("config.yaml", "eval.json", "learning_curve.png")
"""Files of the run folder the store keeps besides the resume state."""
REFUSED = 2
"""A trainer's exit code for a refused config, checkpoint or run folder (such as a run locked by
another process): it trained nothing of its own, so nothing is copied or recorded."""


def config_class(trainer: str) -> type:
    """The config dataclass of a trainer name of :data:`TRAINERS`."""
    if trainer == "batch_ppo":
        from training.ppo.batch_config import BatchPPOConfig
        return BatchPPOConfig
    from training.common.config import SelfPlayConfig
    return SelfPlayConfig


@dataclass(frozen=True)
class LongRun:
    """Where one long run lives: its run folder (trained in) and its store folder (carried)."""

    run: Path
    store: Path

    @property
    def latest(self) -> Path:
        return self.run / "checkpoints" / "latest.json"

    @property
    def stored_latest(self) -> Path:
        return self.store / "checkpoints" / "latest.json"


def saved_steps(sidecar: Path) -> int:
    """The learner steps of a ``latest.json`` sidecar (0 when there is none)."""
    if not sidecar.exists():
        return 0
    try:
        return int(json.loads(sidecar.read_text())["training_steps"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RunFolderError(f"{str(sidecar)!r} cannot be read as a checkpoint sidecar ({exc}): repair or "
                             f"remove it") from None


def checkpoint_files(sidecar: Path) -> list[str]:
    """``latest.json``, ``latest.pt`` and the attachments (resume state) its sidecar names: plain file
    names beside it (a name with a folder in it is refused, so a store cannot copy files from elsewhere)."""
    try:
        attached = [entry["file"] for entry in json.loads(sidecar.read_text()).get("attachments", {}).values()]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RunFolderError(f"{str(sidecar)!r} does not list its attachments as a checkpoint sidecar does ({exc}): "
                             f"repair or remove it") from None
    bad = [name for name in attached if not isinstance(name, str) or Path(name).name != name or name in ("", ".", "..")]
    if bad:
        raise RunFolderError(f"{str(sidecar)!r} names attachments {bad!r}: only plain file names beside it are allowed")
    return [sidecar.name, sidecar.with_suffix(".pt").name] + attached


def copy_files(src: Path, dst: Path, names: list[str]) -> None:
    """Copy ``names`` from ``src`` into ``dst``, each through a temporary file (a crash leaves no torn file)."""
    dst.mkdir(parents=True, exist_ok=True)
    for name in names:
        if (src / name).exists():
            tmp = dst / f".{name}.tmp"
            shutil.copy2(src / name, tmp)
            os.replace(tmp, dst / name)


def save_to_store(lr: LongRun) -> None:
    """The run's resume state, its evaluated checkpoints (``step_N.pt``, ``.json``: a few hundred kB
    each, kept for later evaluations) and its evaluation files into the store (the sidecar last)."""
    names = checkpoint_files(lr.latest)
    kept = lr.store / "checkpoints"
    evaluated = sorted(p.name for p in (lr.run / "checkpoints").glob("step_*") if not (kept / p.name).exists())
    copy_files(lr.run / "checkpoints", kept, evaluated + names[1:] + names[:1])
    copy_files(lr.run, lr.store, list(RUN_FILES))


def restore_from_store(lr: LongRun) -> bool:
    """Recreate a missing run folder from the store; False when there is nothing to restore.

    Refuses (:class:`RunFolderError`) a run folder behind its store: training on would fork the run.
    """
    stored, local = saved_steps(lr.stored_latest), saved_steps(lr.latest)
    if stored and local < stored and lr.run.exists():
        raise RunFolderError(f"run folder {str(lr.run)!r} is at step {local} but its store {str(lr.store)!r} "
                             f"is at step {stored}: move the run folder away to continue from the store")
    fork = forked_at(lr) if stored else None
    if fork is not None:  # a run started again in the folder (--overwrite): its chunks would join the store's
        raise RunFolderError(f"run folder {str(lr.run)!r} holds another run than its store {str(lr.store)!r}: their "
                             f"evaluations differ at step {fork}; move the run folder away to continue from the "
                             f"store, or give the new run another name or --store")
    if not stored or lr.run.exists():
        return False
    copy_files(lr.store / "checkpoints", lr.run / "checkpoints", checkpoint_files(lr.stored_latest))
    copy_files(lr.store, lr.run, ["config.yaml"])
    return True


def forked_at(lr: LongRun) -> int | str | None:
    """The step of the first evaluation in which the run folder's history and the store's differ
    (None where one continues the other, or either has none yet)."""
    histories = [read_json(path) for path in (lr.store / "eval.json", lr.run / "eval.json") if path.exists()]
    if len(histories) < 2 or not all(isinstance(h, list) for h in histories):
        return None
    for stored, local in zip(*histories, strict=False):
        if stored != local:
            return stored.get("step", "?") if isinstance(stored, dict) else "?"
    return None


def next_target(step: int, chunk: int, until: int) -> int:
    """The end of the chunk after ``step``: the next multiple of ``chunk``, at most ``until``."""
    return min(until, (step // chunk + 1) * chunk)


def append_chunk(store: Path, record: dict[str, Any]) -> None:
    store.mkdir(parents=True, exist_ok=True)
    with open(store / CHUNKS_FILE, "a") as fh:
        fh.write(json.dumps(record) + "\n")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class ChunkSignals(CaughtSignals):
    """While active, SIGINT, SIGTERM and SIGHUP (unless ignored, as under ``nohup``) are caught: each is
    passed on to the running trainer, and no further chunk starts.

    The trainer runs in its own session, so it gets a signal only from here, once per signal sent to
    long_run (SIGINT, SIGTERM: the first asks it to save and stop, a second stops it at once, as for
    a trainer run by hand; SIGHUP ends it as a closed terminal would without long_run). Without a
    trainer running, a signal only stops long_run before the next chunk.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        super().__init__()
        self.child: subprocess.Popen | None = None
        """The trainer now running, which signals are passed on to."""
        self.pending: int | None = None
        """A signal caught while no trainer ran: :func:`run_trainer` passes it on to one it just started."""

    def catches(self, sig: int) -> bool:
        return sig != signal.SIGHUP or signal.getsignal(sig) is not signal.SIG_IGN

    def _handle(self, signum: int, frame: object) -> None:
        self.signum = self.signum or signum
        child = self.child
        if child is not None:
            child.send_signal(signum)
        else:
            self.pending = signum
        what = "passed on to the trainer; the store is updated once it has saved and stopped" if child else \
            "stopping before the next chunk"
        try:
            print(f"\nlong_run: {signal.Signals(signum).name} {what}", file=sys.stderr, flush=True)
        except (OSError, RuntimeError):  # a hung-up terminal, or stderr busy in the interrupted code
            pass


def run_trainer(cmd: list[str], signals: ChunkSignals) -> int:
    """Run one chunk's trainer to its end (signals to long_run are passed on to it); its exit code, as a
    shell gives it (128 + N for a trainer killed by signal N)."""
    child = subprocess.Popen(cmd, start_new_session=True)
    signals.child = child
    try:
        if signals.pending is not None:  # caught while the trainer was being started
            child.send_signal(signals.pending)
            signals.pending = None
        code = child.wait()
        return 128 - code if code < 0 else code
    except BaseException:  # long_run is going down (signals not caught): let the trainer save, not run on alone
        child.terminate()
        child.wait()
        raise
    finally:
        signals.child = None


def chunk_command(args: argparse.Namespace, lr: LongRun, target: int) -> list[str]:
    """The trainer command that trains the run to ``target`` steps (``--resume`` once it has a saved state)."""
    cmd = [sys.executable, "-m", TRAINERS[args.trainer]]
    if args.config:
        cmd += ["--config", args.config]
    for item in args.overrides:
        cmd += ["--set", item]
    cmd += ["--set", f"total_steps={target}"]
    if args.device:
        cmd += ["--device", args.device]
    if lr.latest.exists():
        cmd.append("--resume")
    return cmd


def store_chunk(lr: LongRun, record: dict[str, Any]) -> None:
    """Copy the run into the store and record its chunk, holding the run's lock meanwhile, so that no
    other trainer writes the files being copied (:class:`RunInUseError` if one holds it). A save the
    trainer left cut short (stopped at once by a second signal) is first completed or dropped."""
    from models.checkpoint import finish_interrupted_save  # imports torch: only once a chunk has trained

    lock = RunLock(lr.run)
    lock.acquire("long_run would copy its files to the store while that run writes them")
    try:
        finish_interrupted_save(lr.latest.with_suffix(".pt"))
        save_to_store(lr)
        append_chunk(lr.store, record)
    finally:
        lock.release()


def train_chunks(args: argparse.Namespace, lr: LongRun, until: int) -> int:
    """Run chunks until ``until`` steps; the exit code of the first trainer process that failed, 128 +
    the signal that stopped long_run, else 0."""
    with ChunkSignals() as signals:
        return chunk_loop(args, lr, until, signals)


def chunk_loop(args: argparse.Namespace, lr: LongRun, until: int, signals: ChunkSignals) -> int:
    """The chunks of :func:`train_chunks`, each started only while no signal was caught and the run is free."""
    if restore_from_store(lr):
        print(f"restored {str(lr.run)!r} from {str(lr.store)!r} at step {saved_steps(lr.latest)}", flush=True)
    step = saved_steps(lr.latest)
    while step < until and signals.signum is None:
        RunLock(lr.run).check_free("long_run would start a second trainer on it")
        target = next_target(step, args.chunk_steps, until)
        cmd = chunk_command(args, lr, target)
        started, t0 = now(), time.perf_counter()
        print(f"=== chunk to {target} steps, started {started}", flush=True)
        code = run_trainer(cmd, signals)
        wall = time.perf_counter() - t0
        if code == REFUSED:
            print(f"the trainer refused to train (exit code {code}, its reason above): nothing copied to the store, "
                  f"no chunk recorded", flush=True)
            return code
        reached = saved_steps(lr.latest)
        if reached > step:
            store_chunk(lr, {"from_step": step, "to_step": reached, "started": started, "ended": now(),
                             "wall_s": round(wall, 1), "host": platform.node(), "cpus": os.cpu_count(),
                             "command": " ".join(cmd[1:]), "exit_code": code})
        if code != 0 or signals.signum is not None:
            why = "" if signals.signum is None else f"stopped by {signal.Signals(signals.signum).name}: "
            print(f"{why}the trainer exited with code {code} at step {reached}; the store holds step "
                  f"{saved_steps(lr.stored_latest)} (the same command goes on from there)", flush=True)
            return code if code != 0 or signals.signum is None else 128 + signals.signum
        step = reached
    if signals.signum is not None:
        print(f"stopped by {signal.Signals(signals.signum).name} at step {step}; the store holds step "
              f"{saved_steps(lr.stored_latest)} (the same command goes on from there)", flush=True)
        return 128 + signals.signum
    print(f"done: {step} steps; the store {str(lr.store)!r} holds the run", flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="python -m training.long_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainer", default="batch_ppo", choices=sorted(TRAINERS),
                        help="the training script run for each chunk (default batch_ppo)")
    parser.add_argument("--config", default=None, help="the trainer's YAML config (a file or a shipped config's name)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key for every chunk (not total_steps: use --until)")
    parser.add_argument("--chunk-steps", type=int, default=1_000_000, help="learner steps per chunk (default 1M)")
    parser.add_argument("--until", type=int, default=None,
                        help="train to this many learner steps (default: the config's total_steps)")
    parser.add_argument("--store", default="longruns",
                        help="folder that carries the run between machines: <store>/<name>/ (default longruns)")
    parser.add_argument("--report", action="store_true",
                        help="train nothing: print the evaluations against steps and wall time, draw curve.png")
    add_device_arg(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.chunk_steps < 1:
        parser.error(f"--chunk-steps {args.chunk_steps} is not allowed: use a positive number of learner steps")
    if any(item.split("=", 1)[0].strip() == "total_steps" for item in args.overrides):
        parser.error("--set total_steps=... is not allowed here: each chunk sets it; use --until N")
    if args.until is not None and args.until < 1:
        parser.error(f"--until {args.until} is not allowed: use a positive number of learner steps")
    until_set = [] if args.until is None else [f"total_steps={args.until}"]  # the whole run's end
    try:
        device = [] if args.device is None else [f"device={args.device}"]  # checked now, not by the first chunk
        cfg = load_config(config_class(args.trainer), args.config, args.overrides + until_set + device)
    except ConfigError as exc:  # (a refused total_steps is the --until given)
        parser.error(f"--until {str(exc)[len('total_steps='):]}" if until_set and str(exc).startswith("total_steps=")
                     else str(exc))
    until = cfg.total_steps
    # each chunk's total_steps is its own end: a learning rate annealed over total_steps would reach 0 at each
    if getattr(cfg, "anneal_lr", False) and getattr(cfg, "anneal_end_step", None) is None and not args.report:
        if not hasattr(cfg, "anneal_end_step"):
            parser.error("anneal_lr: true anneals over each chunk's total_steps (selfplay fixes no window in steps): "
                         "give --set anneal_lr=false, or train with --trainer batch_ppo")
        args.overrides.append(f"anneal_end_step={until}")  # (the whole run's end, as a run in one piece has it)
    lr = LongRun(run=Path(cfg.run_dir) / cfg.name, store=Path(args.store) / cfg.name)
    problem = None if args.report else output_dir_problem(lr.store / "checkpoints")
    if problem:  # found now, not after a chunk has trained
        parser.error(f"--store {args.store}: the run's store {str(lr.store)!r} cannot be written ({problem}): "
                     f"use a folder that can be written")
    try:
        if args.report:
            print(report(lr.store))
            print(f"curves: {lr.store / CURVE_FILE}")
            return 0
        return train_chunks(args, lr, until)
    except RunFolderError as exc:
        parser.error(str(exc))
    return 2  # not reached: parser.error exits


if __name__ == "__main__":
    sys.exit(main())
