"""Tests written against one-line bugs of the browser app that a mutation audit found surviving
(issue 25): the content types it sends and accepts, and what a Watch view shows of another seat."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from tt_env.web.app import create_app  # noqa: E402


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(allowed_hosts=["testserver"], max_games=20))


def test_the_content_types_it_sends(client):
    assert client.get("/play").headers["content-type"].startswith("text/html")
    assert client.get("/api/options").headers["content-type"] == "application/json"
    assert "javascript" in client.get("/static/js/play.js").headers["content-type"]
    assert client.get("/static/css/app.css").headers["content-type"].startswith("text/css")
    missing = client.get("/nowhere")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/plain")
    api_missing = client.get("/api/nowhere")
    assert api_missing.status_code == 404 and api_missing.headers["content-type"] == "application/json"
    game = client.post("/api/watch/new", json={"seats": ["random-v0", "random-v0"], "rules": {"rounds": [1]}})
    record = client.get(f"/api/watch/{game.json()['watch_id']}/record")
    assert record.headers["content-type"] == "application/json"
    assert record.headers["content-disposition"] == 'attachment; filename="three-thirteen-game.json"'


@pytest.mark.parametrize("kind, status", [
    ("application/json", 201), ("application/json; charset=utf-8", 201), ("Application/JSON", 201),
    (" application/json ;charset=utf-8", 201), ("text/plain", 415), ("application/jsonx", 415),
    ("application/x-www-form-urlencoded", 415), ("multipart/form-data; boundary=x", 415), (None, 415),
])
def test_the_content_types_it_accepts(client, kind, status):
    body = b'{"seats": ["random-v0", "random-v0"], "rules": {"rounds": [1]}}'
    headers = {} if kind is None else {"content-type": kind}
    response = client.post("/api/watch/new", content=body, headers=headers)
    assert response.status_code == status, response.text
    if status == 415:
        assert "application/json" in response.json()["error"]


def test_a_watch_view_shows_one_seat_only_what_it_saw(client):
    game = client.post("/api/watch/new", json={"seats": ["greedy-v0", "random-v0", "expert-v0"],
                                               "rules": {"rounds": [2, 3]}, "seed": 4}).json()
    wid, steps = game["watch_id"], game["steps"]
    hidden_draws = own_draws = new_cards = 0
    for step in range(0, steps + 1, 3):
        full = client.get(f"/api/watch/{wid}?step={step}&seat=all").json()
        assert all(p["hand"] is not None for p in full["table"]["players"])
        for seat in range(3):
            view = client.get(f"/api/watch/{wid}?step={step}&seat={seat}").json()
            table = view["table"]
            assert table["viewer"] == seat
            for p in table["players"]:
                assert (p["hand"] is not None) == (p["seat"] == seat)
                assert p["hand_size"] == full["table"]["players"][p["seat"]]["hand_size"]
            mover = table["current_player"]
            if table["new_card"] is not None:
                assert seat == mover and table["phase"] == "discard"
                new_cards += 1
            elif seat == mover and table["phase"] == "discard" and not table["game_over"]:
                raise AssertionError(f"the mover does not see the card it just drew (step {step})")
            for event in view["recent"] + ([view["last"]] if view["last"] else []):
                if event["kind"] == "draw_stock":
                    if event["seat"] == seat:
                        assert event["card"] is not None
                        own_draws += 1
                    else:
                        assert event["card"] is None
                        hidden_draws += 1
    assert hidden_draws and own_draws and new_cards
