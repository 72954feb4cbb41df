"""Signals caught for a while: the base of the trainers' stop at a safe point
(``training.common.resume.StopSignals``) and of ``training.long_run``'s passing them on to its
trainer (``ChunkSignals``). Imports no torch, so ``long_run`` starts quickly."""

from __future__ import annotations

import signal
import threading
from typing import Any, TypeVar


class CaughtSignals:
    """A context manager: while active (in the main thread; elsewhere Python allows no handler), the
    signals of ``SIGNALS`` that :meth:`catches` go to the subclass's ``_handle(signum, frame)``, and
    the previous handlers come back on exit. ``signum`` is the first one caught."""

    SIGNALS: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    def catches(self, sig: int) -> bool:
        """Whether ``sig`` of ``SIGNALS`` is caught (all of them, unless a subclass says otherwise)."""
        return True

    def __enter__(self: _Caught) -> _Caught:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                if self.catches(sig):
                    self._previous[sig] = signal.signal(sig, self._handle)  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


_Caught = TypeVar("_Caught", bound=CaughtSignals)
