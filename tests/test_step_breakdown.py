"""``benchmarks/step_breakdown.py`` times the parts of a step and leaves the engine as it was."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from tt_env.batch import game as game_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import step_breakdown  # noqa: E402


def test_step_breakdown_times_each_part_and_restores_the_engine() -> None:
    targets = [pair for pairs in step_breakdown.PARTS.values() for pair in pairs]
    assert (game_module.BatchGame, "_deal_tables") in targets  # a CPU's deals, outside _on_rows
    before = [getattr(owner, name) for owner, name in targets]
    result = step_breakdown.breakdown(players=3, tables=64, seconds=0.05, repeats=2, warmup_steps=2, seed=0)
    assert [getattr(owner, name) for owner, name in targets] == before
    parts = [result[label] for label in step_breakdown.PARTS]
    assert all(p > 0 for p in parts)  # every part ran in the timed steps
    assert result["rest of the step"] > 0 and sum(parts) < result["whole step"]
    assert result["decisions/s"] == 64 / result["whole step"] * 1e3
    assert result["page faults"] >= 0


def test_a_part_called_inside_another_counts_once(monkeypatch) -> None:
    """A timed part that runs inside another (a stock refill inside the moves) is taken out of
    the outer part's time: the parts add up to no more than the step."""
    clock = [0.0]
    monkeypatch.setattr(step_breakdown.time, "perf_counter", lambda: clock[0])

    def wait(seconds: float) -> None:
        clock[0] += seconds

    spent: dict[str, float] = defaultdict(float)
    inside: list[float] = []
    waits: list[float] = []  # the device waits (on a GPU): at both ends of every timed call
    inner = step_breakdown._timed(spent, "inner", lambda: wait(2.0), inside, lambda: waits.append(clock[0]))
    outer = step_breakdown._timed(spent, "outer", lambda: (wait(1.0), inner(), wait(0.5)), inside,
                                  lambda: waits.append(clock[0]))
    outer()
    inner()
    assert spent == {"outer": 1.5, "inner": 4.0} and inside == []
    assert waits == [0.0, 1.0, 3.0, 3.5, 3.5, 5.5]
