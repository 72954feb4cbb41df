"""The lock of a run folder: which process writes there, so that no second one does.

A training run holds ``<run folder>/run.lock`` while it writes the folder. The lock is a JSON
file saying who holds it::

    {"format": "three-thirteen-run-lock/1", "pid": 4242, "host": "box", "started": "2025-...",
     "process_start": 123456, "command": "training/selfplay.py --config ...", "token": "..."}

It is created atomically, complete (written beside the target, then hard-linked into place:
the link fails if a lock is already there), so a reader never sees half of one. A lock whose
process is no longer running (same host, no such pid, or a pid that now belongs to a process
started at another time) is stale: the next run takes it over and says so. A lock of a live
process is never taken: ``--overwrite`` (which would delete the folder under that run) and
``--resume`` (which would make a second writer) are refused with a line naming the holder. A
lock held by a process on another host cannot be checked from here and counts as live.

One process may take the lock of a folder several times (``training.main_job`` holds it while
it evaluates, ``selfplay.train`` while it trains): it is released when the last holder lets go.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

LOCK_NAME = "run.lock"
LOCK_FORMAT = "three-thirteen-run-lock/1"
_HELD: dict[str, list] = {}
"""Locks this process holds: resolved lock path -> [times taken, token]."""


class RunFolderError(ValueError):
    """The run folder cannot be used as asked (it holds a run, or no run to resume); the message says why."""


class RunInUseError(RunFolderError):
    """Another live process holds the run folder's lock; the message names it."""


def _process_start(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks after boot (Linux ``/proc``), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # after "pid (name) ": state is field 3, starttime field 22
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].startswith("Z")


def holder_is_alive(holder: dict[str, Any]) -> bool:
    """Whether the process a lock names still runs (one on another host is taken to be running)."""
    if holder.get("host") != socket.gethostname():
        return True
    pid = holder.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, run by another user
        pass
    except OSError:
        return False
    if _is_zombie(pid):
        return False
    started = holder.get("process_start")
    now = _process_start(pid)
    return started is None or now is None or started == now  # else the pid was reused by a newer process


def describe(holder: dict[str, Any]) -> str:
    """``process 4242 on host box, started 2025-..., running training/selfplay.py ...`` (from a lock's JSON)."""
    text = f"process {holder.get('pid')} on host {holder.get('host')}, started {holder.get('started')}"
    command = str(holder.get("command") or "")
    return text + (f", running {command[:200]}" if command else "")


class RunLock:
    """The lock file of one run folder."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self.held = False
        """Whether this object holds the lock (each :meth:`acquire` is undone by one :meth:`release`)."""

    def _key(self) -> str:
        return os.path.realpath(self.path)

    def read(self) -> dict[str, Any] | None:
        """The lock's JSON (``{}`` for a lock that cannot be read or is not one), or None without a lock."""
        try:
            if not self.path.is_file():
                return None if not os.path.lexists(self.path) else {}
            if self.path.stat().st_size > 65536:
                return {}
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) and data.get("format") == LOCK_FORMAT else {}

    def live_holder(self) -> dict[str, Any] | None:
        """The lock's JSON if another live process holds it (not this process), else None."""
        if self._key() in _HELD:
            return None
        holder = self.read()
        if not holder or not holder_is_alive(holder):
            return None
        if holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
            return None  # this process, with a lock it no longer tracks: it cannot be another writer
        return holder

    def check_free(self, why: str) -> None:
        """Raise :class:`RunInUseError` (``why`` says what would go wrong) if another live process holds the lock."""
        holder = self.live_holder()
        if holder is not None:
            raise RunInUseError(f"run folder {str(self.folder)!r} is in use by {describe(holder)}: {why}; wait for "
                                f"that run to end or stop it first (Ctrl-C saves it), or delete {str(self.path)!r} "
                                f"if no such process runs")

    def acquire(self, why: str = "a second run would write the same files") -> None:
        """Take the lock (the folder must exist), taking over a stale one with a note on stderr.

        Raises :class:`RunInUseError` if another live process holds it.
        """
        key = self._key()
        if self.held:
            return
        if key in _HELD:
            _HELD[key][0] += 1
            self.held = True
            return
        token = uuid.uuid4().hex
        record = {"format": LOCK_FORMAT, "pid": os.getpid(), "host": socket.gethostname(),
                  "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "process_start": _process_start(os.getpid()),
                  "command": " ".join([Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]])[:500],
                  "token": token}
        tmp = self.folder / f".{LOCK_NAME}.{token}.tmp"
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        try:
            for _ in range(5):
                if self._link(tmp):
                    _HELD[key] = [1, token]
                    self.held = True
                    return
                self._take_over_stale(why, token)
            raise RunInUseError(f"run folder {str(self.folder)!r}: could not take {str(self.path)!r} (other "
                                f"processes keep taking it): try again")
        finally:
            tmp.unlink(missing_ok=True)

    def _link(self, tmp: Path) -> bool:
        """Put the complete lock ``tmp`` in place unless a lock is there; whether it was put."""
        try:
            os.link(tmp, self.path)
            return True
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links: exclusive create, then write
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(tmp.read_text(encoding="utf-8"))
            return True

    def _take_over_stale(self, why: str, token: str) -> None:
        """Move a stale lock out of the way (raise if its holder lives); one process wins the move."""
        holder = self.read()
        if holder is None:
            return  # released meanwhile: try again
        self.check_free(why)
        aside = self.folder / f".{LOCK_NAME}.{token}.stale"
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return
        try:
            moved = json.loads(aside.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            moved = {}
        if isinstance(moved, dict) and moved.get("token") != holder.get("token") and holder_is_alive(moved):
            try:  # another process took the lock between our read and our move: give it back
                os.link(aside, self.path)
            except OSError:
                pass
            aside.unlink(missing_ok=True)
            RunLock(self.folder).check_free(why)
            return
        aside.unlink(missing_ok=True)
        if not holder:
            what = "had an unreadable lock"
        elif holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
            what = "was locked by an earlier run of this process that did not release it"
        else:
            what = f"was locked by {describe(holder)}, which is no longer running"
        print(f"note: run folder {str(self.folder)!r} {what}: taking the lock over", file=sys.stderr, flush=True)

    def release(self) -> None:
        """Let go of the lock taken by :meth:`acquire` (the file goes when the process's last hold ends)."""
        if not self.held:
            return
        self.held = False
        key = self._key()
        entry = _HELD.get(key)
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] > 0:
            return
        del _HELD[key]
        holder = self.read()
        if holder and holder.get("token") == entry[1]:
            self.path.unlink(missing_ok=True)
