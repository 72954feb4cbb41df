"""Strict JSON out: every file the package writes parses in any JSON reader.

Python's ``json`` writes ``NaN`` and ``Infinity`` by default, which are not JSON (JavaScript,
``jq`` and most other readers refuse them). Here a non-finite float becomes ``null`` (the
value is unknown or undefined, e.g. an interval over one deal) and the encoder runs with
``allow_nan=False``, so nothing non-finite can slip through. Files are written atomically
(a temporary file beside the target, then ``os.replace``), so a reader never sees half of one.
"""

from __future__ import annotations

import json
import math
import os
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
    """Strict JSON text of ``value`` (non-finite floats as ``null``)."""
    return json.dumps(to_strict(value), allow_nan=False, **kwargs)


def write_json(path: str | os.PathLike, value: Any, *, indent: int | None = 2) -> Path:
    """Write ``value`` as strict JSON to ``path`` atomically; returns the path.

    Refuses a ``path`` that exists but is not a regular file (a folder, ``/dev/null``): the
    atomic rename would replace it.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        raise ValueError(f"cannot write JSON to {str(path)!r}: it exists and is not a regular file")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(value, indent=indent) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
