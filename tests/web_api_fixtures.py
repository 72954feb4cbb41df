"""The web app and its TestClient for the JSON API tests (``test_web_api.py``, ``test_web_watch_and_results.py``,
``test_web_security.py``, ``test_web_work_limits.py``).

Import it after the test module's ``pytest.importorskip("starlette")``; ``app`` and ``client`` are fixtures.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.testclient import TestClient

from tt_env.web.app import create_app
from tt_env.web.store import SESSION_COOKIE

ONE_ROUND = {"rounds": [1]}
SEED = 918273645
"""A given seed, easy to look for in any answer (``person_first_game`` starts there)."""


@pytest.fixture(scope="module")
def app():
    return create_app(allowed_hosts=["testserver"], max_games=50)


@pytest.fixture()
def client(app) -> TestClient:
    return TestClient(app)


def new_game(client: TestClient, seats=("human", "expert-v0"), rules=ONE_ROUND, seed=3) -> dict:
    response = client.post("/api/play", json={"seats": list(seats), "rules": rules, "seed": seed})
    assert response.status_code == 201, response.text
    return response.json()


def play_to_end(client: TestClient, game_id: str, choose=lambda legal: legal[0]) -> dict:
    """Play the person's moves (``choose``) and go on after each round until the game is over."""
    for _ in range(2000):
        view = client.get(f"/api/play/{game_id}").json()
        if view["table"]["game_over"]:
            return view
        if view["round_end"] is not None:
            assert client.post(f"/api/play/{game_id}/next-round", json={}).status_code == 200
            continue
        assert view["your_turn"] and view["legal"], view
        move = {"action": choose(view["legal"]), "step": view["step"]}
        response = client.post(f"/api/play/{game_id}/action", json=move)
        assert response.status_code == 200, response.text
    raise AssertionError("the game did not end")


def person_first_game(client: TestClient, seats=("human", "expert-v0"), rules=None) -> dict:
    """A new game whose first move is the person's, so that their move makes the agents move."""
    for seed in range(SEED, SEED + 40):
        view = client.post("/api/play", json={"seats": list(seats), "rules": rules or {"rounds": [3]}, "seed": seed})
        assert view.status_code == 201, view.text
        if view.json()["step"] == 0:
            return view.json()
    raise AssertionError("no game where the person moves first")


def call_then_disconnect(app, path: str, body: dict, cookie: str | None = None) -> list[dict]:
    """The ASGI ``app`` called as a browser (of session ``cookie``, if given) that POSTs ``body`` to
    ``path`` and then goes away; the messages the app sent."""
    sent: list[dict] = []
    data, state = json.dumps(body).encode(), {"body_sent": False}

    async def receive():
        if not state["body_sent"]:
            state["body_sent"] = True
            return {"type": "http.request", "body": data, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    headers = [(b"host", b"testserver"), (b"content-type", b"application/json")]
    if cookie is not None:
        headers.append((b"cookie", f"{SESSION_COOKIE}={cookie}".encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    return sent
