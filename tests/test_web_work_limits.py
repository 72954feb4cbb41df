"""The browser app's work limits against a player who wants the server's time (issue 31): the agents'
moves of Play games inside the work limit (a cap, a time limit, a stop when the browser leaves, 409
on a busy game), and evaluations that are bounded, timed and stoppable at the next move.

The other attacks (the seed and the deal, loopback names, nesting, long messages):
``tests/test_web_security.py``."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.web.app import create_app  # noqa: E402
from tt_env.web.catalog import AgentCatalog  # noqa: E402
from tt_env.web.config import MAX_SEARCH_WORK  # noqa: E402
from tt_env.web.results import check_work, run_evaluation  # noqa: E402
from tt_env.web.store import SESSION_COOKIE  # noqa: E402
from tt_env.web.validate import RequestError  # noqa: E402

from web_api_fixtures import ONE_ROUND, app, call_then_disconnect, client, person_first_game  # noqa: E402,F401  (app, client: fixtures)




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
    three = client.post("/api/evaluations", json={"agents": ["ismcts-v0", "expert-v0", "greedy-v0"], "deals": 10})
    assert three.status_code == 400 and "1 search agent(s) x 10 deals x 6 seatings x 11 rounds" in three.json()["error"]
    two = client.post("/api/evaluations", json={"agents": ["ismcts-v0", "expert-v0"], "deals": 20})
    assert two.status_code == 400 and "at most 9 deal(s)" in two.json()["error"]


def test_the_search_work_bound() -> None:
    slow = ("ismcts-v0", "ismcts-v1").__contains__
    check_work(["expert-v0"] * 6, 200, Rules(num_players=6), slow)  # scripted agents: the deal count bounds them
    check_work(["ismcts-v0", "expert-v0"], 100, Rules(num_players=2, rounds=(1,)), slow)  # 200: at the bound
    with pytest.raises(RequestError, match="at most 100 deal"):
        check_work(["ismcts-v0", "expert-v0"], 101, Rules(num_players=2, rounds=(1,)), slow)
    check_work(["ismcts-v1"] * 3, 2, Rules(num_players=3), slow)  # 3 x 3 rotations x 11 rounds x 2 = 198
    with pytest.raises(RequestError, match="at most 2 deal"):
        check_work(["ismcts-v1"] * 3, 3, Rules(num_players=3), slow)
    check_work(["ismcts-v1", "ismcts-v0", "expert-v0"], 1, Rules(num_players=3), slow)  # 2 x 3! orders x 11 = 132
    with pytest.raises(RequestError, match="at most 1 deal"):
        check_work(["ismcts-v1", "ismcts-v0", "expert-v0"], 2, Rules(num_players=3), slow)


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
