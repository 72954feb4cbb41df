"""Checks the command-line tools run on their arguments before any work starts.

``training.evaluate``, ``training.main_job``, ``tt_env.ui.play`` and ``tt_env.ui.replay`` use them so
that a bad number or an output path that cannot be written is reported at once, in one line
(argparse's ``parser.error``, exit status 2), not after twenty minutes of games.

- Number types for ``argparse`` (``type=``): :func:`int_at_least`, :func:`seed_arg`,
  :func:`positive_float`, :func:`decks_arg`. Their messages name the value and the allowed range.
- Output paths: :func:`output_file_problem` and :func:`output_dir_problem` return what is wrong
  with a path (``None`` when it can be written; the text reads after ``"--json PATH: "``). They
  find the nearest folder that exists above the path and check that it is a folder the user
  may write in and search (``os.access`` with ``W_OK | X_OK``: a folder of mode ``0o200`` can be
  written but not searched, and no file can be created in it), then really create a file
  there and remove it at once. So a folder that would have to be created below a file, a file
  where a folder should be, a folder without permission, and a place where the kernel refuses
  new files whatever the permission bits say (``/proc``, ``/sys``, a read-only file system: as
  root, ``os.access`` allows nearly everything) are all found before the run, and nothing is
  left behind when the run is refused.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path


def int_at_least(low: int, *, noun: str = "an integer") -> Callable[[str], int]:
    """An ``argparse`` type: an integer ``>= low`` (the message names the value and the range)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer: use {noun} >= {low}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is not allowed: use {noun} >= {low}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


seed_arg = int_at_least(0, noun="a seed, an integer")
"""An ``argparse`` type for ``--seed``: an integer ``>= 0`` (numpy's seeds cannot be negative)."""


def positive_float(high: float | None = None, *, why: str = "") -> Callable[[str], float]:
    """An ``argparse`` type: a finite number ``> 0`` (and ``<= high`` when given)."""
    allowed = "a number > 0" + (f" and <= {high:g}" if high is not None else "") + why

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number: use {allowed}") from None
        if not math.isfinite(value) or value <= 0 or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is not allowed: use {allowed}")
        return value

    parse.__name__ = "positive number"
    return parse


def decks_arg(text: str) -> int | str:
    """An ``argparse`` type for ``--decks``: ``auto`` or an integer ``>= 1``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: use 'auto' or a number of decks >= 1")
    return value


def available_cpus() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def workers_note(workers: int) -> str | None:
    """A note when ``workers`` is more than the CPU cores here (allowed, but they only share them)."""
    cpus = available_cpus()
    if workers > cpus:
        return (f"note: --workers {workers} is more than the {cpus} CPU core(s) here: the extra workers "
                f"share the cores and do not make the run faster")
    return None


def _absolute(path: str | os.PathLike) -> Path:
    return Path(os.path.abspath(os.fspath(path)))


def _nearest_existing(path: Path) -> Path:
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


PROBE_PREFIX = ".tt-write-check-"
"""Prefix of the empty file :func:`_folder_problem` creates and removes to see that files can be made."""


def _folder_problem(folder: Path) -> str | None:
    """What keeps files from being created in ``folder`` (which exists), or ``None``.

    A folder needs both write and search (execute) permission for a file to be created in it;
    then a file is really created and removed, which also catches what the permission bits do
    not show (``/proc``, a read-only mount, root's view of ``os.access``).
    """
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"no permission to write in {folder}"
    try:
        fd, probe = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=folder)
    except OSError as exc:
        return f"cannot create files in {folder} ({exc.strerror or exc})"
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:  # pragma: no cover - created but not removable: leave it, the folder is writable
        pass
    return None


def output_file_problem(path: str | os.PathLike, suffixes: Sequence[str] = ()) -> str | None:
    """Why a file cannot be written at ``path`` (``None`` if it can), leaving nothing behind.

    Refused: an existing folder (a plotting library would write ``DIR.png`` beside it), a name
    without one of ``suffixes`` (when given, lower case with the dot, such as ``(".gif",)``), an
    existing path that is not a regular file (such as ``/dev/null``: files are replaced
    atomically), a file without write permission, a folder above it that is a file or that has
    no write permission.
    """
    target = _absolute(path)
    if target.is_dir():
        example = Path(path) / ("out" + (suffixes[0] if suffixes else ".json"))
        return f"it is a folder: give a file name, such as {example}"
    if suffixes and target.suffix.lower() not in suffixes:
        return f"the file name does not end in {' or '.join(suffixes)}"
    if os.path.lexists(target):
        if not target.is_file():
            return "it exists and is not a regular file"
        if not os.access(target, os.W_OK):
            return "no permission to write it"
        return _folder_problem(target.parent)
    return _folder_problem(_nearest_existing(target.parent))


def output_dir_problem(path: str | os.PathLike) -> str | None:
    """Why files cannot be written into the folder ``path`` (``None`` if they can), leaving nothing behind."""
    target = _absolute(path)
    if os.path.lexists(target) and not target.is_dir():
        return "it is a file, not a folder"
    return _folder_problem(_nearest_existing(target))
