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


def test_the_pages_other_blocks_run() -> None:
    """Every ```python block of docs/batched-engine.md but the included example runs on its own
    (a block on ``device="cuda"`` only where a GPU is present)."""
    import re
    import subprocess
    import sys

    import torch

    page = EXAMPLE.parents[1] / "batched-engine.md"
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M) if "--8<--" not in b]
    runnable = [b for b in blocks if torch.cuda.is_available() or 'device="cuda"' not in b]
    assert len(runnable) >= 3 and len(blocks) - len(runnable) <= 1
    for block in runnable:
        proc = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=300,
                              cwd=EXAMPLE.parents[2])
        assert proc.returncode == 0, f"block fails:\n{block}\n{proc.stderr}"
