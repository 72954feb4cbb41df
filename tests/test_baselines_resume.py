"""``benchmarks/baselines.py --resume`` after an interrupted run (issue 25: one-line bugs there
survived): the unfinished run starts again from scratch, its stale files go, finished runs are kept
and skipped. The frameworks are replaced by a stand-in trainer, so this takes a second."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from test_baselines import SMOKE, benchmark_cli
from training.baselines import runner
from training.baselines.config import BaselinesConfig
from training.common.config import load_config


@dataclass
class FakeResult:
    opponent: str
    score_diff: float = 1.0
    ci95: float = 0.5

    def to_dict(self) -> dict:
        return {"opponent": self.opponent, "score_diff": self.score_diff, "ci95": self.ci95, "deals": 1,
                "games": 2}


class FakeTrainer:
    made: list = []

    def __init__(self, algo, params, ctx, steps, eval_points) -> None:
        self.steps, self.learn_seconds, self.ctx = 0, 0.0, ctx
        self.closed = False
        (ctx.work_dir / "fresh.bin").write_bytes(b"new")
        FakeTrainer.made.append(self)

    def train_until(self, target: int) -> None:
        self.steps, self.learn_seconds = target, self.learn_seconds + 1.0

    def agent(self):
        return object()

    def close(self) -> None:
        self.closed = True


@pytest.fixture()
def fake_frameworks(monkeypatch):
    FakeTrainer.made = []
    monkeypatch.setattr(runner, "make_trainer", FakeTrainer)
    monkeypatch.setattr("training.common.run_utils.evaluate_agent",
                        lambda agent, opponents, rules, deals, seed, batch_size: [FakeResult(o) for o in opponents])
    return FakeTrainer


def interrupted_benchmark(out):
    """A benchmark of ppo with seeds 0 and 1: seed 0 finished, seed 1 stopped after one evaluation."""
    cfg = load_config(BaselinesConfig, SMOKE, ["algos=[ppo]", "seeds=[0, 1]"])
    (out / "results").mkdir(parents=True)
    (out / "runs" / "ppo-seed1").mkdir(parents=True)
    (out / "runs" / "ppo-seed1" / "stale.bin").write_bytes(b"old")
    (out / "config.json").write_text(json.dumps(cfg.to_dict()))
    point = {"step": cfg.steps, "learn_seconds": 9.0, "wall_seconds": 9.0, "eval_seconds": 1.0,
             "results": [FakeResult(o).to_dict() for o in cfg.eval_opponents]}
    finished = {"algo": "ppo", "seed": 0, "status": "done", "evaluations": [point], "steps": cfg.steps,
                "learn_seconds": 9.0, "steps_per_second": 1.0, "wall_seconds": 9.0, "marker": "kept"}
    (out / "results" / "ppo-seed0.json").write_text(json.dumps(finished))
    (out / "results" / "ppo-seed1.partial.json").write_text(json.dumps(
        {"algo": "ppo", "seed": 1, "status": "running", "evaluations": [{"step": 1, "results": []}]}))
    return cfg


def test_run_one_starts_an_unfinished_run_again_from_scratch(tmp_path, fake_frameworks):
    out = tmp_path / "bench"
    cfg = interrupted_benchmark(out)
    result = runner.run_one(cfg, "ppo", 1, out, log=lambda *_: None)
    work = out / "runs" / "ppo-seed1"
    assert not (work / "stale.bin").exists() and (work / "fresh.bin").exists()
    assert result["status"] == "done" and result["steps"] == cfg.eval_steps()[-1]
    assert [e["step"] for e in result["evaluations"]] == cfg.eval_steps()
    saved = json.loads((out / "results" / "ppo-seed1.json").read_text())
    assert saved["status"] == "done" and saved["evaluations"] == result["evaluations"]
    assert not (out / "results" / "ppo-seed1.partial.json").exists()
    assert fake_frameworks.made[-1].closed


def test_resume_keeps_finished_runs_and_redoes_the_interrupted_one(tmp_path, fake_frameworks, capsys):
    out = tmp_path / "bench"
    interrupted_benchmark(out)
    cli = benchmark_cli()
    assert cli.main(["--config", str(SMOKE), "--out", str(out), "--resume", "--algos", "ppo", "--seeds", "0", "1"]) == 0
    printed = capsys.readouterr().out
    assert "ppo-seed0: finished before, skipped" in printed and "ppo-seed1: training" in printed
    assert len(fake_frameworks.made) == 1  # only the interrupted run trained
    report = json.loads((out / "baselines.json").read_text())
    runs = {r["seed"]: r for r in report["runs"]}
    assert runs[0]["marker"] == "kept" and runs[1]["status"] == "done"
    assert sorted(p.name for p in (out / "results").iterdir()) == ["ppo-seed0.json", "ppo-seed1.json"]
