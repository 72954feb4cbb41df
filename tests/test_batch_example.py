"""The multi-agent example of docs/batched-engine.md runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "batch_multi_agent.py"


def test_multi_agent_example_runs(capsys) -> None:
    spec = importlib.util.spec_from_file_location("batch_multi_agent", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    per_game = module.main(num_tables=8, games=3)
    assert per_game.shape == (3,)
    assert abs(float(per_game.sum())) < 1e-3  # relative rewards are zero-sum
    assert "games; relative reward per game by seat" in capsys.readouterr().out
