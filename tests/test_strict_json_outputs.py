"""The JSON files the tools write are strict JSON, also where a value is undefined (one deal).

Parsed with ``parse_constant`` refusing ``NaN``/``Infinity``, as JavaScript or ``jq`` would.
"""

from __future__ import annotations

import json
import math

import pytest

from tt_env.agents import GreedyAgent
from tt_env.engine import Rules
from training import evaluate as ev

SHORT = Rules(rounds=(1, 2))


def strict_loads(text: str):
    def refuse(token: str):
        raise ValueError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


def _numbers(value):
    """Every number inside ``value``."""
    if isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield value


def test_one_deal_evaluation_writes_strict_json_with_null_intervals(tmp_path, capsys):
    out = tmp_path / "one.json"
    ev.main(["greedy-v0", "random-v0", "--games", "1", "--rounds", "1,2", "--quiet", "--json", str(out)])
    report = strict_loads(out.read_text())
    shown = capsys.readouterr().out
    assert "n/a" in shown and "(1 deal)" in shown  # the table says so too (perhaps wrapped)
    for agent in report["agents"]:
        assert agent["mean_score_ci95"] is None  # one deal: no spread, so no interval
        lo, hi = agent["win_rate_ci95"]  # the pseudo-deals still give a win-rate interval
        assert 0.0 <= lo <= agent["win_rate"] <= hi <= 1.0
        for key in ("mean_score", "win_rate", "ms_per_move"):
            assert math.isfinite(agent[key])
    for pair in report["pairwise"]:
        assert pair["ci95"] is None and math.isfinite(pair["mean_score_diff"])
    assert all(math.isfinite(x) for x in _numbers(report))


def test_two_deal_intervals_are_numbers(tmp_path):
    report, _ = ev.evaluate(["greedy-v0", "random-v0"], 2, seed=1, rules=SHORT)
    for agent in report["agents"]:
        assert len(agent["mean_score_ci95"]) == 2 and all(math.isfinite(x) for x in agent["mean_score_ci95"])
    strict_loads(json.dumps(report, allow_nan=False))


def test_game_records_are_strict_json(tmp_path):
    from tt_env.ui.records import load_record

    games = tmp_path / "games"
    ev.main(["greedy-v0", "random-v0", "--games", "1", "--rounds", "1", "--quiet", "--save-games", str(games)])
    files = sorted(games.iterdir())
    assert [p.suffix for p in files] == [".json", ".json"]  # no temporary files left behind
    for path in files:
        data = strict_loads(path.read_text())
        assert data["format"] == "three-thirteen-game" and load_record(path).final_scores is not None


def test_a_played_game_record_is_strict_json(tmp_path):
    pytest.importorskip("rich")
    import io

    from rich.console import Console

    from tt_env.ui.play import PlaySession

    path = tmp_path / "game.json"
    session = PlaySession(["random-v0"], rules=Rules(rounds=(1,)), seed=2, save_path=path,
                          input_fn=lambda prompt: "q", console=Console(file=io.StringIO()))
    session.run()
    data = strict_loads(path.read_text())
    assert data["seats"] == ["human", "random-v0"] and "final_scores" not in data  # quit at the first prompt


def test_one_deal_training_evaluation_writes_strict_eval_json(tmp_path):
    """``eval.json`` of a run: a one-deal evaluation has no interval (NaN in memory), ``null`` on disk."""
    from training.common.run_utils import RunDir, evaluate_agent

    results = evaluate_agent(GreedyAgent(SHORT), ["random-v0"], SHORT, deals=1, seed=0)
    assert math.isnan(results[0].ci95)
    run = RunDir(tmp_path, "tiny")
    run.create(overwrite=False)
    run.record_eval(0, results)
    history = strict_loads((run.path / "eval.json").read_text())
    assert history[0]["results"][0]["ci95"] is None and math.isfinite(history[0]["results"][0]["score_diff"])


def test_main_job_table_of_one_deal_is_strict_json(tmp_path, capsys):
    from tt_env.jsonio import write_json
    from training.main_job import evaluation_table, print_table
    from tt_env.engine.rules import Rules

    rows = evaluation_table({"greedy": "greedy-v0"}, ("random-v0",), deals=1, seed=0, workers=1,
                            rules=Rules(num_players=2))
    print_table(rows)
    shown = capsys.readouterr().out
    assert "n/a" in shown and "(1 deal)" in shown
    assert rows[0]["ci95"] is None
    assert strict_loads(write_json(tmp_path / "rows.json", rows).read_text())[0]["ci95"] is None
