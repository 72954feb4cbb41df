"""Checks the command-line tools run on their arguments before any work starts, shared by every CLI.

``training.evaluate``, ``training.main_job``, ``tt_env.ui.play``, ``tt_env.ui.replay`` and the
other tools use them so that a bad number or an output path that cannot be written is reported
at once, in one line (exit status 2), not after twenty minutes of games.

- :class:`CommandParser`: ``argparse.ArgumentParser`` whose refusals are one line
  (``prog: error: message``, no usage block) and whose ``prog`` is the name the command was
  run by (``three-thirteen evaluate`` under the console command, see :func:`invoked_as`).
- Types for ``argparse`` (``type=``): :func:`int_at_least`, :func:`int_list`, :func:`seed_arg`,
  :func:`positive_float`, :func:`decks_arg`, :func:`rounds_arg` (the one parser of
  ``--rounds`` for every tool). Their messages name the value and the allowed range.
- :func:`significant`: a number with a few significant digits (``0.0123``, ``12.3``, ``4567``),
  for times and rates that may be tiny or large (``ms/move``, ``games/s``).
- Output paths: :func:`output_file_problem` and :func:`output_dir_problem` return what is wrong
  with a path (``None`` when it can be written; the text reads after ``"--json PATH: "``). They
  find the nearest folder that exists above the path and check that it is a folder the user
  may write in and search (``os.access`` with ``W_OK | X_OK``: a folder of mode ``0o200`` can be
  written but not searched, and no file can be created in it), then really create a file
  there and remove it at once. So a folder that would have to be created below a file, a file
  where a folder should be, a folder without permission, and a place where the kernel refuses
  new files whatever the permission bits say (``/proc``, ``/sys``, a read-only file system: as
  root, ``os.access`` allows nearly everything) are all found before the run, and nothing is
  left behind when the run is refused. An existing file is refused too (:data:`EXISTS`) unless
  the caller passes ``overwrite=True``: each command that writes files takes ``--overwrite``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, NoReturn

from .engine.rules import ACES_OPTIONS, MAX_DECKS, MAX_PLAYERS, MIN_PLAYERS, Rules, option_names

_INVOKED_AS: ContextVar[str | None] = ContextVar("invoked_as", default=None)
_SHOW_HELP_HINT = ("the following arguments are required", "unrecognized arguments", "one of the arguments")


class CommandParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with the project's conventions for command lines.

    A refusal (a bad value, a missing argument, a check of the tool's own) prints one line,
    ``prog: error: message``, and exits with status 2: no usage block above it (``--help``
    shows the usage). ``prog`` is the name the command is run by: the one given (``python -m
    training.evaluate``), or the console command's (``three-thirteen evaluate``) inside
    :func:`invoked_as`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        invoked = _INVOKED_AS.get()
        if invoked is not None:
            kwargs["prog"] = invoked
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        hint = " (--help shows the usage)" if message.startswith(_SHOW_HELP_HINT) else ""
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}{hint}\n")


@contextlib.contextmanager
def invoked_as(prog: str) -> Iterator[None]:
    """Within the block, every :class:`CommandParser` built is named ``prog`` (in ``--help`` and errors)."""
    token = _INVOKED_AS.set(prog)
    try:
        yield
    finally:
        _INVOKED_AS.reset(token)


def command_name(default: str) -> str:
    """The name the running command was invoked by: ``default`` unless inside :func:`invoked_as`."""
    return _INVOKED_AS.get() or default


def int_at_least(low: int, high: int | None = None, *, noun: str = "an integer") -> Callable[[str], int]:
    """An ``argparse`` type: an integer ``>= low`` (and ``<= high`` when given); the message names
    the value and the range."""
    allowed = f"{noun} >= {low}" if high is None else f"{noun} {low}..{high}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer: use {allowed}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is not allowed: use {allowed}")
        return value

    parse.__name__ = f"integer >= {low}" if high is None else f"integer {low}..{high}"
    return parse


def int_list(low: int, high: int | None = None, *, noun: str = "integers") -> Callable[[str], list[int]]:
    """An ``argparse`` type: comma-separated integers, each ``>= low`` (and ``<= high`` when given),
    such as ``--batch-sizes 1024,4096``; the message names the value and the range."""
    allowed = f"comma-separated {noun} >= {low}" if high is None else f"comma-separated {noun} {low}..{high}"

    def parse(text: str) -> list[int]:
        parts = [part.strip() for part in text.split(",")]
        try:
            values = [int(part) for part in parts]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a list of integers: use {allowed}") from None
        if any(v < low or (high is not None and v > high) for v in values):
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: use {allowed}")
        return values

    parse.__name__ = f"list of {noun}"
    return parse


players_arg = int_at_least(MIN_PLAYERS, MAX_PLAYERS, noun="a player count,")
"""An ``argparse`` type for ``--players``: a table's player count, 2..8 (the rule book's range)."""

seed_arg = int_at_least(0, noun="a seed, an integer")
"""An ``argparse`` type for ``--seed``: an integer ``>= 0`` (numpy's seeds cannot be negative)."""


def positive_float(high: float | None = None, *, why: str = "", low: float | None = None) -> Callable[[str], float]:
    """An ``argparse`` type: a finite number ``> 0`` (``>= low`` and ``<= high`` when given)."""
    allowed = (f"a number >= {low:g}" if low is not None else "a number > 0") + (
        f" and <= {high:g}" if high is not None else "") + why

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number: use {allowed}") from None
        if (not math.isfinite(value) or value <= 0 or (low is not None and value < low)
                or (high is not None and value > high)):
            raise argparse.ArgumentTypeError(f"{text} is not allowed: use {allowed}")
        return value

    parse.__name__ = "positive number"
    return parse


def decks_arg(text: str) -> int | str:
    """An ``argparse`` type for ``--decks``: ``auto`` or an integer from 1 to ``MAX_DECKS``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_DECKS:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: use 'auto' or a number of decks from 1 to "
                                         f"{MAX_DECKS}")
    return value


ROUNDS_HELP = "rounds played: 1-11 (all, the default), 11, 9-11 or 9,10,11"


def rounds_arg(text: str) -> tuple[int, ...]:
    """An ``argparse`` type for ``--rounds``: ``"1-11"``, ``"11"``, ``"9-11"``, ``"9,10,11"``, ``"1,3-5"``.

    The rounds must be 1..11 and strictly increasing (``Rules.rounds``); the message names the
    value and the forms allowed.
    """
    forms = "write rounds 1..11 in increasing order, such as 1-11, 11, 9-11 or 9,10,11"
    rounds: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi) if dash else int(lo)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a list of rounds: {forms}") from None
        if not 1 <= first <= last <= 11:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: {forms}")
        rounds += range(first, last + 1)
    if any(b <= a for a, b in zip(rounds, rounds[1:], strict=False)):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: the rounds must be strictly increasing ({forms})")
    return tuple(rounds)


def add_rules_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The rule options of RULES.md as flags, the same in every tool (``num_players`` comes from the seats).

    Returns the group, so that a tool can add its own rule-related flags to it.
    """
    group = parser.add_argument_group("rule options (docs/game.md, 'Options')")
    group.add_argument("--decks", type=decks_arg, default="auto",
                       help=f"'auto' (default) or a number of decks, 1..{MAX_DECKS}")
    group.add_argument("--aces", default="low", choices=ACES_OPTIONS, help="ace rule (default low)")
    group.add_argument("--rounds", type=rounds_arg, default=None, help=ROUNDS_HELP)
    group.add_argument("--discard-drawn-discard", action="store_true",
                       help="allow discarding the card just taken from the discard pile")
    group.add_argument("--max-turns-per-round", type=int_at_least(1), default=200,
                       help="turns after which a round with nobody out ends, >= 1 (default 200)")
    group.add_argument("--meld-needs-natural", action="store_true", help="every meld needs a non-wild card")
    return group


def rules_from_args(args: argparse.Namespace, num_players: int) -> Rules:
    """A :class:`Rules` from the flags of :func:`add_rules_arguments` (``ValueError`` if they do not fit)."""
    values: dict[str, Any] = {name: getattr(args, name) for name in option_names()[1:] if hasattr(args, name)}
    if values.get("rounds") is None:
        values.pop("rounds", None)
    return Rules(num_players=num_players, **values)


def significant(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits and no exponent: ``0.0123``, ``1.23``, ``12.3``, ``4567``.

    Times and rates span orders of magnitude (``ms/move`` of 0.004 for a table lookup, 300 for a
    search): a fixed number of decimals shows the small ones as ``0.00``.
    """
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    rounded = float(text)
    if rounded and math.floor(math.log10(abs(rounded))) > math.floor(math.log10(abs(value))) and decimals:
        text = f"{value:.{decimals - 1}f}"  # 0.09996 rounds up to 0.1000: one digit too many
    return text


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


def _unusable_name(target: Path) -> str | None:
    """Why this system cannot take ``target`` as a path at all (``None`` if it can): a NUL
    character, or a name or path too long. The checks after it look the path up, which would
    raise (``ValueError``, ``OSError``) instead of answering."""
    if "\0" in str(target):
        return "the name holds a NUL character (\\0), which no file name may hold"
    try:
        os.stat(target)
    except FileNotFoundError:
        pass  # (checked later: its folder must be writable)
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            return (f"the name is too long for this system: at most {_name_max(target)} bytes a "
                    f"name, and {_path_max()} for the whole path")
        if error.errno not in (errno.ENOTDIR, errno.EACCES, errno.ELOOP):
            return f"it cannot be looked up: {error.strerror or error}"
    return None


def _name_max(target: Path) -> int:
    """The longest name a file may have in ``target``'s nearest existing folder (255 where unknown)."""
    try:
        return os.pathconf(_nearest_existing(target.parent), "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _path_max() -> int:
    """The longest path this system takes (4,096 where unknown)."""
    try:
        return os.pathconf("/", "PC_PATH_MAX")
    except (OSError, ValueError):
        return 4096


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


EXISTS = "the file exists: give --overwrite to replace it, or another name"
"""What :func:`output_file_problem` says of an existing file unless ``overwrite`` (every command's ``--overwrite``)."""


def output_file_problem(path: str | os.PathLike, suffixes: Sequence[str] = (), *,
                        overwrite: bool = False) -> str | None:
    """Why a file cannot be written at ``path`` (``None`` if it can), leaving nothing behind.

    Refused: an existing folder (a plotting library would write ``DIR.png`` beside it), a name
    without one of ``suffixes`` (when given, lower case with the dot, such as ``(".gif",)``), an
    existing path that is not a regular file (such as ``/dev/null``: files are replaced
    atomically), a file without write permission, a folder above it that is a file or that has
    no write permission, and, unless ``overwrite`` (the command's ``--overwrite``), a file that
    exists (:data:`EXISTS`: nothing is replaced without ``--overwrite``). The existing file is
    reported last, so that ``--overwrite`` is the only remedy left when it is.
    """
    target = _absolute(path)
    unusable = _unusable_name(target)
    if unusable:
        return unusable
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
        return _folder_problem(target.parent) or (None if overwrite else EXISTS)
    return _folder_problem(_nearest_existing(target.parent))


def output_dir_problem(path: str | os.PathLike) -> str | None:
    """Why files cannot be written into the folder ``path`` (``None`` if they can), leaving nothing behind."""
    target = _absolute(path)
    unusable = _unusable_name(target)
    if unusable:
        return unusable
    if os.path.lexists(target) and not target.is_dir():
        return "it is a file, not a folder"
    return _folder_problem(_nearest_existing(target))
