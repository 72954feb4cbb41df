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


def _timeouts_by_part() -> dict[str, int]:
    """The sum of the ``timeout N`` limits inside each ``if want PART`` block (the first engine block
    holds the checks, the second its benchmark: both count for ``engine``)."""
    totals: dict[str, int] = {}
    for part, body in re.findall(r"^if want (\w+); then\n(.*?)^fi$", SCRIPT, flags=re.M | re.S):
        totals[part] = totals.get(part, 0) + sum(int(n) for n in re.findall(r"\btimeout (\d+)", body))
    return totals


def test_each_call_of_the_documented_plan_fits_in_ten_minutes() -> None:
    """The device runs one command for 10 minutes at most: each documented call, at its sections'
    limits, leaves a minute for installing the wheels, building the C solver and importing."""
    totals = _timeouts_by_part()
    assert set(totals) >= {"engine", "players", "solver", "trainers", "training", "soak", "million", "tuning"}
    for call in (["engine"], ["players", "solver", "trainers", "training"], ["soak", "million"], ["tuning"]):
        assert sum(totals[part] for part in call) <= 540, (call, totals)


def test_without_wheels_it_stops_at_once_and_says_why(tmp_path) -> None:
    """Without ``.whl/`` nothing imports on the GPU machine (no gymnasium, pettingzoo): every section
    would fail, and fall back, in silence."""
    copy = tmp_path / "checkout"
    (copy / "benchmarks").mkdir(parents=True)
    (copy / "benchmarks" / "gpu_figures.sh").write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run(["bash", "benchmarks/gpu_figures.sh"], cwd=copy, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "OUT": str(out), "PARTS": "engine"})
    assert done.returncode == 2
    assert "no wheels in .whl/: run 'bash benchmarks/gpu_wheels.sh' here first" in done.stdout
    assert (out / "machine.txt").read_text().startswith("no wheels in .whl/")
    assert not (out / "done.txt").exists()
