"""The Starlette application: three pages, a JSON API, and the checks around every request.

:func:`create_app` builds it. The pages (``/play``, ``/watch``, ``/leaderboard``) are static
HTML and plain JavaScript served from the package; everything they show comes from the JSON
API below (``tt_env/web/__init__.py`` lists it). Around every request: a host check
(Starlette's ``TrustedHostMiddleware``: only the names the server was started for, which
stops DNS rebinding), a browser-session cookie (:mod:`.store`), and headers that keep the
pages to their own scripts (a Content-Security-Policy of ``'self'``). A refused request gets
``{"error": message}`` with a 4xx status and changes nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..engine.rules import ACES_OPTIONS, ALL_ROUNDS, MAX_DECKS, MAX_PLAYERS, MIN_PLAYERS, Rules
from ..jsonio import to_strict
from ..quoting import short_text
from .catalog import AgentCatalog
from .config import DEFAULT_MAX_GAMES, DEFAULT_MAX_JOBS, LOOPBACK_HOSTS, MAX_EVAL_SECONDS, MAX_WORK_SECONDS
from .play_game import HUMAN, AgentFailed, PlayGame
from .results import MAX_DEALS, Evaluate, EvaluationRunner, check_work, results_view
from .store import SESSION_COOKIE, GameStore, new_session_id, valid_session_id
from .validate import (RequestError, int_field, list_field, object_field, only_keys, query_int, read_json, rule_options,
                       rules_field, short_repr)
from .watch_game import WatchGame, play_agents_game, record_from_upload
from .work import StopSignal, WorkLimit

STATIC = Path(__file__).resolve().parent / "static"
PAGES = ("play", "watch", "leaderboard")
MAX_SEED = 2**63 - 1
HIDDEN_SEED_BOUND = 2**53
"""A game without a given seed gets one of ``0 .. 2**53 - 1`` from ``secrets``: too many to search from a
player's own hand (a seed below a million was found in seconds), and exact as a JavaScript number."""
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                               "frame-ancestors 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


class BrowserSession:
    """ASGI middleware: a session id from the ``tt_session`` cookie (a new one set when absent or
    malformed) in ``request.state.session``, and the security headers on every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = Request(scope).cookies.get(SESSION_COOKIE)
        fresh = not valid_session_id(session)
        if fresh:
            session = new_session_id()
        scope.setdefault("state", {})["session"] = session
        api = scope["path"].startswith("/api/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if fresh:
                    headers.append("set-cookie", f"{SESSION_COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict")
                for key, value in SECURITY_HEADERS.items():
                    headers[key] = value
                if api:
                    headers["cache-control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def json_answer(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    """Strict JSON (no NaN) of ``data``."""
    return JSONResponse(to_strict(data), status_code=status, headers=headers)


def new_seed() -> int:
    """A seed nobody can find from what a player sees (:data:`HIDDEN_SEED_BOUND`)."""
    return secrets.randbelow(HIDDEN_SEED_BOUND)


def create_app(*, checkpoints: Sequence[str] = (), max_games: int = DEFAULT_MAX_GAMES,
               allowed_hosts: Sequence[str] = LOOPBACK_HOSTS, evaluate: Evaluate | None = None,
               catalog: AgentCatalog | None = None, max_jobs: int = DEFAULT_MAX_JOBS,
               max_work_seconds: float = MAX_WORK_SECONDS, max_eval_seconds: float = MAX_EVAL_SECONDS) -> Starlette:
    """The app. ``checkpoints``: the only checkpoint files it may seat; ``max_games``: games kept in
    memory (Play and Watch together, the least recently used evicted); ``allowed_hosts``: the names
    the browser may reach it by; ``evaluate``: an evaluator to use instead of the app's own (the games
    and report of ``training.evaluate.evaluate``, stopped at any move; see :class:`EvaluationRunner`);
    ``max_jobs``: agent computations at once (new Watch games, the agents' moves of Play games);
    ``max_work_seconds``: the time one of them may take; ``max_eval_seconds``: the time an evaluation may run."""
    catalog = catalog or AgentCatalog(checkpoints)
    store = GameStore(max_games)
    runner = EvaluationRunner(evaluate, catalog.make, max_eval_seconds)
    work = WorkLimit(max_jobs, max_work_seconds)

    def session(request: Request) -> str:
        return request.state.session

    # ------------------------------------------------------------------ pages
    async def home(request: Request) -> Response:
        return RedirectResponse("/play", status_code=307)

    def page(name: str):
        async def endpoint(request: Request) -> Response:
            return FileResponse(STATIC / f"{name}.html", media_type="text/html")
        return endpoint

    # ------------------------------------------------------------------ options
    async def options(request: Request) -> Response:
        return json_answer({
            "agents": [a.to_dict() for a in catalog.infos()], "min_players": MIN_PLAYERS, "max_players": MAX_PLAYERS,
            "rules": {"defaults": Rules().to_dict(), "options": rule_options(), "aces": list(ACES_OPTIONS),
                      "rounds": list(ALL_ROUNDS), "max_decks": MAX_DECKS},
            "max_eval_deals": MAX_DEALS, "max_eval_seconds": max_eval_seconds, "max_games": max_games,
        })

    # ------------------------------------------------------------------ play
    async def play_new(request: Request) -> Response:
        body = await read_json(request)
        only_keys(body, ("seats", "rules", "seed"))
        seats = list_field(body, "seats", MIN_PLAYERS, MAX_PLAYERS)
        if seats.count(HUMAN) != 1:
            raise RequestError(f"seats={short_repr(seats)}: name exactly one seat {HUMAN!r} (you) and an agent at "
                               f"every other")
        rules = rules_field(body, len(seats))
        seed = int_field(body, "seed", 0, MAX_SEED, default=None)
        seed = new_seed() if seed is None else seed
        seat = seats.index(HUMAN)
        names = {p: catalog.check(name, rules.num_players) for p, name in enumerate(seats) if p != seat}

        def start(stop: StopSignal) -> tuple[str, dict]:
            agents = {p: catalog.make(name, rules) for p, name in names.items()}
            game = PlayGame(rules, seat, agents, names, seed)
            game.start(stop)
            return store.add(session(request), game), game.view()

        key, view = await work.run(request, start)
        return json_answer({"game_id": key, **view}, status=201)

    def play_game(request: Request) -> PlayGame:
        return store.get(session(request), request.path_params["game_id"], PlayGame)

    async def play_view(request: Request) -> Response:
        game = play_game(request)
        since = query_int(request.query_params.get("since", "0"), "since", "a move number >= 0")
        return json_answer(await _locked(game, game.view, since))

    async def play_action(request: Request) -> Response:
        game = play_game(request)
        body = await read_json(request)
        only_keys(body, ("action", "step"))
        if "action" not in body or "step" not in body:
            raise RequestError("give the move as {\"action\": id, \"step\": moves made so far}")

        def act(stop: StopSignal) -> dict:
            before = len(game.actions)
            game.act(body["action"], body["step"], stop)
            return game.view(before)

        return json_answer(await work.run(request, lambda stop: _with_lock(game, act, stop)))

    async def play_next_round(request: Request) -> Response:
        game = play_game(request)
        only_keys(await read_json(request), ())

        def go_on(stop: StopSignal) -> dict:
            before = len(game.actions)
            game.next_round(stop)
            return game.view(before)

        return json_answer(await work.run(request, lambda stop: _with_lock(game, go_on, stop)))

    async def play_hint(request: Request) -> Response:
        game = play_game(request)
        return json_answer(await _locked(game, game.hint))

    async def play_record(request: Request) -> Response:
        game = play_game(request)
        record = await _locked(game, game.record)
        return _record_download(record.to_dict(), "three-thirteen-game.json")

    # ------------------------------------------------------------------ watch
    async def watch_record(request: Request) -> Response:
        body = await read_json(request)
        only_keys(body, ("record",))
        record = record_from_upload(object_field(body, "record"))
        game = await run_in_threadpool(WatchGame, record)
        return json_answer({"watch_id": store.add(session(request), game), **game.view(0, None)}, status=201)

    async def watch_new(request: Request) -> Response:
        body = await read_json(request)
        only_keys(body, ("seats", "rules", "seed"))
        seats = list_field(body, "seats", MIN_PLAYERS, MAX_PLAYERS)
        rules = rules_field(body, len(seats))
        seed = int_field(body, "seed", 0, MAX_SEED, default=None)
        seed = new_seed() if seed is None else seed
        names = [catalog.check(name, rules.num_players) for name in seats]

        def play(stop: StopSignal) -> WatchGame:
            agents = [catalog.make(name, rules) for name in names]
            return WatchGame(play_agents_game(agents, names, rules, seed, stop))

        game = await work.run(request, play)
        return json_answer({"watch_id": store.add(session(request), game), **game.view(0, None)}, status=201)

    async def watch_view(request: Request) -> Response:
        game = store.get(session(request), request.path_params["watch_id"], WatchGame)
        query = request.query_params
        unknown = sorted(set(query) - {"step", "seat"})
        if unknown:
            raise RequestError(f"unknown query parameter(s) {unknown}: use step and seat")
        step = query_int(query.get("step", "0"), "step", f"a position 0..{game.steps}")
        seat_text = query.get("seat", "all")
        viewer = None if seat_text == "all" else query_int(seat_text, "seat", "all or a seat number")
        return json_answer(await run_in_threadpool(game.view, step, viewer))  # a WatchGame never changes

    async def watch_download(request: Request) -> Response:
        game = store.get(session(request), request.path_params["watch_id"], WatchGame)
        return _record_download(game.record.to_dict(), "three-thirteen-game.json")

    # ------------------------------------------------------------------ leaderboard
    async def results(request: Request) -> Response:
        return json_answer(results_view(await read_json(request)))

    async def evaluation_start(request: Request) -> Response:
        body = await read_json(request)
        only_keys(body, ("agents", "deals", "seed", "rules"))
        specs = list_field(body, "agents", 2, 6)
        rules = rules_field(body, len(specs))
        deals = int_field(body, "deals", 1, MAX_DEALS, default=20)
        seed = int_field(body, "seed", 0, MAX_SEED, default=0)
        for name in specs:
            catalog.check(name, rules.num_players)
        check_work(specs, deals, rules, catalog.is_slow)
        await run_in_threadpool(lambda: [catalog.make(name, rules) for name in set(specs)])
        key = runner.start(session(request), specs, deals, seed, rules)
        return json_answer({"job_id": key, **runner.get(session(request), key).to_dict()}, status=202)

    async def evaluation_status(request: Request) -> Response:
        return json_answer(runner.get(session(request), request.path_params["job_id"]).to_dict())

    async def evaluation_stop(request: Request) -> Response:
        only_keys(await read_json(request), ())
        return json_answer(runner.stop(session(request), request.path_params["job_id"]).to_dict())

    # ------------------------------------------------------------------ errors
    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestError)
        return json_answer({"error": exc.message}, exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if not request.url.path.startswith("/api/"):
            return Response(f"{exc.status_code} {exc.detail}\n", exc.status_code, media_type="text/plain")
        return json_answer({"error": f"{exc.detail}: {request.method} {short_text(request.url.path)}"},
                           exc.status_code)

    async def agent_failed(request: Request, exc: Exception) -> Response:
        return json_answer({"error": str(exc)}, 500)

    routes = [
        Route("/", home),
        *[Route(f"/{name}", page(name)) for name in PAGES],
        Route("/api/options", options),
        Route("/api/play", play_new, methods=["POST"]),
        Route("/api/play/{game_id}", play_view),
        Route("/api/play/{game_id}/action", play_action, methods=["POST"]),
        Route("/api/play/{game_id}/next-round", play_next_round, methods=["POST"]),
        Route("/api/play/{game_id}/hint", play_hint),
        Route("/api/play/{game_id}/record", play_record),
        Route("/api/watch/record", watch_record, methods=["POST"]),
        Route("/api/watch/new", watch_new, methods=["POST"]),
        Route("/api/watch/{watch_id}", watch_view),
        Route("/api/watch/{watch_id}/record", watch_download),
        Route("/api/results", results, methods=["POST"]),
        Route("/api/evaluations", evaluation_start, methods=["POST"]),
        Route("/api/evaluations/{job_id}", evaluation_status),
        Route("/api/evaluations/{job_id}/stop", evaluation_stop, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)), Middleware(BrowserSession)]
    handlers = {RequestError: refused, HTTPException: http_error, AgentFailed: agent_failed}
    app = Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)
    app.state.catalog, app.state.store, app.state.runner, app.state.work = catalog, store, runner, work
    return app


async def _locked(game: PlayGame, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a worker thread holding ``game``'s lock (:func:`_with_lock`); the event loop stays free."""
    return await run_in_threadpool(_with_lock, game, fn, *args)


def _with_lock(game: PlayGame, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` holding ``game``'s lock: one request at a time per game, and a 409 at once for another
    one while it is held (nothing waits on a game, so a slow game holds no more than its own thread)."""
    if not game.lock.acquire(blocking=False):
        raise RequestError("a move is being played in this game: try again when it is done", 409)
    try:
        return fn(*args)
    finally:
        game.lock.release()


def _record_download(data: dict, filename: str) -> Response:
    return json_answer(data, headers={"content-disposition": f'attachment; filename="{filename}"'})
