"""``training.ppo.loop``: what selfplay.py and batch_ppo.py share (evaluation schedule, divergence)."""

from __future__ import annotations

import math

import pytest
import torch

import test_batch_ppo
import test_resume
from models.networks import build_network
from training import batch_ppo, selfplay
from training.common.run_utils import TrainingDiverged
from training.ppo.loop import EvalSchedule, check_not_diverged


def test_the_schedule_evaluates_every_interval_and_once_at_the_end() -> None:
    evals = EvalSchedule.start(100)
    assert (evals.next, evals.last) == (100, None)
    assert not evals.due(99, done=False) and evals.due(100, done=False)
    evals.evaluated(250)  # a rollout overshot two intervals: the next is the first one after it
    assert (evals.next, evals.last) == (300, 250)
    assert not evals.due(299, done=False)
    assert not evals.due(250, done=True)  # the end, already evaluated there
    assert evals.due(260, done=True)  # the end, not evaluated there
    assert evals.state() == {"last_eval": 250, "next_eval": 300}


def test_eval_every_zero_evaluates_only_at_the_end() -> None:
    evals = EvalSchedule.start(0)
    assert evals.next == math.inf and evals.state() == {"last_eval": None, "next_eval": None}
    assert not evals.due(10**9, done=False) and evals.due(10**9, done=True)


@pytest.mark.parametrize("saved_every, next_eval, last_eval, expected", [
    (100, 300, 250, 300),     # the same interval: the saved next step
    (50, 300, 250, 350),      # the interval changed: one new interval after the last evaluation
    (100, None, 250, 350),    # no saved next step
    (50, 300, None, 100),     # never evaluated, the interval changed: the first interval
])
def test_a_resumed_schedule(saved_every, next_eval, last_eval, expected) -> None:
    saved = {"config": {"eval_every": saved_every}, "next_eval": next_eval, "last_eval": last_eval}
    evals = EvalSchedule.resumed(100, saved)
    assert (evals.next, evals.last) == (expected, last_eval)


def test_a_weight_that_is_not_finite_stops_the_run() -> None:
    net = build_network("mlp", num_players=2, hidden_sizes=[8])
    check_not_diverged(net, 1)
    with torch.no_grad():
        next(net.parameters())[0, 0] = float("nan")
    with pytest.raises(TrainingDiverged, match="training diverged at update 7.*lower learning_rate"):
        check_not_diverged(net, 7)


def poison_after(module, monkeypatch) -> None:
    """Make ``module.ppo_update`` leave a NaN weight behind (a diverged update)."""
    real = module.ppo_update

    def diverging(net, *args, **kwargs):
        out = real(net, *args, **kwargs)
        with torch.no_grad():
            next(net.parameters()).view(-1)[0] = float("nan")
        return out

    monkeypatch.setattr(module, "ppo_update", diverging)


@pytest.mark.parametrize("trainer", ["selfplay", "batch_ppo"])
def test_both_trainers_exit_1_on_a_diverged_update_and_keep_no_bad_checkpoint(tmp_path, monkeypatch, trainer) -> None:
    module, tests = (selfplay, test_resume) if trainer == "selfplay" else (batch_ppo, test_batch_ppo)
    poison_after(module, monkeypatch)
    args = [f"{k}={v}" for k, v in (("run_dir", tmp_path), ("name", "run"))] + tests.TINY
    with pytest.raises(SystemExit) as stop:
        module.main([arg for pair in (("--set", a) for a in args) for arg in pair])
    # sys.exit with a message: the message goes to stderr and the process exits with status 1
    assert str(stop.value.code).startswith("error: training diverged at update 1: ")
    latest = torch.load(tmp_path / "run" / "checkpoints" / "latest.pt", weights_only=True)
    assert latest and all(torch.isfinite(v).all() for v in latest.values())
