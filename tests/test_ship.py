"""Shipping a trained checkpoint under an agent's name (training/ship.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.checkpoint import read_metadata
from tt_env.agents import make_agent
from tt_env.engine.rules import Rules
from training import ship
from training.evaluate import evaluate

from test_checkpoint import save
from test_models import sample_positions


def test_ship_records_the_evaluations_and_loads_as_the_same_agent(tmp_path):
    _, path = save(tmp_path / "run" / "checkpoints", name="final", num_players=3)
    (tmp_path / "run" / "learning_curve.png").write_bytes(b"png")
    report, _ = evaluate([str(path), "greedy-v0", "random-v0"], games=2, seed=3)
    report_path = tmp_path / "eval.json"
    report_path.write_text(json.dumps(report))
    out = tmp_path / "shipped"
    shipped = ship.main([str(path), "ppo-3p-test", "--evaluation", str(report_path), "--wall-time", "1m",
                         "--out-dir", str(out), "--algorithm", "PPO (training/selfplay.py)",
                         "--inputs", "the observation and the meld solver's penalties"])
    meta = read_metadata(shipped)
    results = meta["evaluation"]["results"]
    assert [r["opponent"] for r in results] == ["greedy-v0", "random-v0"]
    pair = {p["b"]: p for p in report["pairwise"] if p["a"] == report["agents"][0]["name"]}
    assert results[0]["score_diff"] == pair["greedy-v0"]["mean_score_diff"] and results[0]["players"] == 3
    assert meta["extra"]["training_wall_time"] == "1m" and meta["training_steps"] == 123
    assert meta["extra"]["algorithm"] == "PPO (training/selfplay.py)"
    assert meta["extra"]["inputs"] == "the observation and the meld solver's penalties"
    assert (out / "ppo-3p-test.learning_curve.png").read_bytes() == b"png"
    rules = Rules(num_players=3)
    a, b = make_agent(str(path), rules), make_agent(str(shipped), rules)
    obs, masks = sample_positions(3, 20)
    rng = np.random.default_rng(0)
    assert [a.act(o, m, rng) for o, m in zip(obs, masks)] == [b.act(o, m, rng) for o, m in zip(obs, masks)]


def test_ship_refuses_what_is_not_an_evaluation_report(tmp_path, capsys):
    _, path = save(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(SystemExit) as exc:
        ship.main([str(path), "x", "--evaluation", str(bad), "--wall-time", "1m", "--out-dir", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert "is not a report of python -m training.evaluate --json" in capsys.readouterr().err


def test_ship_refuses_an_empty_description(tmp_path, capsys):
    _, path = save(tmp_path)
    with pytest.raises(SystemExit) as exc:
        ship.main([str(path), "x", "--wall-time", "1m", "--out-dir", str(tmp_path / "o"), "--algorithm", " "])
    assert exc.value.code == 2
    assert "--algorithm is empty: describe it in words" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
