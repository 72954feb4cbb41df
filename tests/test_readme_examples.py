"""The code examples of the README run as written (and print what the README says)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_aec_loop_example_runs() -> None:
    block = next(b for b in _python_blocks() if "three_thirteen_v0.env(" in b)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README:aec-example", "exec"), {})
    assert out.getvalue().strip(), "the example prints the final scores"


def test_engine_example_prints_the_documented_result() -> None:
    block = next(b for b in _python_blocks() if "best_melds(" in b)
    expected = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README:engine-example", "exec"), {})
    assert out.getvalue().strip().splitlines() == expected


def test_gymnasium_example_runs() -> None:
    block = next(b for b in _python_blocks() if "gymnasium.make(" in b)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README:gym-example", "exec"), {})
    assert out.getvalue().strip()


def test_search_examples_run() -> None:
    """The determinize example (its assert is the README's claim) and the ismcts-v0 variant."""
    import numpy as np

    sample = next(b for b in _python_blocks() if "determinize(obs" in b)
    variant = next(b for b in _python_blocks() if 'make_agent("ismcts-v0"' in b)
    scope: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(sample, "README:search-example", "exec"), scope)
        exec(compile(variant, "README:ismcts-variant", "exec"), scope)
    agent, obs = scope["agent"], scope["obs"]
    assert agent.worlds == 64 and agent.name == "ismcts-v0"
    action = agent.act(obs["observation"], obs["action_mask"], np.random.default_rng(0))
    assert obs["action_mask"][action]
