"""``benchmarks/bench_batch.py``: its batched runner plays and counts, and its tuning flag works."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_batch  # noqa: E402


def test_the_batched_runner_counts_a_decision_per_table_and_step() -> None:
    runner, per_table = bench_batch.make_batch_runner(3, 16, torch.device("cpu"), seed=0)
    decisions, elapsed = runner.run(0.02)
    assert decisions > 0 and decisions % 16 == 0 and elapsed >= 0.02
    assert per_table > 0 and runner.name == "batch 3p x16 (cpu)"


def test_a_runner_sets_the_kernels_programs_per_launch_while_it_plays(monkeypatch: pytest.MonkeyPatch) -> None:
    solver_triton = pytest.importorskip("tt_env.batch.solver_triton")
    monkeypatch.setattr(solver_triton, "PREFIX_PROGRAMS", solver_triton.PREFIX_PROGRAMS)
    first, _ = bench_batch.make_batch_runner(2, 8, torch.device("cpu"), seed=0, prefix_programs=512)
    second, _ = bench_batch.make_batch_runner(2, 8, torch.device("cpu"), seed=0, prefix_programs=64)
    first.run(0.01)
    assert solver_triton.PREFIX_PROGRAMS == 512 and first.name.endswith(", 512 programs)")
    second.run(0.01)
    assert solver_triton.PREFIX_PROGRAMS == 64


@pytest.mark.parametrize("value,message", [("0", "every value must be at least 1"),
                                           ("8k", "use comma-separated positive ints")])
def test_bad_prefix_programs_are_named(monkeypatch: pytest.MonkeyPatch, value: str, message: str) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_batch.py", "--prefix-programs", value])
    with pytest.raises(SystemExit, match=message):
        bench_batch.main()


@pytest.mark.parametrize("args,message", [(["--cuda-graphs", "yes"], "choose from off, on"),
                                          (["--cuda-graphs", "off,on"], "--cuda-graphs on needs --device cuda")])
def test_bad_cuda_graphs_are_named(monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_batch.py", *args])
    with pytest.raises(SystemExit, match=message):
        bench_batch.main()
