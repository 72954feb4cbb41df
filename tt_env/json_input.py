"""Strict JSON in: untrusted text parsed with bounds, every failure a ``ValueError`` naming the input.

``json.loads`` alone raises ``TypeError`` for a non-text argument, ``RecursionError`` for deeply
nested arrays (``[[[[...`` a hundred thousand deep), accepts ``NaN`` and ``Infinity`` (not
JSON), turns ``1e999`` into an infinite float and takes as long as the text is. :func:`loads`
bounds the text's length before parsing, refuses the non-JSON constants and non-finite
numbers, and turns every parser failure into ``ValueError("<what>: ...")``. The structure of
the value is the caller's to check.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_CHARS = 16 * 2 ** 20
"""Default bound on a text's length (16 Mi characters): far above any file the package writes."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large for a float")
    return value


def loads(text: str | bytes | bytearray, what: str, *, max_chars: int = MAX_CHARS) -> Any:
    """The JSON value of ``text``; a ``ValueError`` whose message starts with ``what`` (say ``"game record
    'x.json'"``) for text that is not strict JSON, too long (over ``max_chars``), too deeply nested,
    or not text at all."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > 4 * max_chars:
            raise ValueError(f"{what} is too long: {len(text):,} bytes, more than the {max_chars:,} characters "
                             f"allowed")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{what} is not UTF-8 text ({exc})") from None
    if not isinstance(text, str):
        raise ValueError(f"{what} is not JSON text (str or bytes): got {type(text).__name__}")
    if len(text) > max_chars:
        raise ValueError(f"{what} is too long: {len(text):,} characters, more than the {max_chars:,} allowed")
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError(f"{what} is JSON nested too deeply to read") from None
    except ValueError as exc:  # JSONDecodeError, the constants, huge numbers (int digits limit too)
        raise ValueError(f"{what} is not valid JSON ({exc})") from None
