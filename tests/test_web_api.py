"""The browser app's JSON API through Starlette's TestClient: every endpoint, its checks, and that a
refused request leaves the game as it was."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

if os.environ.get("CI"):
    import starlette  # noqa: F401  (CI installs the web extra: a missing one must fail, not skip)
else:
    pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from tt_env.engine.game import legal_actions  # noqa: E402
from tt_env.engine.melds import discard_penalties, least_penalty  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.ui.records import GameRecord, replay  # noqa: E402
from tt_env.web.app import create_app  # noqa: E402
from tt_env.web.store import SESSION_COOKIE  # noqa: E402

ONE_ROUND = {"rounds": [1]}


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


# ---------------------------------------------------------------------- watch
@pytest.fixture(scope="module")
def short_record(app) -> dict:
    client = TestClient(app)
    game = new_game(client, seats=("greedy-v0", "human", "random-v0"), rules={"rounds": [1, 2]}, seed=21)
    play_to_end(client, game["game_id"])
    return client.get(f"/api/play/{game['game_id']}/record").json()


def test_every_watched_position_is_the_replay_s(client, short_record) -> None:
    opened = client.post("/api/watch/record", json={"record": short_record})
    assert opened.status_code == 201
    wid, steps = opened.json()["watch_id"], opened.json()["steps"]
    assert steps == len(short_record["actions"])
    rounds_before = 0
    for i, env in replay(GameRecord.from_dict(short_record)):
        state = env.game_state
        view = client.get(f"/api/watch/{wid}?step={i}&seat=all").json()
        table = view["table"]
        assert [sorted(p["hand"]) for p in table["players"]] == [sorted(h) for h in state.hands], i
        assert table["scores"]["totals"] == state.scores and table["stock"] == len(state.stock)
        assert table["discard_top"] == (state.discard_pile[-1] if state.discard_pile else None)
        assert (view["last"] or {}).get("step") == (i or None)
        ended = len(state.round_results) > rounds_before
        assert (view["round_end"] is not None) == ended, i
        if ended:
            assert view["round_end"]["round"] == state.round_results[-1].round_number
        rounds_before = len(state.round_results)
    assert client.get(f"/api/watch/{wid}/record").json()["actions"] == short_record["actions"]


def test_what_one_seat_saw(client, short_record) -> None:
    wid = client.post("/api/watch/record", json={"record": short_record}).json()["watch_id"]
    view = client.get(f"/api/watch/{wid}?step=4&seat=2").json()
    hands = [p["hand"] for p in view["table"]["players"]]
    assert hands[2] is not None and hands[0] is None and hands[1] is None
    for event in view["recent"]:
        if event["kind"] == "draw_stock" and event["seat"] != 2:
            assert event["card"] is None
    full = client.get(f"/api/watch/{wid}?step=4&seat=all").json()
    assert all(p["hand"] is not None for p in full["table"]["players"])
    for query, words in [("step=-1", "step"), ("step=9999", "0.."), ("step=x", "step"), ("seat=7", "seat=7"),
                         ("seat=me", "seat"), ("turn=3", "unknown")]:
        response = client.get(f"/api/watch/{wid}?{query}")
        assert response.status_code == 400 and words in response.json()["error"], query


def test_a_record_that_does_not_replay_is_refused(client, short_record) -> None:
    broken = dict(short_record, actions=list(short_record["actions"]))
    broken["actions"][1] = 0 if broken["actions"][1] != 0 else 1  # a draw where a discard is due
    response = client.post("/api/watch/record", json={"record": broken})
    assert response.status_code == 400 and "step 2" in response.json()["error"]
    wrong_total = dict(short_record, final_scores=[s + 1 for s in short_record["final_scores"]])
    assert "final_scores" in client.post("/api/watch/record", json={"record": wrong_total}).json()["error"]
    for bad in [{"format_version": 1}, dict(short_record, seats=["a"]), dict(short_record, rules={"aces": 3})]:
        response = client.post("/api/watch/record", json={"record": bad})
        assert response.status_code == 400, bad
    assert client.post("/api/watch/record", json={"record": "game.json"}).status_code == 400


def test_agents_play_a_new_game_to_watch(client) -> None:
    response = client.post("/api/watch/new", json={"seats": ["expert-v0", "greedy-v0", "random-v0"],
                                                   "rules": {"rounds": [1, 2]}, "seed": 9})
    assert response.status_code == 201
    wid = response.json()["watch_id"]
    record = client.get(f"/api/watch/{wid}/record").json()
    assert record["seats"] == ["expert-v0", "greedy-v0", "random-v0"] and record["seed"] == 9
    end = client.get(f"/api/watch/{wid}?step={len(record['actions'])}").json()
    assert end["table"]["game_over"] and end["table"]["scores"]["totals"] == record["final_scores"]
    again = client.post("/api/watch/new", json={"seats": ["expert-v0", "greedy-v0", "random-v0"],
                                                "rules": {"rounds": [1, 2]}, "seed": 9})
    assert client.get(f"/api/watch/{again.json()['watch_id']}/record").json()["actions"] == record["actions"]
    refused = client.post("/api/watch/new", json={"seats": ["human", "expert-v0"]})
    assert refused.status_code == 400 and "unknown agent 'human'" in refused.json()["error"]


# ---------------------------------------------------------------------- results and evaluations
LEADERBOARD = {"format": "three-thirteen-leaderboard/1", "seed": 0, "reference": "expert-v0", "rows": [
    {"agent": "greedy-v0", "players": 2, "deals": 10, "games": 20, "score_diff": 19.5, "ci95": [15.0, 24.0],
     "win_rate": 0.3, "win_rate_ci95": [0.1, 0.5], "ms_per_move": 0.05, "seconds": 1.0},
    {"agent": "ppo-2p-v1", "players": 2, "deals": 10, "games": 20, "score_diff": -1.5, "ci95": [-3.0, 0.1],
     "win_rate": 0.52, "win_rate_ci95": [0.3, 0.7], "ms_per_move": 0.5, "seconds": 2.0},
    {"agent": "greedy-v0", "players": 3, "deals": 1, "games": 3, "score_diff": 20.0, "ci95": None,
     "win_rate": 0.0, "win_rate_ci95": [0.0, 0.6], "ms_per_move": 0.05, "seconds": 1.0}]}


def test_leaderboard_files_become_tables(client) -> None:
    view = client.post("/api/results", json=LEADERBOARD).json()
    assert view["kind"] == "leaderboard" and view["reference"] == "expert-v0"
    assert [t["players"] for t in view["tables"]] == [2, 3]
    assert [r["agent"] for r in view["tables"][0]["rows"]] == ["ppo-2p-v1", "greedy-v0"]  # best first
    assert view["tables"][1]["rows"][0]["ci95"] is None


def test_results_files_of_the_real_tools_are_read() -> None:
    from training.evaluate import evaluate
    from training.leaderboard import FORMAT, versus_reference

    client = TestClient(create_app(allowed_hosts=["testserver"]))
    report, _ = evaluate(["expert-v0", "greedy-v0"], 3, 0, Rules(num_players=2, rounds=(1, 2)))
    view = client.post("/api/results", json=report).json()
    assert view["kind"] == "evaluation" and view["games_played"] == 6
    assert {a["name"] for a in view["agents"]} == {"expert-v0", "greedy-v0"} and len(view["pairwise"]) == 2
    row = versus_reference("random-v0", 2, 1, 0, 1)
    board = client.post("/api/results", json={"format": FORMAT, "seed": 0, "reference": "expert-v0", "rows": [row]})
    assert board.status_code == 200 and board.json()["tables"][0]["rows"][0]["agent"] == "random-v0"


@pytest.mark.parametrize("change, words", [
    ({"format": "three-thirteen-game"}, "not a results file"),
    ({"rows": []}, "'rows'"),
    ({"rows": [dict(LEADERBOARD["rows"][0], score_diff="big")]}, "rows[0] has score_diff='big'"),
    ({"rows": [dict(LEADERBOARD["rows"][0], ci95=[2.0, 1.0])]}, "rows[0] has ci95"),
    ({"rows": [dict(LEADERBOARD["rows"][0], players=1)]}, "players=1"),
])
def test_bad_results_files_are_named(client, change, words) -> None:
    response = client.post("/api/results", json={**LEADERBOARD, **change})
    assert response.status_code == 400 and words in response.json()["error"]


def test_an_evaluation_runs_in_the_background_one_at_a_time() -> None:
    """Progress while it runs, a 409 for a second one, another session's 404, then the report."""
    from training.evaluate import evaluate

    release, calls = threading.Event(), []

    def slow_evaluate(specs, games, seed, rules, **kwargs):
        calls.append(kwargs)
        report, deals = evaluate(specs, games, seed, rules, workers=1)
        for k in range(games):
            kwargs["on_deal"](deals[k])
            if k == 1:
                release.wait(10)
        return report, deals

    app = create_app(allowed_hosts=["testserver"], evaluate=slow_evaluate)
    client, other = TestClient(app), TestClient(app)
    body = {"agents": ["expert-v0", "greedy-v0"], "deals": 4, "seed": 3, "rules": {"rounds": [1]}}
    started = client.post("/api/evaluations", json=body)
    assert started.status_code == 202
    job = started.json()["job_id"]
    for _ in range(200):
        status = client.get(f"/api/evaluations/{job}").json()
        if status["done"] == 2:
            break
        time.sleep(0.02)
    assert status["status"] == "running" and (status["done"], status["total"]) == (2, 4) and status["report"] is None
    busy = other.post("/api/evaluations", json=body)
    assert busy.status_code == 409 and "already running" in busy.json()["error"]
    assert other.get(f"/api/evaluations/{job}").status_code == 404
    release.set()
    for _ in range(200):
        status = client.get(f"/api/evaluations/{job}").json()
        if status["status"] != "running":
            break
        time.sleep(0.02)
    assert status["status"] == "done" and status["done"] == 4
    assert status["report"]["games"] == 4 and status["report"]["seed"] == 3
    assert [a["name"] for a in status["view"]["agents"]] != []
    assert calls[0]["workers"] == 1
    assert client.post(f"/api/evaluations/{job}/stop", json={}).status_code == 409  # done: nothing to stop
    release.clear()
    again = client.post("/api/evaluations", json=body)  # free again
    assert again.status_code == 202
    second = again.json()["job_id"]
    for _ in range(200):
        if client.get(f"/api/evaluations/{second}").json()["done"] == 2:
            break
        time.sleep(0.02)
    assert other.post(f"/api/evaluations/{second}/stop", json={}).status_code == 404
    assert client.post(f"/api/evaluations/{second}/stop", json={}).json()["status"] == "running"
    release.set()
    for _ in range(200):
        status = client.get(f"/api/evaluations/{second}").json()
        if status["status"] != "running":
            break
        time.sleep(0.02)
    assert status["status"] == "stopped" and status["done"] == 3 and status["report"] is None
    assert client.post("/api/evaluations", json=body).status_code == 202  # a stopped one frees the runner


def test_the_real_evaluator_reports_its_progress() -> None:
    client = TestClient(create_app(allowed_hosts=["testserver"]))
    job = client.post("/api/evaluations", json={"agents": ["expert-v0", "random-v0"], "deals": 3,
                                                "rules": {"rounds": [1]}}).json()["job_id"]
    for _ in range(500):
        status = client.get(f"/api/evaluations/{job}").json()
        if status["status"] != "running":
            break
        time.sleep(0.02)
    assert status["status"] == "done" and status["done"] == 3 and status["report"]["games_played"] == 6
    expert = next(a for a in status["view"]["agents"] if a["name"] == "expert-v0")
    assert expert["mean_score"] == next(a for a in status["report"]["agents"] if a["name"] == "expert-v0")["mean_score"]


@pytest.mark.parametrize("body, words", [
    ({"agents": ["expert-v0"]}, "2 to 6"),
    ({"agents": ["expert-v0", "greedy-v0"], "deals": 10_000}, "deals"),
    ({"agents": ["expert-v0", "greedy-v0"], "deals": 0}, "deals"),
    ({"agents": ["expert-v0", "cheater-v1"]}, "unknown agent"),
    ({"agents": ["expert-v0", "greedy-v0"], "rules": {"rounds": [12]}}, "rounds"),
    ({"agents": ["expert-v0", "greedy-v0"], "workers": 8}, "workers"),
])
def test_evaluation_requests_are_checked(client, body, words) -> None:
    response = client.post("/api/evaluations", json=body)
    assert response.status_code == 400 and words in response.json()["error"]


def test_unknown_evaluation_is_404(client) -> None:
    assert client.get("/api/evaluations/nope").status_code == 404


def test_engine_legality_is_what_is_offered(client) -> None:
    """The legal moves the page offers are the engine's, at every turn of a game."""
    from tt_env.engine.game import apply, new_game as engine_game

    game = new_game(client, rules={"rounds": [2]}, seed=13)
    state = engine_game(Rules(num_players=2, rounds=(2,)), np.random.default_rng(13))
    view = client.get(f"/api/play/{game['game_id']}").json()
    actions = client.get(f"/api/play/{game['game_id']}/record").json()["actions"]
    for a in actions:
        apply(state, a)
    assert view["legal"] == legal_actions(state)
