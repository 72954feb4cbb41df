"""The browser app against a player who wants more than their seat shows, or the server's time (issue 31):
no seed or other hand during a game, loopback binds that answer only to loopback names, bounded JSON
nesting, agents' moves of Play games and evaluations inside the work limit, and short error messages."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.web.app import create_app  # noqa: E402
from tt_env.web.catalog import AgentCatalog  # noqa: E402
from tt_env.web.cli import allowed_hosts  # noqa: E402
from tt_env.web.config import MAX_SEARCH_WORK  # noqa: E402
from tt_env.web.results import check_work, run_evaluation  # noqa: E402
from tt_env.web.store import SESSION_COOKIE  # noqa: E402
from tt_env.web.validate import MAX_JSON_DEPTH, RequestError, choice_field, list_field, nested_deeper  # noqa: E402

from web_api_fixtures import play_to_end  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ONE_ROUND = {"rounds": [1]}
SEED = 918273645  # a given seed, easy to look for in any answer


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(allowed_hosts=["testserver"], max_games=20), raise_server_exceptions=False)


def person_first_game(client: TestClient, seats=("human", "expert-v0"), rules=None) -> dict:
    """A new game whose first move is the person's, so that their move makes the agents move."""
    for seed in range(SEED, SEED + 40):
        view = client.post("/api/play", json={"seats": list(seats), "rules": rules or {"rounds": [3]}, "seed": seed})
        assert view.status_code == 201, view.text
        if view.json()["step"] == 0:
            return view.json()
    raise AssertionError("no game where the person moves first")


# ---------------------------------------------------------------------- 1. the seed and the deal stay hidden
def test_the_record_is_given_only_once_the_game_is_over(client) -> None:
    game = client.post("/api/play", json={"seats": ["human", "expert-v0"], "rules": {"rounds": [1, 2]},
                                          "seed": SEED}).json()
    gid = game["game_id"]
    early = client.get(f"/api/play/{gid}/record")
    assert early.status_code == 409, early.text
    assert str(SEED) not in early.text and "seed" not in early.json()
    assert "once the game is over" in early.json()["error"]
    play_to_end(client, gid)
    record = client.get(f"/api/play/{gid}/record")
    assert record.status_code == 200 and record.json()["seed"] == SEED and record.json()["final_scores"]


def test_no_answer_during_a_game_gives_the_deal_away(client) -> None:
    game = client.post("/api/play", json={"seats": ["expert-v0", "human", "greedy-v0"], "rules": {"rounds": [5, 6]},
                                          "seed": SEED}).json()
    gid = game["game_id"]
    answers = [json.dumps(game)]
    for _ in range(12):
        view = client.get(f"/api/play/{gid}")
        answers += [view.text, client.get(f"/api/play/{gid}/hint").text, client.get(f"/api/play/{gid}/record").text]
        view = view.json()
        if view["round_end"] is not None or not view["your_turn"]:
            break
        table = view["table"]
        assert [p["hand"] is not None for p in table["players"]] == [False, True, False]
        assert isinstance(table["stock"], int) and view["seed"] is None
        client.post(f"/api/play/{gid}/action", json={"action": view["legal"][0], "step": view["step"]})
    assert all(str(SEED) not in text and "rng" not in text for text in answers)
    for path in (f"/api/watch/{gid}", f"/api/watch/{gid}?step=0&seat=all", f"/api/watch/{gid}/record"):
        assert client.get(path).status_code == 404, path  # a Play game is not watchable


def test_the_play_page_offers_the_record_only_at_the_end() -> None:
    script = (ROOT / "tt_env/web/static/js/play.js").read_text()
    assert "Save the game so far" not in script and "gameOver(view) ? recordLink() : null" in script


# ---------------------------------------------------------------------- 2. loopback binds answer loopback names only
@pytest.mark.parametrize("host, base_url", [("::1", "http://[::1]:8000"), ("127.0.0.2", "http://127.0.0.2:8000"),
                                            ("0:0:0:0:0:0:0:1", "http://[0:0:0:0:0:0:0:1]:8000"),
                                            ("LocalHost", "http://localhost:8000")])
def test_any_loopback_bind_answers_only_loopback_names(host, base_url) -> None:
    names = allowed_hosts(host)
    assert "*" not in names and {"localhost", "127.0.0.1", "[::1]"} <= set(names)
    client = TestClient(create_app(allowed_hosts=names), base_url=base_url)
    assert client.get("/api/options").status_code == 200
    for name in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000", "localhost"):
        assert client.get("/api/options", headers={"host": name}).status_code == 200, name
    for name in ("attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example", "localhost.attacker.example"):
        assert client.get("/api/options", headers={"host": name}).status_code == 400, name
    assert allowed_hosts("0.0.0.0") == ["*"] and allowed_hosts("192.168.1.5") == ["*"]


def test_a_server_on_127_0_0_2_refuses_another_site_s_name() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "tt_env.web", "--host", "127.0.0.2", "--port", "0", "--no-browser"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("Three Thirteen is at http://127.0.0.2:"), (line, proc.poll())
        url = line.split()[4] + "api/options"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
        forged = urllib.request.Request(url, headers={"Host": "attacker.example"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(forged, timeout=10)
        assert refused.value.code == 400
    finally:
        proc.terminate()
        proc.wait(20)
    assert "anyone who can reach" not in proc.stderr.read()  # loopback: no warning needed


# ---------------------------------------------------------------------- 3. bounded nesting, checked seed/rules/rng_state
EVALUATION = {"format": "three-thirteen-evaluation/1", "games": 2, "seatings": 2, "games_played": 4, "seed": 0,
              "rules": Rules(num_players=2).to_dict(),
              "agents": [{"name": n, "mean_score": 40.0, "mean_score_ci95": [30.0, 50.0], "win_rate": 0.5,
                          "win_rate_ci95": [0.1, 0.9], "ms_per_move": 0.1} for n in ("a", "b")],
              "pairwise": [{"a": "a", "b": "b", "mean_score_diff": 0.0, "ci95": [-1.0, 1.0]}]}


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("key", ["seed", "rules"])
@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH, 485, 700, 980])
def test_deeply_nested_results_get_a_400(client, key, levels) -> None:
    body = json.dumps({**EVALUATION, key: "HOLE"}).replace('"HOLE"', deep(levels))
    response = client.post("/api/results", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text[:300]
    assert "\n" not in response.json()["error"] and len(response.json()["error"]) < 300


def test_nesting_is_counted_exactly() -> None:
    assert not nested_deeper({"a": json.loads(deep(MAX_JSON_DEPTH - 1))}, MAX_JSON_DEPTH)
    assert nested_deeper({"a": json.loads(deep(MAX_JSON_DEPTH))}, MAX_JSON_DEPTH)
    assert not nested_deeper({"a": 1, "b": [{"c": "[[[["}]}, 3)


@pytest.mark.parametrize("change, words", [
    ({"seed": "7"}, "seed='7'"), ({"seed": -1}, "seed=-1"), ({"seed": [1, [2]]}, "seed="),
    ({"rules": {"jokers": [[1]]}}, "bad rules"), ({"rules": {"aces": "sometimes"}}, "bad rules"),
    ({"rules": [1, 2]}, "rules=[1, 2]"),
])
def test_a_results_file_s_seed_and_rules_are_checked(client, change, words) -> None:
    response = client.post("/api/results", json={**EVALUATION, **change})
    assert response.status_code == 400 and words in response.json()["error"], response.text


def test_a_results_file_s_rules_are_shown_as_the_engine_reads_them(client) -> None:
    view = client.post("/api/results", json={**EVALUATION, "rules": {"num_players": 2, "rounds": [1, 2]}}).json()
    assert view["rules"] == Rules(num_players=2, rounds=(1, 2)).to_dict() and view["seed"] == 0
    assert client.post("/api/results", json={**EVALUATION, "rules": None, "seed": None}).json()["rules"] is None


def record_with_rng_state(client: TestClient) -> dict:
    watch = client.post("/api/watch/new", json={"seats": ["random-v0", "random-v0"], "rules": ONE_ROUND, "seed": 5})
    record = client.get(f"/api/watch/{watch.json()['watch_id']}/record").json()
    return {**record, "seed": None, "rng_state": np.random.default_rng(5).bit_generator.state}


def test_a_record_s_rng_state_must_be_numpy_s_and_nothing_more(client) -> None:
    record = record_with_rng_state(client)
    ok = client.post("/api/watch/record", json={"record": record})
    assert ok.status_code == 201, ok.text
    assert client.get(f"/api/watch/{ok.json()['watch_id']}/record").json()["rng_state"] == record["rng_state"]
    state = record["rng_state"]
    for bad in [{**state, "extra": json.loads(deep(40))}, {**state, "state": {**state["state"], "x": [[1]]}},
                {**state, "bit_generator": "MT19937"}, {**state, "uinteger": 2**40}, {**state, "state": [1, 2]},
                "PCG64", {**state, "has_uint32": 2}]:
        response = client.post("/api/watch/record", json={"record": {**record, "rng_state": bad}})
        assert response.status_code == 400, (bad, response.text[:200])
        assert "rng_state" in response.json()["error"] and "PCG64" in response.json()["error"]


def test_a_deep_rng_state_is_refused_and_nothing_is_kept(client) -> None:
    record = record_with_rng_state(client)
    body = json.dumps({"record": {**record, "rng_state": {**record["rng_state"], "extra": "HOLE"}}})
    response = client.post("/api/watch/record", content=body.replace('"HOLE"', deep(900)),
                           headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text[:300]


# ---------------------------------------------------------------------- 4. Play moves inside the work limit
class GatedAgent:
    """The first legal move; once ``catalog.armed`` is set, each move waits ``catalog.pause`` seconds or
    until ``catalog.gate`` opens."""

    def __init__(self, catalog: GatedCatalog) -> None:
        self.catalog = catalog

    def act(self, observation, action_mask, rng) -> int:
        catalog = self.catalog
        if catalog.armed.is_set():
            catalog.thinking.set()
            catalog.gate.wait(catalog.pause)
        catalog.moves += 1
        return int(np.flatnonzero(action_mask)[0])


class GatedCatalog(AgentCatalog):
    def __init__(self, pause: float = 10.0) -> None:
        super().__init__()
        self.armed, self.gate, self.thinking = threading.Event(), threading.Event(), threading.Event()
        self.pause, self.moves = pause, 0

    def check(self, name, num_players):
        if name != "gated":
            raise RequestError(f"unknown agent {name!r}: choose one of ['gated']")
        return name

    def make(self, name, rules):
        return GatedAgent(self)


def gated_app(**kwargs) -> tuple[GatedCatalog, TestClient]:
    catalog = GatedCatalog(kwargs.pop("pause", 10.0))
    app = create_app(allowed_hosts=["testserver"], catalog=catalog, **kwargs)
    return catalog, TestClient(app, raise_server_exceptions=False)


def test_a_game_whose_agents_think_answers_409_at_once() -> None:
    catalog, client = gated_app()
    game = person_first_game(client, seats=("human", "gated"))
    gid, answers = game["game_id"], []
    catalog.armed.set()
    mover = threading.Thread(target=lambda: answers.append(client.post(
        f"/api/play/{gid}/action", json={"action": 0, "step": 0})))
    try:
        # a draw leaves the person to discard: then the agent thinks
        mover.start()
        mover.join(10)
        view = answers.pop().json()
        discard = {"action": view["legal"][0], "step": view["step"]}
        mover = threading.Thread(target=lambda: answers.append(client.post(f"/api/play/{gid}/action", json=discard)))
        mover.start()
        assert catalog.thinking.wait(10)
        for path in (f"/api/play/{gid}", f"/api/play/{gid}/hint", f"/api/play/{gid}/record"):
            started = time.monotonic()
            busy = client.get(path)
            assert busy.status_code == 409 and "a move is being played" in busy.json()["error"], path
            assert time.monotonic() - started < 2
        again = client.post(f"/api/play/{gid}/action", json=discard)
        assert again.status_code == 409
    finally:
        catalog.gate.set()
        mover.join(30)
    assert answers[0].status_code == 200, answers[0].text
    assert client.get(f"/api/play/{gid}").status_code == 200


def test_play_moves_count_against_the_work_cap() -> None:
    catalog, client = gated_app(max_jobs=1)
    game = person_first_game(client, seats=("human", "gated"))
    gid = game["game_id"]
    catalog.armed.set()
    watcher = threading.Thread(target=lambda: client.post("/api/watch/new", json={"seats": ["gated", "gated"],
                                                                                   "rules": ONE_ROUND}))
    watcher.start()
    try:
        assert catalog.thinking.wait(10)
        busy = client.post(f"/api/play/{gid}/action", json={"action": 0, "step": 0})
        assert busy.status_code == 503 and "the server is busy" in busy.json()["error"], busy.text
        assert client.get(f"/api/play/{gid}").json()["step"] == 0  # the move was not played
    finally:
        catalog.gate.set()
        watcher.join(30)
    assert client.post(f"/api/play/{gid}/action", json={"action": 0, "step": 0}).status_code == 200


def test_play_moves_have_a_time_limit_and_a_stopped_game_says_why() -> None:
    catalog, client = gated_app(max_work_seconds=0.3, pause=0.4)
    game = person_first_game(client, seats=("human", "gated"))
    gid = game["game_id"]
    view = client.post(f"/api/play/{gid}/action", json={"action": 0, "step": 0}).json()
    catalog.armed.set()
    started = time.monotonic()
    late = client.post(f"/api/play/{gid}/action", json={"action": view["legal"][0], "step": view["step"]})
    assert late.status_code == 503 and "over 0.3 s" in late.json()["error"], late.text
    assert time.monotonic() - started < 3
    stopped = client.get(f"/api/play/{gid}").json()
    assert "over 0.3 s" in stopped["failure"] and stopped["legal"] == [] and not stopped["your_turn"]
    refused = client.post(f"/api/play/{gid}/action", json={"action": 0, "step": stopped["step"]})
    assert refused.status_code == 409 and "the game stopped" in refused.json()["error"]
    assert client.get(f"/api/play/{gid}/record").status_code == 200  # it cannot be played on: the record is given


def test_a_new_game_s_opening_moves_stop_on_time() -> None:
    catalog, client = gated_app(max_work_seconds=0.3, pause=0.2)
    catalog.armed.set()
    started = time.monotonic()
    body = {"seats": ["gated"] * 7 + ["human"], "rules": {"rounds": [3]}, "seed": 7}  # seat 0 deals first: 7 turns
    response = client.post("/api/play", json=body)
    assert response.status_code == 503 and "over 0.3 s" in response.json()["error"], response.text
    assert time.monotonic() - started < 2.5 and catalog.moves < 10


def call_then_disconnect(app, path: str, body: dict, cookie: str) -> list[dict]:
    """``app`` called by a browser (session ``cookie``) that sends ``body`` and goes away."""
    sent: list[dict] = []
    data, state = json.dumps(body).encode(), {"body_sent": False}

    async def receive():
        if not state["body_sent"]:
            state["body_sent"] = True
            return {"type": "http.request", "body": data, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"),
                         (b"cookie", f"{SESSION_COOKIE}={cookie}".encode())],
             "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    asyncio.run(app(scope, receive, send))
    return sent


def test_play_moves_whose_browser_has_gone_are_stopped() -> None:
    catalog, client = gated_app(pause=0.2)
    game = person_first_game(client, seats=("gated", "human", "gated", "gated"))
    gid = game["game_id"]
    view = client.post(f"/api/play/{gid}/action", json={"action": 0, "step": game["step"]}).json()
    catalog.armed.set()
    started = time.monotonic()
    sent = call_then_disconnect(client.app, f"/api/play/{gid}/action",
                                {"action": view["legal"][0], "step": view["step"]}, client.cookies[SESSION_COOKIE])
    assert sent[0]["status"] == 503 and time.monotonic() - started < 2  # 6 agent moves take 1.2 s
    moves = catalog.moves
    time.sleep(0.5)
    assert catalog.moves <= moves + 1
    assert "browser closed" in client.get(f"/api/play/{gid}").json()["failure"]


# ---------------------------------------------------------------------- 5. evaluations: bounded, timed, stoppable
def test_an_evaluation_of_many_search_agents_is_refused(client) -> None:
    response = client.post("/api/evaluations", json={"agents": ["ismcts-v0"] * 6, "deals": 200})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert "6 search agent(s) x 200 deals x 6 seatings x 11 rounds" in error and str(MAX_SEARCH_WORK) in error
    assert "even one deal is too much" in error
    two = client.post("/api/evaluations", json={"agents": ["ismcts-v0", "expert-v0"], "deals": 20})
    assert two.status_code == 400 and "at most 9 deal(s)" in two.json()["error"]


def test_the_search_work_bound() -> None:
    slow = ("ismcts-v0", "ismcts-v1").__contains__
    check_work(["expert-v0"] * 6, 200, Rules(num_players=6), slow)  # scripted agents: the deal count bounds them
    check_work(["ismcts-v0", "expert-v0"], 100, Rules(num_players=2, rounds=(1,)), slow)  # 200: at the bound
    with pytest.raises(RequestError, match="at most 100 deal"):
        check_work(["ismcts-v0", "expert-v0"], 101, Rules(num_players=2, rounds=(1,)), slow)
    check_work(["ismcts-v1"] * 3, 2, Rules(num_players=3), slow)  # 198
    with pytest.raises(RequestError, match="at most 2 deal"):
        check_work(["ismcts-v1"] * 3, 3, Rules(num_players=3), slow)


def wait_for(client: TestClient, job: str, seconds: float = 20) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = client.get(f"/api/evaluations/{job}").json()
        if status["status"] != "running":
            return status
        time.sleep(0.02)
    raise AssertionError(f"the evaluation still runs after {seconds} s: {status}")


def test_an_evaluation_is_stopped_at_its_next_move() -> None:
    catalog, client = gated_app(pause=0.05)
    catalog.armed.set()
    job = client.post("/api/evaluations", json={"agents": ["gated", "gated"], "deals": 3, "rules": {"rounds": [9]}})
    assert job.status_code == 202, job.text
    assert catalog.thinking.wait(10)
    time.sleep(0.2)
    stopped_at = time.monotonic()
    assert client.post(f"/api/evaluations/{job.json()['job_id']}/stop", json={}).status_code == 200
    status = wait_for(client, job.json()["job_id"])
    assert status["status"] == "stopped" and status["done"] == 0  # a deal takes many seconds here
    assert time.monotonic() - stopped_at < 1


def test_an_evaluation_has_a_time_limit() -> None:
    catalog, client = gated_app(pause=0.05, max_eval_seconds=0.5)
    catalog.armed.set()
    started = time.monotonic()
    job = client.post("/api/evaluations", json={"agents": ["gated", "gated"], "deals": 3, "rules": {"rounds": [9]}})
    status = wait_for(client, job.json()["job_id"])
    assert status["status"] == "failed" and "ran over 0.5 s" in status["error"], status
    assert time.monotonic() - started < 2.5


def test_the_app_s_evaluation_is_the_evaluator_s() -> None:
    from tt_env.agents import make_agent
    from tt_env.evaluation.evaluator import evaluate

    rules = Rules(num_players=2, rounds=(1, 2))
    theirs, their_deals = evaluate(["expert-v0", "greedy-v0"], 3, 4, rules, workers=1, batch_size=1)
    ours, our_deals = run_evaluation(["expert-v0", "greedy-v0"], 3, 4, rules, make=make_agent, check=lambda: None,
                                     on_deal=lambda records: None)
    timing = ("seconds", "games_per_second", "ms_per_move")

    def without_timing(value):
        if isinstance(value, dict):
            return {k: without_timing(v) for k, v in value.items() if k not in timing}
        return [without_timing(v) for v in value] if isinstance(value, list) else value

    assert without_timing(ours) == without_timing(theirs)
    assert [[g.actions for g in deal] for deal in our_deals] == [[g.actions for g in deal] for deal in their_deals]


# ---------------------------------------------------------------------- 6. every error message is short
HUGE = "z" * 1_900_000


@pytest.mark.parametrize("path, body", [
    ("/api/play", {"seats": ["human", HUGE]}),
    ("/api/play", {"seats": HUGE}),
    ("/api/play", {"seats": ["human", "expert-v0", HUGE[:1000]] * 3}),
    ("/api/play", {"seats": [HUGE[:900_000], HUGE[:900_000]]}),
    ("/api/watch/new", {"seats": [HUGE, "random-v0"]}),
    ("/api/evaluations", {"agents": ["expert-v0", HUGE]}),
    ("/api/evaluations", {"agents": {"x": HUGE}}),
    ("/api/results", {"format": HUGE}),
    ("/api/results", {**EVALUATION, "seed": HUGE}),
    ("/api/results", {**EVALUATION, "agents": [{**EVALUATION["agents"][0], "mean_score": HUGE}]}),
    ("/api/watch/record", {"record": {"format_version": 1, "rules": {"num_players": 2}, "seed": 1,
                                      "seats": [HUGE], "actions": []}}),
    ("/api/watch/record", {"record": {"format_version": 1, "rules": {"num_players": 2}, "seed": 1,
                                      "seats": ["a", "b"], "actions": [], "rng_state": HUGE}}),
])
def test_error_messages_are_short_whatever_was_sent(client, path, body) -> None:
    response = client.post(path, json=body)
    assert 400 <= response.status_code < 500, response.text[:300]
    error = response.json()["error"]
    assert len(error) < 1000 and "characters)" in error, error[:300]


def test_play_move_messages_are_short(client) -> None:
    game = person_first_game(client)
    for body in ({"action": HUGE, "step": 0}, {"action": 0, "step": HUGE}):
        response = client.post(f"/api/play/{game['game_id']}/action", json=body)
        assert 400 <= response.status_code < 500 and len(response.json()["error"]) < 1000
    missing = client.get(f"/api/play/{'k' * 5000}")
    assert missing.status_code == 404 and len(missing.json()["error"]) < 1000


def test_the_field_checkers_shorten_what_they_quote() -> None:
    with pytest.raises(RequestError) as choice:
        choice_field({"aces": HUGE}, "aces", ["low", "high"])
    with pytest.raises(RequestError) as listed:
        list_field({"seats": [HUGE]}, "seats", 2, 8)
    assert len(choice.value.message) < 300 and choice.value.message.endswith("use one of ['low', 'high']")
    assert len(listed.value.message) < 300 and listed.value.message.endswith("give a list of 2 to 8 items")
