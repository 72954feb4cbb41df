"""What both training scripts share: the run directory, duplicate evaluation, the learning curve.

Every run writes to ``<run_dir>/<name>/``: ``config.yaml`` (the resolved config),
``tb/`` (TensorBoard events), ``checkpoints/`` (our checkpoint format, ``models.checkpoint``),
``eval.json`` (every evaluation) and ``learning_curve.png`` (score difference against each
evaluation opponent over training steps); ``training.main_job`` adds ``main_job_eval.json``.

A folder that already holds a run (its ``config.yaml`` or ``checkpoints/latest.json``) is never
silently reused: starting there again needs ``--resume`` (continue it) or ``--overwrite`` (delete
it and start again), and nothing is created before the run has been fully built
(:meth:`RunDir.check_can_start`, :meth:`RunDir.create`). ``--overwrite`` deletes only what a run
writes (:data:`RUN_FILES`, :data:`RUN_FOLDERS` and the files in them): a folder that also holds
anything else is refused, naming it, and nothing is deleted.
While a run writes its folder it holds the folder's lock (``run.lock``, :mod:`training.common.run_lock`):
``--overwrite`` and ``--resume`` of a folder whose run is still going are refused, naming the
process that holds it.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from tt_env.cli_checks import output_dir_problem
from tt_env.engine.rules import Rules
from tt_env.jsonio import write_json

from tt_env.evaluation.duplicate import DEFAULT_BATCH_SIZE, run_deals
from .run_lock import LOCK_NAME, RunFolderError, RunInUseError, RunLock

__all__ = ["EvalResult", "RUN_FILES", "RUN_FOLDERS", "RunDir", "RunExistsError", "RunFolderError", "RunInUseError",
           "TrainingDiverged", "evaluate_agent", "format_results", "plot_learning_curve"]

RUN_FILES = ("config.yaml", "eval.json", "learning_curve.png", "main_job_eval.json")
"""The files a run writes at the top of its folder (besides its lock, ``run.lock``), each also as a
temporary ``NAME.tmp`` or ``.NAME.tmp`` (an atomic write, ``training.long_run``'s copy) while it writes."""
RUN_FOLDERS = {"checkpoints": re.compile(r"^\.?(latest|final|step_\d+)\."),
               "tb": re.compile(r"^events\.out\.tfevents\.")}
"""The folders a run writes, with the names of the files it writes in them: checkpoints (with their
sidecars, attachments and the temporary files of a save) and TensorBoard event files (in ``tb/`` or,
for SB3, in one folder level below it)."""
_TOP_NAMES = "(" + "|".join(re.escape(n) for n in RUN_FILES) + ")"
_TOP_FILE = re.compile(rf"^(?:{_TOP_NAMES}|{_TOP_NAMES}\.tmp|\.{_TOP_NAMES}\.tmp)$")
_LOCK_FILE = re.compile(rf"^(?:{re.escape(LOCK_NAME)}|\.{re.escape(LOCK_NAME)}\.[0-9a-f]+\.(?:tmp|stale))$")
"""The lock and the files a process writes beside it while it takes the lock (never deleted here)."""


@dataclass
class EvalResult:
    """Duplicate evaluation of one agent (seat 0 of the list) against one opponent."""

    opponent: str
    deals: int
    games: int
    score_diff: float
    """Mean of (agent's final score - mean of the opponents'); negative is better (low scores win)."""
    ci95: float
    """Half-width of the 95% interval of ``score_diff`` (normal, deals as the paired unit)."""
    win_rate: float
    """Mean win share (ties share the win)."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def evaluate_agent(agent: Any, opponents: Sequence[str], rules: Rules, deals: int, seed: int,
                   on_deal: Callable[[list], None] | None = None,
                   batch_size: int = DEFAULT_BATCH_SIZE) -> list[EvalResult]:
    """Play ``deals`` duplicate deals of ``agent`` against each opponent (all other seats).

    ``on_deal`` is called after every deal (a training script stops a long evaluation from it).
    ``batch_size`` games are played side by side, the decisions of an agent with ``act_batch``
    (a :class:`models.agent_loader.CheckpointAgent`) batched (``tt_env.evaluation.duplicate``); the
    results are the same with any ``batch_size`` (1: one game at a time).
    """
    results = []
    n = rules.num_players
    for name in opponents:
        records = run_deals([agent] + [name] * (n - 1), rules, deals, seed, on_deal=on_deal, batch_size=batch_size)
        per_deal, wins = [], []
        for deal in records:
            diffs = [g.scores[0] - float(np.mean(g.scores[1:])) for g in deal]
            per_deal.append(float(np.mean(diffs)))
            wins.extend(g.win_shares[0] for g in deal)
        arr = np.asarray(per_deal)
        ci = 1.96 * float(arr.std(ddof=1)) / math.sqrt(len(arr)) if len(arr) > 1 else float("nan")
        results.append(EvalResult(name, deals, deals * n, float(arr.mean()), ci, float(np.mean(wins))))
    return results


class TrainingDiverged(RuntimeError):
    """The weights became non-finite during training; the message names the tensor."""


class RunExistsError(RunFolderError):
    """The folder already holds a run, and neither ``--resume`` nor ``--overwrite`` was given."""


class RunDir:
    """The directory of one run and its evaluation history (nothing is created until :meth:`create`)."""

    def __init__(self, root: str | Path, name: str) -> None:
        self.path = Path(root) / name
        self.checkpoints = self.path / "checkpoints"
        self.latest = self.checkpoints / "latest.pt"
        self.tb = self.path / "tb"
        self.curve_png = self.path / "learning_curve.png"
        self.history: list[dict[str, Any]] = []
        self.learn_sps: float | None = None
        """Learner environment steps per second of training time (evaluations excluded)."""
        self.stopped_by: int | None = None
        """The signal (SIGINT, SIGTERM) that stopped the run early, or None."""
        self.lock = RunLock(self.path)

    def holds_run(self) -> bool:
        """Whether the folder holds a run: its ``config.yaml`` (written first) or ``checkpoints/latest.json``."""
        return (self.path / "config.yaml").is_file() or (self.checkpoints / "latest.json").is_file()

    def run_entries(self) -> tuple[list[Path], list[str]]:
        """(what a run wrote in the folder, deepest first; the names of everything else in it).

        The lock is in neither list: ``--overwrite`` never deletes it.
        """
        ours: list[Path] = []
        others: list[str] = []
        for entry in sorted(self.path.iterdir()):
            if _LOCK_FILE.match(entry.name):
                continue
            if entry.name in RUN_FOLDERS and entry.is_dir() and not entry.is_symlink():
                self._sort_folder(entry, RUN_FOLDERS[entry.name], entry.name == "tb", ours, others)
            elif _TOP_FILE.match(entry.name) and (entry.is_symlink() or not entry.is_dir()):
                ours.append(entry)
            else:
                others.append(entry.name)
        return ours, others

    def _sort_folder(self, folder: Path, names: re.Pattern, nested: bool, ours: list[Path],
                     others: list[str]) -> None:
        """Sort ``folder``'s entries into ``ours`` (files matching ``names``; with ``nested``, folders of
        them one level down) and ``others`` (their paths in the run folder), then ``folder`` itself."""
        for entry in sorted(folder.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                if nested:
                    self._sort_folder(entry, names, False, ours, others)
                else:
                    others.append(entry.relative_to(self.path).as_posix())
            elif names.match(entry.name):
                ours.append(entry)
            else:
                others.append(entry.relative_to(self.path).as_posix())
        ours.append(folder)

    def _check_writable(self) -> None:
        problem = output_dir_problem(self.path)
        if problem:
            raise RunFolderError(f"run folder {str(self.path)!r} (run_dir/name) cannot be used: {problem}")

    def check_can_start(self, overwrite: bool) -> None:
        """Raise :class:`RunFolderError` unless a new run may start here (``overwrite``: replacing a run)."""
        if os.path.lexists(self.path) and not self.path.is_dir():
            raise RunFolderError(f"run folder {str(self.path)!r} is a file: choose another name or run_dir")
        self._check_writable()  # run_dir a file, a folder that cannot be created or written
        if not self.path.exists():
            return
        self.lock.check_free("--overwrite would delete its files under it" if overwrite else
                             "a second run cannot start there")
        ours, others = self.run_entries()
        where = str(self.path)
        if others and not self.holds_run():
            raise RunFolderError(f"folder {where!r} exists and is not a run folder: it holds {_names(others)}, "
                                 f"which a run does not write: choose another name or run_dir, or remove them")
        if (ours or others) and not overwrite:
            raise RunExistsError(f"run folder {where!r} already holds a run: add --resume to continue it, or "
                                 f"--overwrite to delete it and start again")
        if others:
            raise RunFolderError(f"--overwrite: run folder {where!r} also holds {_names(others)}, which a run does "
                                 f"not write: nothing was deleted; choose another name or run_dir, or remove them")

    def check_can_resume(self) -> None:
        """Raise :class:`RunFolderError` unless the folder holds a run with ``checkpoints/latest.pt`` that no
        live process is writing."""
        if os.path.lexists(self.path) and not self.path.is_dir():
            raise RunFolderError(f"run folder {str(self.path)!r} is a file: choose another name or run_dir")
        if not (self.latest.exists() or self.latest.with_suffix(".json").exists()):
            what = "its run has no checkpoints/latest.pt" if self.holds_run() else "it holds no run"
            raise RunFolderError(f"--resume: nothing to resume in {str(self.path)!r} ({what}); start the run "
                                 f"without --resume (or with --overwrite)")
        self.lock.check_free("--resume would make a second process write the same run")
        self._check_writable()

    def create(self, overwrite: bool) -> None:
        """Make the (empty) folder and take its lock, deleting the run there first when ``overwrite``."""
        self.check_can_start(overwrite)
        self.path.mkdir(parents=True, exist_ok=True)
        self.lock.acquire("--overwrite would delete its files under it" if overwrite else
                          "a second run cannot start there")
        if overwrite:
            self._delete_run_files()
        self.checkpoints.mkdir(parents=True, exist_ok=True)

    def _delete_run_files(self) -> None:
        """Delete what a run wrote here (:meth:`run_entries`), nothing else: a folder that holds anything
        more keeps it (a file put there since :meth:`check_can_start` keeps its folder too)."""
        for entry in self.run_entries()[0]:
            if entry.is_dir() and not entry.is_symlink():
                try:
                    entry.rmdir()
                except OSError:  # not empty: something else came in meanwhile
                    pass
            else:
                entry.unlink(missing_ok=True)

    def acquire_for_resume(self) -> None:
        """Take the folder's lock to continue its run (:class:`RunInUseError` if a live process holds it)."""
        self.lock.acquire("--resume would make a second process write the same run")

    def release(self) -> None:
        """Let go of the folder's lock if this object took it (no-op otherwise)."""
        self.lock.release()

    def record_eval(self, step: int, results: Sequence[EvalResult]) -> None:
        """Append one evaluation, rewrite ``eval.json`` and redraw the learning curve."""
        self.history.append({"step": step, "results": [r.to_dict() for r in results]})
        self.write_history()

    def write_history(self) -> None:
        """``eval.json`` and the learning curve from :attr:`history` (none drawn for an empty one)."""
        write_json(self.path / "eval.json", self.history)
        if self.history:
            plot_learning_curve(self.history, self.curve_png)


def _names(names: Sequence[str], most: int = 5) -> str:
    """The first ``most`` of ``names`` as a list, and how many more, for a one-line message."""
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return f"{list(names[:most])}{more}"


def plot_learning_curve(history: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Score difference (with 95% band) against each opponent over training steps, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    names = sorted({r["opponent"] for h in history for r in h["results"]})
    for name in names:
        pts = [(h["step"], r["score_diff"], r["ci95"]) for h in history for r in h["results"]
               if r["opponent"] == name]
        steps, means, cis = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
        ax.plot(steps, means, marker="o", label=f"vs {name}")
        ax.fill_between(steps, means - np.nan_to_num(cis), means + np.nan_to_num(cis), alpha=0.2)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("learner environment steps")
    ax.set_ylabel("final score difference (agent - opponent)\nlower is better")
    ax.set_title("Duplicate evaluation over training")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def format_results(results: Sequence[EvalResult]) -> str:
    """One line per opponent, for logs."""
    return "; ".join(f"vs {r.opponent}: diff {r.score_diff:+.1f} ± {r.ci95:.1f}, win {100 * r.win_rate:.0f}%"
                     for r in results)
