"""The browser app's JSON API through Starlette's TestClient: Watch, results files and evaluations."""

from __future__ import annotations

import os
import threading
import time

import pytest

if os.environ.get("CI"):
    import starlette  # noqa: F401  (CI installs the web extra: a missing one must fail, not skip)
else:
    pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.ui.records import GameRecord, replay  # noqa: E402
from tt_env.web.app import create_app  # noqa: E402

from web_api_fixtures import app, client, new_game, play_to_end  # noqa: E402,F401  (app, client: fixtures)


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


def test_an_evaluation_of_three_agents_is_the_command_s_every_order_included(client) -> None:
    """The app seats a deal as ``training.evaluate`` does (every order up to 4 agents): its report
    is the command's for the same agents, deals, seed and rules."""
    from training.evaluate import evaluate

    body = {"agents": ["expert-v0", "greedy-v0", "random-v0"], "deals": 2, "seed": 5, "rules": {"rounds": [1, 2]}}
    started = client.post("/api/evaluations", json=body)
    assert started.status_code == 202, started.text
    job = started.json()["job_id"]
    for _ in range(500):
        status = client.get(f"/api/evaluations/{job}").json()
        if status["status"] != "running":
            break
        time.sleep(0.02)
    report = status["report"]
    expected, _ = evaluate(body["agents"], 2, 5, Rules(num_players=3, rounds=(1, 2)), batch_size=1)
    assert (report["seating"], report["seatings"], report["games_played"]) == ("permutations", 6, 12)
    drop = ("seconds", "games_per_second")
    same = {k: v for k, v in report.items() if k not in drop}, {k: v for k, v in expected.items() if k not in drop}
    for side in same:
        side["agents"] = [{k: v for k, v in a.items() if k != "ms_per_move"} for a in side["agents"]]
    assert same[0] == same[1]
