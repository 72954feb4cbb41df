"""Games kept in memory, each owned by one browser session, with a cap.

A browser session is a random id in a cookie (``tt_session``, set by the app on the first
request). A game is found by its own random id *and* its owner's session: another browser
asking for it gets the same 404 as for a game that never existed. The store holds at most
``capacity`` games (Play and Watch together); adding one more evicts the one used least
recently, so a server left running never grows without bound.

The cookie holds nothing but the id, so it needs no signature (Starlette's ``SessionMiddleware``
signs data kept in the cookie, with one more dependency): an id is 24 random bytes, and one
that was never handed out matches no game.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict
from typing import Any, TypeVar

from .validate import RequestError, short_repr

SESSION_COOKIE = "tt_session"
_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{20,64}$")
T = TypeVar("T")


def new_session_id() -> str:
    """A fresh, unguessable session id."""
    return secrets.token_urlsafe(24)


def valid_session_id(value: str | None) -> bool:
    """Whether a cookie value has the form of a session id."""
    return value is not None and bool(_SESSION_ID.match(value))


class GameStore:
    """Objects by ``(session, id)``, the least recently used evicted past ``capacity``."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity={capacity} is not allowed: keep at least 1 game")
        self.capacity = capacity
        self._items: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def add(self, session: str, item: Any) -> str:
        """Keep ``item`` for ``session``; returns its new id."""
        key = secrets.token_urlsafe(12)
        with self._lock:
            self._items[key] = (session, item)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return key

    def get(self, session: str, key: str, kind: type[T]) -> T:
        """The ``kind`` object ``key`` of ``session``; 404 when there is none (never made, another
        session's, or evicted)."""
        with self._lock:
            entry = self._items.get(key)
            if entry is None or entry[0] != session or not isinstance(entry[1], kind):
                raise RequestError(f"no game {short_repr(key)} in this browser session: it may have been evicted (the "
                                   f"server keeps the {self.capacity} games used most recently); start a new one", 404)
            self._items.move_to_end(key)
            return entry[1]
