"""``training.ppo.loop`` (what selfplay.py and batch_ppo.py share: the network, divergence, the bar) and
``training.common.evaluations`` (what every trainer shares: the evaluation schedule and its files)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

import batch_ppo_runs
import test_resume
from models.checkpoint import read_metadata, save_checkpoint
from models.networks import build_network
from training import batch_ppo, selfplay
from training.common import evaluations
from training.common.config import ConfigError, SelfPlayConfig
from training.common.evaluations import EvalSchedule
from training.common.resume import StopSignals
from training.common.run_utils import EvalResult, TrainingDiverged
from training.ppo import loop
from training.ppo.loop import build_net, check_not_diverged
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION


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
    module, tests = (selfplay, test_resume) if trainer == "selfplay" else (batch_ppo, batch_ppo_runs)
    poison_after(module, monkeypatch)
    args = [f"{k}={v}" for k, v in (("run_dir", tmp_path), ("name", "run"))] + tests.TINY
    with pytest.raises(SystemExit) as stop:
        module.main([arg for pair in (("--set", a) for a in args) for arg in pair])
    # sys.exit with a message: the message goes to stderr and the process exits with status 1
    assert str(stop.value.code).startswith("error: training diverged at update 1: ")
    latest = torch.load(tmp_path / "run" / "checkpoints" / "latest.pt", weights_only=True)
    assert latest and all(torch.isfinite(v).all() for v in latest.values())


def test_build_net_follows_the_config() -> None:
    """The network is the configured one: its kind, its sizes and the players it reads."""
    cfg = SelfPlayConfig(network="mlp", network_kwargs={"hidden_sizes": [12]}, num_players=3)
    net = build_net(cfg)
    first = next(m for m in net.modules() if isinstance(m, torch.nn.Linear))
    assert (first.in_features, first.out_features) == (net.input_size, 12)
    assert net.input_size == build_network("mlp", num_players=3, hidden_sizes=[12]).input_size
    assert net.input_size != build_network("mlp", num_players=2, hidden_sizes=[12]).input_size


def test_an_init_checkpoint_of_another_observation_layout_is_refused(tmp_path) -> None:
    net = build_network("mlp", num_players=2, hidden_sizes=[12])
    path = save_checkpoint(tmp_path / "old.pt", net, obs_version=OBS_VERSION + 1, rules=Rules().to_dict(),
                           training_steps=0)
    cfg = SelfPlayConfig(network="mlp", network_kwargs={"hidden_sizes": [12]}, init_checkpoint=str(path))
    with pytest.raises(ConfigError, match=r"^init_checkpoint='.*old.pt': .*observation layout"):
        build_net(cfg)


class RecordingWriter:
    def __init__(self) -> None:
        self.scalars: list[tuple[str, float, int]] = []

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.scalars.append((tag, value, step))


def test_an_evaluation_is_logged_saved_and_recorded_in_the_checkpoints(tmp_path, monkeypatch) -> None:
    """``evaluate_and_save``: both ``step_N.pt`` and ``final.pt`` carry the evaluation (step,
    deals, full games, results), the trainer and the config; ``log_evaluation`` logs each
    opponent's score difference and win rate at the step."""
    results = [EvalResult("greedy-v0", 4, 8, -3.5, 1.0, 0.625), EvalResult("random-v0", 4, 8, -9.0, 2.0, 1.0)]
    monkeypatch.setattr(evaluations, "evaluate_agent", lambda *args, **kwargs: results)
    recorded = []
    run = SimpleNamespace(checkpoints=tmp_path, record_eval=lambda step, res: recorded.append((step, res)))
    cfg = SelfPlayConfig(network="mlp", network_kwargs={"hidden_sizes": [8]}, eval_deals=4)
    net = build_net(cfg)
    assert evaluations.evaluate_and_save(net, cfg, run, 64, True, StopSignals(), "selfplay") == results
    assert recorded == [(64, results)]
    for name in ("step_64.pt", "final.pt"):
        meta = read_metadata(tmp_path / name)
        assert meta["evaluation"] == {"step": 64, "deals": 4, "full_game": True,
                                      "results": [r.to_dict() for r in results]}
        assert meta["extra"] == {"trainer": "selfplay", "config": cfg.to_dict()}
    writer = RecordingWriter()
    evaluations.log_evaluation(writer, results, 64)
    assert writer.scalars == [("eval/greedy-v0/score_diff", -3.5, 64), ("eval/greedy-v0/win_rate", 0.625, 64),
                              ("eval/random-v0/score_diff", -9.0, 64), ("eval/random-v0/win_rate", 1.0, 64)]


def test_the_progress_bar_counts_steps_from_where_the_run_is() -> None:
    assert loop.progress_bar(SelfPlayConfig(progress=False), 0) is None
    bar = loop.progress_bar(SelfPlayConfig(progress=True, total_steps=500, name="run"), 800)
    try:
        assert (bar.total, bar.n, bar.unit, bar.desc) == (500, 500, "step", "run")
    finally:
        bar.close()
