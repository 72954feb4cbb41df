"""The browser app under hostile input (issue 25): bounded work and memory per game and per upload,
seeds nobody can search, a 4xx (never a traceback) for any bad request, abandoned work stopped and
a cap on concurrent work, and an SB3 ``.zip`` accepted as ``--checkpoint``."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from tt_env.engine.game import DISCARD_BASE, DRAW_STOCK, apply, legal_actions, new_game  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.web.app import HIDDEN_SEED_BOUND, create_app  # noqa: E402
from tt_env.web.catalog import AgentCatalog  # noqa: E402
from tt_env.web.config import MAX_GAME_MOVES  # noqa: E402
from tt_env.web.validate import RequestError  # noqa: E402

from web_api_fixtures import call_then_disconnect  # noqa: E402


@pytest.fixture()
def app():
    return create_app(allowed_hosts=["testserver"], max_games=50)


def endless_record(moves: int) -> dict:
    """A legal record of one 11-card round with a huge turn limit: draw and discard the drawn card."""
    rules = Rules(num_players=2, rounds=[11], max_turns_per_round=10**6)
    state = new_game(rules, np.random.default_rng(0))
    actions = []
    while len(actions) < moves:
        if state.phase == 0:
            action = DRAW_STOCK
        else:
            action = DISCARD_BASE + state.hands[state.current_player][-1]
            if action not in legal_actions(state):
                action = legal_actions(state)[-1]
        apply(state, action)
        actions.append(action)
    return {"format_version": 1, "rules": rules.to_dict(), "seed": 0, "seats": ["a", "b"], "actions": actions}


# ---------------------------------------------------------------------- work and memory per game and upload
def test_a_record_of_too_many_moves_is_refused_before_it_is_replayed(app) -> None:
    client = TestClient(app)
    ok = client.post("/api/watch/record", json={"record": endless_record(200)})
    assert ok.status_code == 201, ok.text
    held = len(app.state.store)
    started = time.monotonic()
    response = client.post("/api/watch/record", json={"record": endless_record(MAX_GAME_MOVES + 1)})
    assert response.status_code == 413, response.text
    assert f"at most {MAX_GAME_MOVES} moves" in response.json()["error"]
    assert time.monotonic() - started < 5
    assert len(app.state.store) == held  # nothing kept


@pytest.mark.parametrize("path", ["/api/play", "/api/watch/new"])
def test_rules_of_a_game_longer_than_the_cap_are_refused(app, path) -> None:
    seats = ["human", "random-v0"] if path == "/api/play" else ["random-v0", "random-v0"]
    response = TestClient(app).post(path, json={"seats": seats, "rules": {"max_turns_per_round": 10**6}})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert str(MAX_GAME_MOVES) in error and "max_turns_per_round 1.." in error and "\n" not in error
    # the default rules at 8 seats still fit
    eight = TestClient(app).post("/api/watch/new", json={"seats": ["random-v0"] * 8, "rules": {"rounds": [1]}})
    assert eight.status_code == 201, eight.text


# ---------------------------------------------------------------------- seeds
def test_a_seed_not_given_is_not_searchable(app) -> None:
    client = TestClient(app)
    for _ in range(6):
        response = client.post("/api/play", json={"seats": ["human", "random-v0"], "rules": {"rounds": [1]}})
        assert response.status_code == 201
        assert response.json()["seed"] is None
    seeds = [item.seed for _, item in app.state.store._items.values()]
    assert len(set(seeds)) == 6 and all(0 <= s < HIDDEN_SEED_BOUND for s in seeds)
    assert max(seeds) > 2**40  # a million seeds were searched in 5 seconds; 2**53 take centuries


# ---------------------------------------------------------------------- 4xx, never a traceback
@pytest.mark.parametrize("body", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"seats": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    b'{"seats": ["human", "random-v0"], "seed": 1' + b"0" * 5000 + b"}",
    b'{"seats": ["human", "random-v0"], "seed": 1' + b"0" * 4000 + b"}",
    b'{"seats": ["human", "random-v0"], "rules": {"max_turns_per_round": 1' + b"0" * 4200 + b"}}",
    b'{"seats": ["human", "random-v0"], "rules": {"decks": 1' + b"0" * 6000 + b"}}",
])
def test_deep_json_and_huge_integers_get_a_400_in_one_line(app, body) -> None:
    client = TestClient(app)  # raises any server exception
    response = client.post("/api/play", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text[:200]
    error = response.json()["error"]
    assert "\n" not in error and len(error) < 400, error


@pytest.mark.parametrize("param", ["since=\u00b2", "since=\u0661\u0662", "since=" + "9" * 5000])
def test_non_ascii_digits_in_since_get_a_400(app, param) -> None:
    client = TestClient(app)
    game = client.post("/api/play", json={"seats": ["human", "random-v0"], "rules": {"rounds": [1]}, "seed": 1})
    response = client.get(f"/api/play/{game.json()['game_id']}?{param}")
    assert response.status_code == 400, response.text[:200]
    assert "since=" in response.json()["error"] and "a move number >= 0" in response.json()["error"]


@pytest.mark.parametrize("param", ["step=\u00b2", "step=\u0661", "seat=\u00b2", "seat=\u0661", "step=" + "1" * 5000])
def test_non_ascii_digits_in_step_and_seat_get_a_400(app, param) -> None:
    client = TestClient(app)
    watch = client.post("/api/watch/new", json={"seats": ["random-v0", "random-v0"], "rules": {"rounds": [1]}})
    response = client.get(f"/api/watch/{watch.json()['watch_id']}?{param}")
    assert response.status_code == 400, response.text[:200]
    assert param.split("=")[0] + "=" in response.json()["error"]


# ---------------------------------------------------------------------- abandoned work, concurrent work
class SlowAgent:
    """Plays the first legal move after a pause (or after ``gate`` opens), counting its moves."""

    def __init__(self, counter: list[int], gate: threading.Event | None = None, started=None) -> None:
        self.counter, self.gate, self.started = counter, gate, started

    def act(self, observation, action_mask, rng) -> int:
        if self.started is not None:
            self.started.set()
        if self.gate is not None:
            self.gate.wait(10)
        time.sleep(0.01)
        self.counter[0] += 1
        return int(np.flatnonzero(action_mask)[0])


class SlowCatalog(AgentCatalog):
    def __init__(self, gate=None) -> None:
        super().__init__()
        self.counter = [0]
        self.gate, self.started = gate, threading.Event()

    def check(self, name, num_players):
        if name != "slow":
            raise RequestError(f"unknown agent {name!r}: choose one of ['slow']")
        return name

    def make(self, name, rules):
        return SlowAgent(self.counter, self.gate, self.started)


def test_work_whose_browser_has_gone_is_stopped() -> None:
    catalog = SlowCatalog()
    app = create_app(allowed_hosts=["testserver"], catalog=catalog, max_jobs=1)
    started = time.monotonic()
    sent = call_then_disconnect(app, "/api/watch/new", {"seats": ["slow"] * 4, "rules": {"rounds": [3, 4, 5]}})
    assert time.monotonic() - started < 5  # the whole game takes far longer
    assert sent[0]["status"] == 503
    moves = catalog.counter[0]
    time.sleep(0.3)
    assert catalog.counter[0] <= moves + 1  # no more moves computed for nobody
    assert len(app.state.store) == 0
    # and its slot is free again
    catalog.counter[0] = 0
    ok = TestClient(app).post("/api/watch/new", json={"seats": ["slow", "slow"], "rules": {"rounds": [1]}})
    assert ok.status_code == 201, ok.text


def test_new_games_past_the_work_cap_get_503_and_time_is_bounded() -> None:
    gate = threading.Event()
    catalog = SlowCatalog(gate)
    app = create_app(allowed_hosts=["testserver"], catalog=catalog, max_jobs=1)
    answers: list = []
    first = threading.Thread(target=lambda: answers.append(TestClient(app).post(
        "/api/watch/new", json={"seats": ["slow", "slow"], "rules": {"rounds": [1]}})))
    first.start()
    try:
        assert catalog.started.wait(10)
        busy = TestClient(app).post("/api/watch/new", json={"seats": ["slow", "slow"], "rules": {"rounds": [1]}})
        assert busy.status_code == 503 and "busy" in busy.json()["error"] and "1 games" in busy.json()["error"]
        busy_play = TestClient(app).post("/api/play", json={"seats": ["human", "slow"], "rules": {"rounds": [1]}})
        assert busy_play.status_code in (201, 503)
    finally:
        gate.set()
        first.join(30)
    assert answers[0].status_code == 201, answers[0].text

    slow = create_app(allowed_hosts=["testserver"], catalog=SlowCatalog(), max_work_seconds=0.3)
    started = time.monotonic()
    late = TestClient(slow).post("/api/watch/new", json={"seats": ["slow"] * 4, "rules": {"rounds": [3, 4, 5]}})
    assert late.status_code == 503 and "over 0.3 s" in late.json()["error"]
    assert time.monotonic() - started < 5


# ---------------------------------------------------------------------- an SB3 zip as --checkpoint
def test_an_sb3_zip_is_a_checkpoint_the_app_seats(tmp_path) -> None:
    pytest.importorskip("sb3_contrib")
    from test_sb3_zip import train_and_save

    path = tmp_path / "model.zip"
    train_and_save(path)
    app = create_app(checkpoints=[str(path)], allowed_hosts=["testserver"])
    agents = {a["name"]: a for a in TestClient(app).get("/api/options").json()["agents"]}
    assert agents[str(path)]["players"] == 2 and agents[str(path)]["kind"] == "checkpoint"
    response = TestClient(app).post("/api/watch/new", json={"seats": [str(path), "random-v0"],
                                                             "rules": {"rounds": [1]}})
    assert response.status_code == 201, response.text


# ---------------------------------------------------------------------- boundaries and wording (mutmut survivors)
def test_the_move_cap_is_inclusive_and_the_advice_exact(app) -> None:
    client = TestClient(app)
    # one round of 2 players: at most 2 * (max_turns_per_round + 1) moves, exactly 5,000 at 2,499 turns
    at_cap = client.post("/api/play", json={"seats": ["human", "random-v0"],
                                            "rules": {"rounds": [1], "max_turns_per_round": 2499}})
    assert at_cap.status_code == 201, at_cap.text
    over = client.post("/api/play", json={"seats": ["human", "random-v0"],
                                          "rules": {"rounds": [1], "max_turns_per_round": 2500}})
    assert over.status_code == 400 and "max_turns_per_round 1..2499 for 1 round(s) of 2 players" in \
        over.json()["error"]
    eight = client.post("/api/watch/new", json={"seats": ["random-v0"] * 8,
                                                "rules": {"max_turns_per_round": 221}})
    assert eight.status_code == 400 and "max_turns_per_round 1..220 for 11 round(s) of 8 players" in \
        eight.json()["error"]


def test_an_empty_body_and_an_open_bound_are_named(app) -> None:
    from tt_env.web.validate import int_field

    empty = TestClient(app).post("/api/play", content=b"", headers={"content-type": "application/json"})
    assert empty.status_code == 400 and empty.json()["error"] == "the request body must be a JSON object, not NoneType"
    with pytest.raises(RequestError, match=r"^x=-1 is not allowed: use an integer >= 0$"):
        int_field({"x": -1}, "x", 0)
    with pytest.raises(RequestError, match=r"^x=9 is not allowed: use an integer 0\.\.3$"):
        int_field({"x": 9}, "x", 0, 3)


def test_a_bad_record_is_named_the_record(app) -> None:
    record = endless_record(4)
    record["seats"] = ["only one"]
    response = TestClient(app).post("/api/watch/record", json={"record": record})
    assert response.status_code == 400 and response.json()["error"].startswith("the record has seats")
