"""The browser app against a player who wants more than their seat shows (issue 31): no seed or other
hand during a game, loopback binds that answer only to loopback names, bounded JSON nesting, and
short error messages. The work limits against one who wants the server's time:
``tests/test_web_work_limits.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.web.app import create_app  # noqa: E402
from tt_env.web.cli import allowed_hosts  # noqa: E402
from tt_env.web.validate import MAX_JSON_DEPTH, RequestError, choice_field, list_field, nested_deeper  # noqa: E402

from web_api_fixtures import ONE_ROUND, SEED, person_first_game, play_to_end  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(allowed_hosts=["testserver"], max_games=20), raise_server_exceptions=False)


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


@pytest.mark.parametrize("host", ["127.1", "0x7f.0.0.1", "2130706433", "::ffff:127.0.0.1", "localhost.", "LOCALHOST"])
def test_every_spelling_of_loopback_keeps_the_host_check(host) -> None:
    """``--host 127.1`` listens on 127.0.0.1, but was taken for another address: the app then
    answered any ``Host`` (DNS rebinding) and said anyone could reach it."""
    from tt_env.web.cli import is_loopback

    assert is_loopback(host) and "*" not in allowed_hosts(host)
    assert not is_loopback("::ffff:10.0.0.1") and not is_loopback("10.1") and not is_loopback("example.com")


def test_a_404_quotes_a_long_path_shortened(client) -> None:
    response = client.get("/api/x/" + "a" * 60_000)
    assert response.status_code == 404 and len(response.content) < 400


def test_a_request_body_is_parsed_off_the_event_loop(client, monkeypatch) -> None:
    """A large body's parse held the event loop, and every other request with it, for a second."""
    import asyncio

    from tt_env.web import validate

    seen = []
    real = validate.parsed_body

    def spy(body: bytes) -> dict:
        try:
            asyncio.get_running_loop()
            seen.append("on the event loop")
        except RuntimeError:
            seen.append("in a worker thread")
        return real(body)

    monkeypatch.setattr(validate, "parsed_body", spy)
    client.post("/api/results", json={"format": "nothing"})
    assert seen == ["in a worker thread"]


def test_a_rule_refusal_gives_no_advice_the_app_cannot_follow(client) -> None:
    """A network refusing other scoring told the browser to "pass allow_rule_mismatch=True"."""
    pytest.importorskip("torch")
    response = client.post("/api/play", json={"seats": ["human", "ppo-2p-v1"], "rules": {"aces": "high_or_low"},
                                              "seed": 1})
    error = response.json()["error"]
    assert response.status_code == 400 and "aces='high_or_low'" in error and "allow_rule_mismatch" not in error
    options = client.get("/api/options").json()
    described = {a["name"]: a["description"] for a in options["agents"]}
    assert "search" in described.get("ismcts-v1", "search")
