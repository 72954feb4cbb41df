"""``benchmarks/count_step_ops.py``: what it counts of a GPU step, on a CPU, is what a step does."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import count_step_ops  # noqa: E402


def test_a_discard_step_calls_the_meld_program_once_and_a_draw_step_never() -> None:
    """Both solving modes: gathered solving's call goes through tt_env.batch.go_out, kept's through
    the game; a count that missed either would say 0."""
    for solving in ("gathered", "kept"):
        counts = count_step_ops.engine_ops(2, 16, solving, "torch")
        (draw_ops, draw_kernels, draw_calls), (discard_ops, _, discard_calls) = counts[True], counts[False]
        assert (draw_calls, discard_calls) == (0, 1), solving
        assert draw_kernels == 0 and 100 < draw_ops < discard_ops, solving


def test_a_replayed_step_is_one_graph_launch_and_a_few_operations() -> None:
    counts = count_step_ops.replayed_ops(2, 16)
    for drawing in (True, False):
        ops, launches = counts[drawing]
        assert launches == 1 and 0 < ops < 20, (drawing, ops, launches)
