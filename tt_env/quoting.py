"""Values quoted in error messages, kept short: a message names what was given without repeating
a megabyte of it (a few hundred bytes of YAML anchors that expand to millions of entries, a huge
request field, a hostile game record).

One owner for every layer that quotes what it was given: the config checks
(``training.common.value_checks``), the browser app (``tt_env.web.validate``) and the game
records (``tt_env.ui.records``).
"""

from __future__ import annotations

import reprlib
from typing import Any


class _Bounded(reprlib.Repr):
    """``reprlib.Repr`` that bounds subclasses of list, tuple and dict too (it knows them by type name)."""

    def repr1(self, x: Any, level: int) -> str:
        for kind, name in ((list, "list"), (tuple, "tuple"), (dict, "dict")):
            if isinstance(x, kind):
                return getattr(self, f"repr_{name}")(x, level)
        return super().repr1(x, level)


_REPR = _Bounded()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxset = 3, 8, 8, 8, 8
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 200


def short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, built from a few levels and entries only
    (``reprlib``), so that a huge or deeply shared value costs no more than a small one."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def short_text(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was (a 4,000-digit number in a
    message is no help)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def short_repr(value: Any, limit: int = 120) -> str:
    """``repr(value)`` cut by :func:`short_text` (for values already bounded in size, such as a
    request's fields: :func:`short` bounds the work too)."""
    return short_text(repr(value), limit)
