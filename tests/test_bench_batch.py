"""``benchmarks/bench_batch.py``: its batched runner plays and counts, its tuning flag works, and it (and
``bench_batch_solver.py``) refuse bad arguments by name before any work."""

from __future__ import annotations

import importlib
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


NO_CUDA = [] if torch.cuda.is_available() else [
    (["--device", "cuda"], "argument --device: device='cuda' is not available here: this machine has no CUDA device")]


BATCH = [
    (["--prefix-programs", "0"], "argument --prefix-programs: '0' is not allowed: use comma-separated integers >= 1"),
    (["--prefix-programs", "8k"], "argument --prefix-programs: '8k' is not a list of integers"),
    (["--batch-sizes", "1024,0"], "argument --batch-sizes: '1024,0' is not allowed: use comma-separated integers >= 1"),
    (["--players", "2,9"], "argument --players: '2,9' is not allowed: use comma-separated player counts 2..8"),
    (["--device", "gpu"], "argument --device: device='gpu' is not allowed: use 'cpu', 'cuda' or 'cuda:K'"),
    (["--seconds", "0"], "argument --seconds: 0 is not allowed: use a number > 0"),
    (["--repeats", "0"], "argument --repeats: 0 is not allowed: use an integer >= 1"),
    (["--seed", "-1"], "argument --seed: -1 is not allowed: use a seed, an integer >= 0"),
] + NO_CUDA
SOLVER = [
    (["--batch-sizes", "x"], "argument --batch-sizes: 'x' is not a list of integers"),
    (["--torch-batch-sizes", "0"], "argument --torch-batch-sizes: '0' is not allowed"),
    (["--hands", "0"], "argument --hands: 0 is not allowed: use an integer >= 1"),
    (["--torch-seconds", "-1"], "argument --torch-seconds: -1 is not allowed: use a number > 0"),
    (["--device", "tpu"], "argument --device: device='tpu' is not allowed"),
] + NO_CUDA


@pytest.mark.parametrize("script,args,message", [("bench_batch", *case) for case in BATCH]
                         + [("bench_batch_solver", *case) for case in SOLVER])
def test_bad_arguments_are_named(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, script: str,
                                 args: list[str], message: str) -> None:
    """Refused before any work, in one line that names the flag and what it allows (no traceback)."""
    module = importlib.import_module(script)
    monkeypatch.setattr(sys, "argv", [f"{script}.py", *args])
    with pytest.raises(SystemExit) as exit_:
        module.main()
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("args,message", [(["--cuda-graphs", "yes"], "choose from off, on"),
                                          (["--cuda-graphs", "off,on"], "--cuda-graphs on needs --device cuda")])
def test_bad_cuda_graphs_are_named(monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    monkeypatch.setattr(sys, "argv", ["bench_batch.py", *args])
    with pytest.raises(SystemExit, match=message):
        bench_batch.main()
