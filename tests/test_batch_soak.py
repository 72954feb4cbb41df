"""``benchmarks/batch_soak.py``: a short soak passes, and a broken batch is reported with its chunk."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import batch_soak  # noqa: E402
from soak_checks import game_spec  # noqa: E402

from tt_env.batch import BatchGame, bridge, solver_triton  # noqa: E402

SEED = 8
"""A run whose first three chunks hold greedy-v0 seats and loads (chunk 0), partial steps (chunk 1)
and every path (``auto``, ``every-row-kept``, ``every-row-gathered``)."""


def test_a_short_soak_goes_through_every_path_partial_steps_and_greedy_seats() -> None:
    summary = batch_soak.run(SEED, steps=3 * 6 * 60, seconds=None, tables=6, chunk_steps=60,
                             paths=batch_soak.PATHS, device="cpu", cuda_graphs=False, max_mismatches=1,
                             progress=False)
    totals = summary["totals"]
    assert summary["mismatches"] == []
    assert summary["chunks"] == 3 and summary["paths"] == {p: 1 for p in batch_soak.PATHS}
    assert summary["partial_chunks"] == 1 and totals["idle"] > 0 and totals["greedy"] > 0
    assert summary["reload_chunks"] == 1 and totals["loads"] == 60 // batch_soak.RELOAD_EVERY
    assert totals["steps"] + totals["idle"] == 3 * 6 * 60 and totals["rounds"] > 0


@pytest.mark.skipif(not solver_triton.available(), reason="needs Triton")
def test_the_triton_path_runs_the_interpreted_step_kernels() -> None:
    """``every-row-triton``: the GPU's every-row path with its fused step kernels, interpreted."""
    game = batch_soak.build_game(batch_soak.chunk_spec(SEED, 0, ["every-row-triton"]), 4, "cpu", False)
    assert game._kernel_backend == "triton" and not game._sparse and game._gathered
    summary = batch_soak.run(SEED, steps=2 * 4 * 12, seconds=None, tables=4, chunk_steps=12,
                             paths=["every-row-triton"], device="cpu", cuda_graphs=False, max_mismatches=1,
                             progress=False)
    assert summary["mismatches"] == [] and summary["paths"] == {"every-row-triton": 2}


def test_chunks_are_drawn_from_the_seed_and_index_alone_within_the_batch_limits() -> None:
    specs = [batch_soak.chunk_spec(3, k, batch_soak.PATHS) for k in range(60)]
    assert specs == [batch_soak.chunk_spec(3, k, batch_soak.PATHS) for k in range(60)]
    assert max(s.rules.num_decks for s in specs) == 4 and {s.rules.num_players for s in specs} == set(range(2, 9))
    assert {s.path for s in specs} == set(batch_soak.PATHS) and any(s.partial for s in specs)
    assert any(s.reload for s in specs) and any(s.greedy_seats for s in specs)
    redrawn = [batch_soak.chunk_spec(3, k, batch_soak.PATHS).rules.num_decks for k in range(400)
               if game_spec(3, k).rules.num_decks > 4]
    assert redrawn and max(redrawn) == 4  # more decks than the batch plays: redrawn up to 4


def _scores_off_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    step = BatchGame.step
    monkeypatch.setattr(BatchGame, "step", lambda self, *a, **k: (lambda ts: ts._replace(scores=ts.scores + 1))(
        step(self, *a, **k)))


def _partial_steps_move_every_table(monkeypatch: pytest.MonkeyPatch) -> None:
    step = BatchGame.step
    monkeypatch.setattr(BatchGame, "step", lambda self, actions, active=None, final_seat=None: step(self, actions))


def _loads_take_every_table_to_a_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bridge, "loaded_lockstep", lambda game: 0)


@pytest.mark.parametrize("breaking,chunk,message,chunk_steps", [
    (_scores_off_by_one, 0, "scores", 20),
    (_partial_steps_move_every_table, 1, "left out of the step, it changed", 20),
    (_loads_take_every_table_to_a_draw, 0, "table", 60),  # (the first load, at step 23, is at a discard)
])
def test_a_broken_batch_is_reported_with_the_command_that_runs_its_chunk_again(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, breaking, chunk: int, message: str,
        chunk_steps: int) -> None:
    breaking(monkeypatch)
    args = ["--seed", str(SEED), "--tables", "8", "--chunk-steps", str(chunk_steps),
            "--steps", str(3 * 8 * chunk_steps), "--quiet"]
    assert batch_soak.main(args) == 1
    out = capsys.readouterr().out
    assert f"MISMATCH chunk {chunk}, step " in out and message in out
    reproduce = out.split("reproduce: python benchmarks/batch_soak.py ")[1].split("\n")[0].split()
    assert batch_soak.main(reproduce) == 1
    assert f"chunk {chunk} of seed {SEED}" in capsys.readouterr().out


def test_an_error_in_the_engine_is_a_mismatch_and_runs_again_with_its_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    def broken(self, *args, **kwargs):
        raise IndexError("index 99 is out of bounds")

    monkeypatch.setattr(BatchGame, "step", broken)
    assert batch_soak.main(["--seed", str(SEED), "--tables", "2", "--chunk-steps", "5", "--steps", "20",
                            "--quiet", "--max-mismatches", "2"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH chunk 0, step 1 (0: the deal): raised IndexError: index 99 is out of bounds" in out
    assert "mismatches: 2 (stopped at the limit, --max-mismatches 2)" in out
    with pytest.raises(IndexError, match="index 99"):
        batch_soak.main(["--seed", str(SEED), "--chunk", "0", "--tables", "2", "--chunk-steps", "5"])


def test_a_chunk_runs_again_without_a_mismatch(capsys: pytest.CaptureFixture) -> None:
    assert batch_soak.main(["--seed", str(SEED), "--chunk", "2", "--tables", "3", "--chunk-steps", "30"]) == 0
    assert "no mismatch" in capsys.readouterr().out


@pytest.mark.parametrize("args,message", [
    (["--steps", "0"], "--steps 0: use an integer >= 1"),
    (["--tables", "-2"], "--tables -2: use an integer >= 1"),
    (["--paths", "gpu"], "--paths gpu: use a comma-separated list of auto, every-row-kept, every-row-gathered"),
    (["--seconds", "0"], "--seconds 0.0: use a number > 0"),
    (["--cuda-graphs"], "--cuda-graphs needs --device cuda"),
    (["--device", "tpu"], "argument --device: device='tpu' is not allowed: use 'cpu', 'cuda' or 'cuda:K'"),
    (["--paths", "auto,every-row-tritons"], "--paths every-row-tritons: use a comma-separated list of auto, "
                                            "every-row-kept, every-row-gathered, every-row-triton"),
] + ([] if torch.cuda.is_available() else [(["--device", "cuda"], "argument --device: device='cuda' is not available "
                                                                  "here: this machine has no CUDA device")]))
def test_bad_arguments_are_refused_with_the_allowed_values(capsys: pytest.CaptureFixture, args: list[str],
                                                           message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        batch_soak.main(args)
    assert exc.value.code == 2 and message in capsys.readouterr().err
