"""Strict JSON, out and in: the package's one JSON writer and its one JSON reader.

Out: every file the package writes parses in any JSON reader.

Python's ``json`` writes ``NaN`` and ``Infinity`` by default, which are not JSON (JavaScript,
``jq`` and most other readers refuse them). Here a non-finite float becomes ``null`` (the
value is unknown or undefined, e.g. an interval over one deal) and the encoder runs with
``allow_nan=False``, so nothing non-finite can slip through. Files are written atomically
(a temporary file beside the target, then ``os.replace``), so a reader never sees half of one.

JSON in: :func:`loads` and :func:`read_json` read text that may be damaged or hostile (a
checkpoint's sidecar, a resume state, an evaluation report, a game record, an OpenSpiel state)
and raise ``ValueError`` with one line naming the input for anything that is not strict JSON,
including what Python's reader raises or lets through otherwise: ``RecursionError`` for nesting
too deep, a ``ValueError`` for an integer of too many digits, ``UnicodeDecodeError`` for bytes
that are not UTF-8, ``TypeError`` for something that is not text, ``NaN`` and ``Infinity``
(not JSON) and ``1e999`` (an infinite float). :func:`loads` bounds the text's length before
parsing; :func:`read_json` also refuses a file larger than its limit before reading it. The
structure of the value is the caller's to check.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def to_strict(value: Any) -> Any:
    """``value`` with every non-finite float (also inside dicts, lists, tuples) replaced by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: to_strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_strict(v) for v in value]
    if hasattr(value, "item") and hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0:
        return to_strict(value.item())  # a numpy scalar
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """Strict JSON text of ``value`` (non-finite floats as ``null``); ``ValueError`` if nested too deeply."""
    try:
        return json.dumps(to_strict(value), allow_nan=False, **kwargs)
    except RecursionError:
        raise ValueError("the value is nested too deeply to be written as JSON") from None


MAX_JSON_BYTES = 1 << 24
"""Default size limit of :func:`read_json` (16 MiB; the package's own files are far smaller)."""


MAX_CHARS = 16 * 2 ** 20
"""Default bound on the length of a text :func:`loads` parses (16 Mi characters)."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large for a float")
    return value


def loads(data: str | bytes | bytearray, where: str, *, max_chars: int = MAX_CHARS) -> Any:
    """The JSON value of ``data``; a ``ValueError`` whose message starts with ``where`` (say
    ``"game record 'x.json'"``) for text that is not strict JSON (``NaN``, ``Infinity`` and
    non-finite numbers included), too long (over ``max_chars``), too deeply nested, not UTF-8,
    or not text at all."""
    if isinstance(data, (bytes, bytearray)):
        if len(data) > 4 * max_chars:
            raise ValueError(f"{where} is too long: {len(data):,} bytes, more than the {max_chars:,} characters "
                             f"allowed")
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{where} is not valid JSON: it is not UTF-8 text ({exc.reason} at byte "
                             f"{exc.start})") from None
    if not isinstance(data, str):
        raise ValueError(f"{where} is not JSON text (str or bytes): got {type(data).__name__}")
    if len(data) > max_chars:
        raise ValueError(f"{where} is too long: {len(data):,} characters, more than the {max_chars:,} allowed")
    try:
        return json.loads(data, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError(f"{where} is not usable JSON: it is nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, the constants, huge numbers, an integer of too many digits
        raise ValueError(f"{where} is not valid JSON ({str(exc).splitlines()[0]})") from None


def read_json(path: str | os.PathLike, where: str | None = None, limit: int = MAX_JSON_BYTES) -> Any:
    """The JSON value of the file ``path``: :func:`loads`, after refusing a file over ``limit`` bytes.

    ``OSError`` (missing, unreadable) is turned into ``ValueError`` too, so a caller catches one type.
    """
    path = Path(path)
    where = where or f"{str(path)!r}"
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise ValueError(f"{where} is a folder, not a JSON file")
        if not path.is_file():  # a FIFO or a device: reading it could block or never end
            raise ValueError(f"{where} is not a regular file")
        if size > limit:
            raise ValueError(f"{where} is {size} bytes, over the {limit} bytes allowed")
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{where} cannot be read ({exc.strerror or exc})") from None
    return loads(data, where)


@contextlib.contextmanager
def replaced_atomically(path: str | os.PathLike) -> Iterator[Path]:
    """The temporary file to write in place of ``path`` (beside it, ``NAME.tmp``): moved onto
    ``path`` when the block ends, removed if it raises. So a reader never sees half a file, and a
    failed write (a full disk, a crash in a writer) leaves the old file as it was."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_json(path: str | os.PathLike, value: Any, *, indent: int | None = 2) -> Path:
    """Write ``value`` as strict JSON to ``path`` atomically, making its folder; returns the path.

    Refuses a ``path`` that exists but is not a regular file (a folder, ``/dev/null``): the
    atomic rename would replace it.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        raise ValueError(f"cannot write JSON to {str(path)!r}: it exists and is not a regular file")
    path.parent.mkdir(parents=True, exist_ok=True)  # (the commands check the path can be made first)
    with replaced_atomically(path) as tmp:
        tmp.write_text(dumps(value, indent=indent) + "\n", encoding="utf-8")
    return path
