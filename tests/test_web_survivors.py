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


def test_every_field_the_pages_read_is_the_replays(client):
    """Every view's table fields (known cards taken, discards, who went out, turns) against the replay,
    and each round's summary (its turns)."""
    from tt_env.ui.records import GameRecord, replay

    game = client.post("/api/watch/new", json={"seats": ["greedy-v0", "expert-v0", "greedy-v0"],
                                               "rules": {"rounds": [2, 3]}, "seed": 9}).json()
    wid = game["watch_id"]
    record = GameRecord.from_dict(client.get(f"/api/watch/{wid}/record").json())
    went_out_seen = taken_seen = 0
    for i, env in replay(record):
        state = env.game_state
        view = client.get(f"/api/watch/{wid}?step={i}&seat=all").json()
        table = view["table"]
        assert table["went_out"] == state.went_out and table["turn"] == state.turn
        for p, player in enumerate(table["players"]):
            assert player["taken"] == list(state.known_taken[p]) and player["discards"] == list(state.discards[p])
            taken_seen += bool(player["taken"])
        went_out_seen += state.went_out is not None
        if view["round_end"] is not None:
            finished = state.round_results[-1]
            assert view["round_end"]["turns"] == finished.turns and view["round_end"]["went_out"] == finished.went_out
    assert went_out_seen and taken_seen


def test_a_stock_draw_event_names_the_card_drawn():
    from collections import Counter

    import numpy as np

    from tt_env.engine.game import DRAW_STOCK, PHASE_DRAW, new_game
    from tt_env.engine.rules import Rules
    from tt_env.web.views import play_move

    state = new_game(Rules(num_players=3, rounds=[4]), np.random.default_rng(1))
    for _ in range(12):
        seat = state.current_player
        if state.phase == PHASE_DRAW:
            before = Counter(state.hands[seat])
            event, _ = play_move(state, DRAW_STOCK)
            assert event["kind"] == "draw_stock" and event["seat"] == seat
            assert Counter(state.hands[seat]) - before == Counter([event["card"]])
        else:
            play_move(state, 2 + state.hands[seat][0])


def test_the_hint_arrangement_follows_the_rules():
    from tt_env.engine.cards import rank_of
    from tt_env.engine.rules import Rules
    from tt_env.web.views import arrangement

    wild = 5
    hand = [c for c in range(52) if rank_of(c) == wild][:3]  # three wild cards: a meld only without natural
    assert arrangement(hand, wild, Rules(meld_needs_natural=False))["penalty"] == 0
    assert arrangement(hand, wild, Rules(meld_needs_natural=True))["penalty"] > 0
