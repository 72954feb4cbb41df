"""The browser app's JSON API through Starlette's TestClient: the pages, the checks on every request, Play."""

from __future__ import annotations

import os

import numpy as np
import pytest

if os.environ.get("CI"):
    import starlette  # noqa: F401  (CI installs the web extra: a missing one must fail, not skip)
else:
    pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from tt_env.actions import DISCARD_BASE, DRAW_STOCK, TAKE_DISCARD  # noqa: E402
from tt_env.engine.game import legal_actions  # noqa: E402
from tt_env.engine.melds import discard_penalties, least_penalty  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.ui.records import GameRecord, replay  # noqa: E402
from tt_env.web.app import create_app  # noqa: E402
from tt_env.web.store import SESSION_COOKIE  # noqa: E402

from web_api_fixtures import ONE_ROUND, app, client, new_game, play_to_end  # noqa: E402,F401  (app, client: fixtures)


# ---------------------------------------------------------------------- pages and the checks around requests
def test_pages_static_files_cookie_and_headers(client) -> None:
    assert client.get("/", follow_redirects=False).headers["location"] == "/play"
    for name in ("play", "watch", "leaderboard"):
        page = client.get(f"/{name}")
        assert page.status_code == 200 and f'/static/js/{name}.js' in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert client.get(f"/static/js/{name}.js").status_code == 200
    for path in ("/static/js/cards.js", "/static/js/table.js", "/static/css/app.css", "/static/favicon.svg"):
        assert client.get(path).status_code == 200, path
    first = TestClient(client.app).get("/api/options")
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert first.headers["cache-control"] == "no-store"


def test_only_the_hosts_it_was_started_for(app) -> None:
    """DNS rebinding: a page of another site that resolves its name to 127.0.0.1 gets nothing."""
    assert TestClient(app).get("/api/options", headers={"host": "evil.example"}).status_code == 400
    local = TestClient(create_app(), base_url="http://127.0.0.1:8000")
    assert local.get("/api/options").status_code == 200
    assert local.get("/api/options", headers={"host": "evil.example:8000"}).status_code == 400


def test_bodies_are_checked(client) -> None:
    assert client.post("/api/play", content="seats=human", headers={"content-type": "application/x-www-form-urlencoded"}
                       ).status_code == 415
    as_json = {"content-type": "application/json"}
    assert client.post("/api/play", content="{not json", headers=as_json).status_code == 400
    assert client.post("/api/play", json=["human", "expert-v0"]).status_code == 400
    big = client.post("/api/results", content=b"[" + b"0," * 1_100_000 + b"0]", headers=as_json)
    assert big.status_code == 413
    unknown = client.post("/api/play", json={"seats": ["human", "expert-v0"], "sneaky": 1})
    assert unknown.status_code == 400 and "sneaky" in unknown.json()["error"]


def test_unknown_routes_and_methods_answer_json(client) -> None:
    missing = client.get("/api/nothing")
    assert missing.status_code == 404 and "error" in missing.json()
    assert client.get("/api/play").status_code == 405
    assert client.get("/no-such-page").status_code == 404


def test_options_lists_agents_rules_and_limits(client) -> None:
    options = client.get("/api/options").json()
    names = [a["name"] for a in options["agents"]]
    assert {"random-v0", "greedy-v0", "expert-v0", "ismcts-v0"} <= set(names)
    assert options["rules"]["defaults"] == Rules().to_dict()
    assert (options["min_players"], options["max_players"]) == (2, 8)


def test_checkpoints_only_from_the_command_line(tmp_path) -> None:
    pytest.importorskip("torch")
    from models.agent_loader import CHECKPOINT_DIR

    path = str(CHECKPOINT_DIR / "ppo-2p-v0.pt")
    plain = TestClient(create_app(allowed_hosts=["testserver"]))
    refused = plain.post("/api/play", json={"seats": ["human", path], "rules": ONE_ROUND})
    assert refused.status_code == 400 and "unknown agent" in refused.json()["error"]
    given = TestClient(create_app(checkpoints=[path], allowed_hosts=["testserver"]))
    info = next(a for a in given.get("/api/options").json()["agents"] if a["name"] == path)
    assert info == {"name": path, "kind": "checkpoint", "players": 2, "description": "checkpoint ppo-2p-v0.pt"}
    assert given.post("/api/play", json={"seats": ["human", path], "rules": ONE_ROUND}).status_code == 201
    three = given.post("/api/play", json={"seats": ["human", path, "expert-v0"], "rules": ONE_ROUND})
    assert three.status_code == 400 and "2-player" in three.json()["error"]
    with pytest.raises(ValueError, match="no such file"):
        create_app(checkpoints=[str(tmp_path / "none.pt")])


# ---------------------------------------------------------------------- play
@pytest.mark.parametrize("body, words", [
    ({"seats": ["expert-v0", "greedy-v0"]}, "exactly one seat 'human'"),
    ({"seats": ["human", "human"]}, "exactly one seat"),
    ({"seats": ["human"]}, "2 to 8"),
    ({"seats": ["human"] + ["expert-v0"] * 8}, "2 to 8"),
    ({"seats": ["human", "nobody-v9"]}, "unknown agent 'nobody-v9'"),
    ({"seats": ["human", "/etc/passwd"]}, "unknown agent"),
    ({"seats": ["human", "expert-v0"], "rules": {"rounds": [0]}}, "rounds"),
    ({"seats": ["human", "expert-v0"], "rules": {"aces": "sometimes"}}, "aces"),
    ({"seats": ["human", "expert-v0"], "rules": {"jokers": True}}, "jokers"),
    ({"seats": ["human", "expert-v0"], "rules": {"num_players": 3}}, "num_players"),
    ({"seats": ["human", "expert-v0"], "seed": -1}, "seed"),
    ({"seats": ["human", "expert-v0"], "seed": "7"}, "seed"),
])
def test_new_game_refuses_bad_requests(client, body, words) -> None:
    response = client.post("/api/play", json=body)
    assert response.status_code == 400
    assert words in response.json()["error"]


def test_the_person_sees_only_what_their_seat_may_see(client) -> None:
    view = new_game(client, seats=("expert-v0", "human", "greedy-v0"), seed=11)
    table = view["table"]
    assert view["seat"] == 1 and table["players"][1]["hand"] is not None
    assert table["players"][0]["hand"] is None and table["players"][2]["hand"] is None
    assert all(p["hand_size"] == 3 for p in table["players"])
    assert view["your_turn"] == (table["current_player"] == 1)
    for event in view["events"]:  # the agents moved first: their draws from the stock stay hidden
        if event["kind"] == "draw_stock":
            assert event["card"] is None


def test_a_whole_game_replays_to_the_scores_shown(client) -> None:
    game = new_game(client, rules={"rounds": [1, 2]}, seed=5)
    assert game["seed"] is None  # the seed gives the deal away: not shown before the end
    final = play_to_end(client, game["game_id"], choose=lambda legal: legal[-1])
    assert final["seed"] == 5
    record = client.get(f"/api/play/{game['game_id']}/record")
    assert record.headers["content-disposition"].startswith("attachment")
    data = record.json()
    assert data["seats"] == ["human", "expert-v0"]
    states = [env.game_state for _, env in replay(GameRecord.from_dict(data))]
    assert states[-1].game_over and states[-1].scores == final["table"]["scores"]["totals"] == data["final_scores"]
    rounds = final["table"]["scores"]["rounds"]
    assert [r["points"] for r in rounds] == [r.points for r in states[-1].round_results]
    end = final["round_end"]
    assert end["round"] == 2 and [h["total"] for h in end["hands"]] == final["table"]["scores"]["totals"]
    assert final["table"]["scores"]["winners"] == [p for p, s in enumerate(data["final_scores"])
                                                   if s == min(data["final_scores"])]


def test_refused_moves_leave_the_game_as_it_was(client) -> None:
    game = new_game(client, seed=8)
    gid = game["game_id"]
    before = client.get(f"/api/play/{gid}").json()
    assert before["your_turn"]
    held = set(before["table"]["players"][0]["hand"])
    not_held = next(c for c in range(52) if c not in held)
    step = before["step"]
    for body, status, words in [
        ({"action": 2 + not_held, "step": step}, 400, "not legal"),
        ({"action": 60, "step": step}, 400, "not legal"),
        ({"action": True, "step": step}, 400, "not legal"),
        ({"action": "0", "step": step}, 400, "not legal"),
        ({"action": 0, "step": step + 1}, 409, "step="),
        ({"action": 0, "step": step - 1 if step else -1}, 409, "step="),
        ({"action": 0}, 400, "step"),
    ]:
        response = client.post(f"/api/play/{gid}/action", json=body)
        assert response.status_code == status, (body, response.text)
        assert words in response.json()["error"]
    after = client.get(f"/api/play/{gid}").json()
    assert after == before
    # a double click: the same move sent twice at one position is played once
    assert client.post(f"/api/play/{gid}/action", json={"action": 0, "step": step}).status_code == 200
    again = client.post(f"/api/play/{gid}/action", json={"action": 0, "step": step})
    assert again.status_code == 409
    assert client.post(f"/api/play/{gid}/next-round", json={}).status_code == 409  # no round has ended


def test_a_round_pauses_until_the_person_goes_on(client) -> None:
    game = new_game(client, rules={"rounds": [1, 2]}, seed=2)
    gid = game["game_id"]
    for _ in range(500):
        view = client.get(f"/api/play/{gid}").json()
        if view["round_end"] is not None:
            break
        client.post(f"/api/play/{gid}/action", json={"action": view["legal"][0], "step": view["step"]})
    assert view["round_end"]["round"] == 1 and view["legal"] == [] and not view["your_turn"]
    hands = view["round_end"]["hands"]
    for hand in hands:  # every hand face up, in melds, with its points from the engine
        cards = [c for meld in hand["melds"] for c in meld] + hand["unmelded"]
        assert len(cards) == 3
        assert hand["points"] == (0 if hand["went_out"] else least_penalty(cards, 3))
    refused = client.post(f"/api/play/{gid}/action", json={"action": 0, "step": view["step"]})
    assert refused.status_code == 409 and "round 1 is over" in refused.json()["error"]
    going = client.post(f"/api/play/{gid}/next-round", json={}).json()
    assert going["round_end"] is None and going["table"]["round"] == 2


def test_the_hint_is_the_solver_s(client) -> None:
    game = new_game(client, rules={"rounds": [6]}, seed=4)
    gid = game["game_id"]
    view = client.get(f"/api/play/{gid}").json()
    hand = view["table"]["players"][0]["hand"]
    hint = client.get(f"/api/play/{gid}/hint").json()
    assert hint["penalty"] == least_penalty(hand, 8)
    assert sorted([c for m in hint["melds"] for c in m] + hint["unmelded"]) == sorted(hand)
    top = view["table"]["discard_top"]
    take = hint["take_discard"]
    assert take["take"] == top
    grown = hand + [top]
    allowed = [(p, c) for c, p in discard_penalties(grown, 8) if c != top or grown.count(top) == len(grown)]
    assert take["then"]["penalty"] == min(allowed)[0]
    view = client.post(f"/api/play/{gid}/action", json={"action": 0, "step": view["step"]}).json()
    hand = view["table"]["players"][0]["hand"]
    hint = client.get(f"/api/play/{gid}/hint").json()
    legal_cards = {a - 2 for a in view["legal"]}
    best = min((p, c) for c, p in discard_penalties(hand, 8) if c in legal_cards)
    assert (hint["discard"]["penalty"], hint["discard"]["card"]) == best
    assert hint["discard"]["after"]["penalty"] == best[0]


def test_games_belong_to_their_browser_session(app) -> None:
    mine, theirs = TestClient(app), TestClient(app)
    gid = new_game(mine)["game_id"]
    for method, path, body in [("get", f"/api/play/{gid}", None), ("get", f"/api/play/{gid}/hint", None),
                               ("get", f"/api/play/{gid}/record", None),
                               ("post", f"/api/play/{gid}/action", {"action": 0, "step": 0}),
                               ("post", f"/api/play/{gid}/next-round", {})]:
        response = getattr(theirs, method)(path, **({"json": body} if body is not None else {}))
        assert response.status_code == 404, path
    assert mine.get(f"/api/play/{gid}").status_code == 200
    forged = TestClient(app, cookies={SESSION_COOKIE: "x"})  # a malformed id gets a new session, not a match
    assert forged.get(f"/api/play/{gid}").status_code == 404


def test_the_store_keeps_at_most_max_games_dropping_the_least_recently_used() -> None:
    client = TestClient(create_app(allowed_hosts=["testserver"], max_games=2))
    first, second = (new_game(client, seed=s)["game_id"] for s in range(2))
    client.get(f"/api/play/{first}")  # used again: the least recently used is now the second
    third = new_game(client, seed=2)["game_id"]
    dropped = client.get(f"/api/play/{second}")
    assert dropped.status_code == 404 and "evicted" in dropped.json()["error"]
    assert client.get(f"/api/play/{first}").status_code == 200 and client.get(f"/api/play/{third}").status_code == 200


def test_the_hint_offers_only_legal_discards() -> None:
    """Taking KH to 5C 5D 5S: discarding KH again would go out, but the rules forbid it this turn."""
    from tt_env.engine.cards import parse_card, parse_cards
    from tt_env.engine.game import PHASE_DISCARD, new_game as engine_game
    from tt_env.web.views import hint_view

    state = engine_game(Rules(num_players=2, rounds=(1,)), np.random.default_rng(0))
    seat, king = state.current_player, parse_card("KH")
    state.hands[seat] = parse_cards("5C 5D 5S")
    state.discard_pile.append(king)
    before = hint_view(state, seat)["take_discard"]
    assert before["take"] == king and before["then"]["card"] != king and before["then"]["penalty"] == 20
    state.hands[seat].append(state.discard_pile.pop())
    state.phase, state.taken_this_turn, state.known_taken[seat] = PHASE_DISCARD, king, [king]
    after = hint_view(state, seat)["discard"]
    assert after["card"] != king and after["penalty"] == 20 and after["after"]["penalty"] == 20


def test_an_agent_that_fails_stops_the_game_with_its_message(app) -> None:
    from tt_env.web.catalog import AgentCatalog

    class Broken:
        name = "broken"

        def act(self, observation, action_mask, rng):
            return 99

    catalog = AgentCatalog()
    catalog.make = lambda name, rules: Broken()
    client = TestClient(create_app(allowed_hosts=["testserver"], catalog=catalog), raise_server_exceptions=False)
    for seed in range(10):  # a game where the person moves first, so that the agent fails after their move
        response = client.post("/api/play", json={"seats": ["expert-v0", "human"], "rules": ONE_ROUND, "seed": seed})
        if response.status_code == 201:
            break
        assert response.status_code == 500 and "illegal action 99" in response.json()["error"]
    gid, view = response.json()["game_id"], response.json()
    for _ in range(2):
        response = client.post(f"/api/play/{gid}/action", json={"action": view["legal"][0], "step": view["step"]})
        if response.status_code != 200:
            break
        view = response.json()
    assert response.status_code == 500 and "chose the illegal action 99" in response.json()["error"]
    stopped = client.get(f"/api/play/{gid}").json()
    assert stopped["failure"] and stopped["legal"] == []
    refused = client.post(f"/api/play/{gid}/action", json={"action": 0, "step": stopped["step"]})
    assert refused.status_code == 409 and "the game stopped" in refused.json()["error"]


def test_engine_legality_is_what_is_offered(client) -> None:
    """The legal moves the page offers are the engine's, at every turn of a game (the position rebuilt from
    the moves the page was shown: the record is not given before the end, as it holds the seed)."""
    from tt_env.engine.game import apply, new_game as engine_game

    game = new_game(client, rules={"rounds": [2]}, seed=13)
    kinds = {"draw_stock": lambda e: DRAW_STOCK, "take_discard": lambda e: TAKE_DISCARD,
             "discard": lambda e: DISCARD_BASE + e["card"]}
    turns = 0
    while True:
        view = client.get(f"/api/play/{game['game_id']}").json()
        if not view["your_turn"]:
            break
        state = engine_game(Rules(num_players=2, rounds=(2,)), np.random.default_rng(13))
        for event in view["events"]:
            apply(state, kinds[event["kind"]](event))
        assert view["legal"] == legal_actions(state)
        turns += 1
        move = {"action": view["legal"][turns % len(view["legal"])], "step": view["step"]}
        assert client.post(f"/api/play/{game['game_id']}/action", json=move).status_code == 200
    assert view["table"]["game_over"] and turns > 4
