"""Checks on what the browser sends: the server trusts nothing it did not compute itself.

Every request body is a JSON object read with a size cap (:func:`read_json`); each field is
taken with a checker that names the field and what is allowed (:func:`int_field`,
:func:`choice_field`, ...). A bad request raises :class:`RequestError`, which the app turns
into a ``4xx`` JSON answer ``{"error": message}`` without touching any game.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ..engine.game import max_actions
from ..engine.rules import MAX_PLAYERS, MIN_PLAYERS, Rules, option_names
from ..quoting import short_repr, short_text  # noqa: F401  (re-exported: every web module quotes with them)
from .config import MAX_GAME_MOVES

MAX_BODY_BYTES = 2_000_000
"""Largest request body read (a full 11-round record of 8 players is about 10 kB)."""
MAX_JSON_DEPTH = 64
"""Deepest nesting of objects and lists a request body may have (the app's own bodies nest 5 levels at
most: a record's ``rng_state``). Deeper JSON is refused before any of it is used, so that nothing
built from it later (a record echoed back, strict JSON written out) can run out of stack."""
TOO_DEEP = f"the request body is JSON nested too deeply: at most {MAX_JSON_DEPTH} levels of objects and lists are read"


class RequestError(Exception):
    """A request the server refuses: ``status`` (4xx) and a message for the person."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


async def read_json(request: Request, *, limit: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """The request body as a JSON object: 415 unless it is sent as ``application/json`` (a form
    from another site cannot send that without the browser asking first), 413 past ``limit``
    bytes, 400 for anything but a JSON object nested at most :data:`MAX_JSON_DEPTH` levels."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise RequestError(f"send the request body as JSON (Content-Type: application/json), not "
                           f"{short_repr(kind or 'nothing')}", 415)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestError(f"the request body is over {limit} bytes", 413)
    # parsed and walked in a worker thread: a large body would hold the event loop, and with it
    # every other request, for a second or more
    return await run_in_threadpool(parsed_body, bytes(body))


def parsed_body(body: bytes) -> dict[str, Any]:
    """The JSON object of a request ``body``, not nested past :data:`MAX_JSON_DEPTH`
    (:class:`RequestError` naming what is wrong)."""
    try:
        data = json.loads(body or b"null")
    except RecursionError:
        raise RequestError(TOO_DEEP) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, integers past Python's digit limit
        raise RequestError(f"the request body is not valid JSON: {short_text(str(exc))}") from None
    if not isinstance(data, dict):
        raise RequestError(f"the request body must be a JSON object, not {type(data).__name__}")
    if nested_deeper(data, MAX_JSON_DEPTH):
        raise RequestError(TOO_DEEP)
    return data


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` has objects or lists nested more than ``limit`` levels deep (the outermost is
    level 1). Walked level by level without recursion, so any depth that ``json`` could read is checked
    (a 2 MB body in about 0.1 s)."""
    level, depth = ([value] if isinstance(value, (dict, list)) else []), 1
    while level:
        if depth > limit:
            return True
        deeper = []
        for item in level:
            for child in (item.values() if isinstance(item, dict) else item):
                if isinstance(child, (dict, list)):
                    deeper.append(child)
        level, depth = deeper, depth + 1
    return False


def only_keys(body: Mapping[str, Any], allowed: Sequence[str], where: str = "the request") -> None:
    """Refuse keys outside ``allowed`` (a typo should not be ignored silently)."""
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise RequestError(f"{where} has unknown key(s) {unknown}: allowed are {list(allowed)}")


def is_int(value: Any) -> bool:
    """A JSON integer (``true`` and ``2.0`` are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def int_field(body: Mapping[str, Any], name: str, low: int, high: int | None = None, *,
              default: int | None = None, required: bool = False) -> int | None:
    """``body[name]`` as an int in ``low..high`` (``default`` when absent, unless ``required``)."""
    if name not in body or body[name] is None:
        if required:
            raise RequestError(f"{name!r} is missing: give an integer {_span(low, high)}")
        return default
    value = body[name]
    if not is_int(value) or value < low or (high is not None and value > high):
        raise RequestError(f"{name}={short_repr(value)} is not allowed: use an integer {_span(low, high)}")
    return value


def choice_field(body: Mapping[str, Any], name: str, choices: Sequence[str], *, default: str | None = None) -> str:
    """``body[name]`` as one of ``choices``."""
    value = body.get(name, default)
    if value not in choices:
        raise RequestError(f"{name}={short_repr(value)} is not allowed: use one of {list(choices)}")
    return value


def list_field(body: Mapping[str, Any], name: str, low: int, high: int) -> list[Any]:
    """``body[name]`` as a JSON list of ``low..high`` items."""
    value = body.get(name)
    if not isinstance(value, list) or not low <= len(value) <= high:
        raise RequestError(f"{name}={short_repr(value)} is not allowed: give a list of {low} to {high} items")
    return value


def object_field(body: Mapping[str, Any], name: str, *, required: bool = True) -> dict[str, Any]:
    """``body[name]`` as a JSON object (``{}`` when absent and not ``required``)."""
    if name not in body and not required:
        return {}
    value = body.get(name)
    if not isinstance(value, dict):
        raise RequestError(f"{name!r} must be a JSON object, not {json.dumps(value)[:60]}")
    return value


def rules_field(body: Mapping[str, Any], num_players: int) -> Rules:
    """The rule options under ``body["rules"]`` for ``num_players`` players, checked by :class:`Rules`."""
    if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise RequestError(f"{num_players} players is not allowed: use {MIN_PLAYERS} to {MAX_PLAYERS}")
    options = object_field(body, "rules", required=False)
    if "num_players" in options:
        raise RequestError("give the player count by the seats, not as rules.num_players")
    try:
        rules = Rules.from_dict({"num_players": num_players, **options})
    except (TypeError, ValueError) as exc:
        raise RequestError(f"bad rules: {short_text(str(exc))}") from None
    if max_actions(rules) > MAX_GAME_MOVES:
        turns = max(MAX_GAME_MOVES // (2 * len(rules.rounds)) - num_players + 1, 1)
        raise RequestError(f"bad rules: a game of these rules may take more than {MAX_GAME_MOVES} moves, the most "
                           f"this server plays: use max_turns_per_round 1..{turns} for {len(rules.rounds)} "
                           f"round(s) of {num_players} players")
    return rules


def rule_options() -> list[str]:
    """The rule options a request may set (every :class:`Rules` field but ``num_players``)."""
    return [name for name in option_names() if name != "num_players"]


def query_int(text: str, name: str, allowed: str) -> int:
    """A query parameter as an int: ASCII digits only (``int()`` also reads ``"١٢"`` and ``str.isdigit``
    passes ``"²"``), at most 18 of them."""
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise RequestError(f"{name}={short_repr(text)} is not allowed: use {allowed}")
    return int(text)


def _span(low: int, high: int | None) -> str:
    return f"{low}..{high}" if high is not None else f">= {low}"
