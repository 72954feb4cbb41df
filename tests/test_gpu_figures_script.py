"""``benchmarks/gpu_figures.sh`` runs only on a lent GPU machine, a few minutes of it a session, so
a flag that a benchmark no longer takes, or a test that was renamed, would waste that run. Here,
on any machine: each benchmark it starts lists every flag it is given in its ``--help``, and each
test it names exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (ROOT / "benchmarks" / "gpu_figures.sh").read_text(encoding="utf-8").replace("\\\n", " ")
COMMANDS = re.findall(r"python3 (benchmarks/\w+\.py)([^\n|;&>]*)", SCRIPT)
"""(benchmark, its arguments up to a pipe, a redirection or the line's end), in the script's order."""


def flags(arguments: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", arguments))


def test_the_script_starts_the_benchmarks_it_is_written_for() -> None:
    assert {name for name, _ in COMMANDS} >= {"benchmarks/bench_batch.py", "benchmarks/bench_batch_solver.py",
                                              "benchmarks/bench_training.py", "benchmarks/batch_soak.py"}
    assert all(flags(arguments) for _, arguments in COMMANDS)


@pytest.mark.parametrize("benchmark", sorted({name for name, _ in COMMANDS}))
def test_each_benchmark_takes_every_flag_the_script_gives_it(benchmark: str) -> None:
    shown = subprocess.run([sys.executable, benchmark, "--help"], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr[-2000:]
    given = set().union(*(flags(arguments) for name, arguments in COMMANDS if name == benchmark))
    assert given <= flags(shown.stdout), f"{benchmark} does not take {sorted(given - flags(shown.stdout))}"


def test_each_test_the_script_runs_exists() -> None:
    named = re.findall(r"(tests/\w+\.py)(?:::(\w+))?", SCRIPT)
    assert len(named) >= 4
    for path, test in named:
        text = (ROOT / path).read_text(encoding="utf-8")
        assert not test or f"def {test}(" in text, f"{path}::{test} is not a test there"
