"""``benchmarks/baselines.py --resume`` after an interrupted run (issue 25: one-line bugs there
survived): an unfinished run that cannot go on starts again from scratch, its stale files go,
finished runs are kept and skipped (a stand-in trainer, so this takes a second); a real batch-ppo
run stopped mid-chunk goes on from its run folder as if never stopped."""

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


def test_an_unfinished_batch_ppo_run_goes_on_from_where_it_stopped(tmp_path, monkeypatch, capsys):
    """A real batch-ppo run stopped in the middle of its second chunk: ``--resume`` continues it
    from its run folder, and its evaluations are those of a run that never stopped."""
    import signal

    from training import batch_ppo

    cli = benchmark_cli()
    args = ["--config", str(SMOKE), "--algos", "batch-ppo", "--seeds", "0"]
    assert cli.main(args + ["--out", str(tmp_path / "whole")]) == 0
    whole = json.loads((tmp_path / "whole" / "results" / "batch-ppo-seed0.json").read_text())
    real, calls = batch_ppo.ppo_update, {"n": 0, "stop_at": 0}

    def counting(*a, **k):  # counts updates; raises SIGINT (batch_ppo saves and stops) at stop_at
        calls["n"] += 1
        if calls["n"] == calls["stop_at"]:
            signal.raise_signal(signal.SIGINT)
        return real(*a, **k)

    monkeypatch.setattr(batch_ppo, "ppo_update", counting)
    first = load_config(BaselinesConfig, SMOKE, ["algos=[batch-ppo]", "seeds=[0]", "eval_points=1",
                                                 f"steps={whole['evaluations'][0]['step']}"])
    runner.run_one(first, "batch-ppo", 0, tmp_path / "count", log=lambda *_: None)  # the first chunk alone
    calls.update(stop_at=calls["n"] * 2 + 2, n=calls["n"])  # the whole chunk again, then 2 updates of the second
    out = tmp_path / "cut"
    assert cli.main(args + ["--out", str(out)]) == 130
    partial = json.loads((out / "results" / "batch-ppo-seed0.partial.json").read_text())
    assert [e["step"] for e in partial["evaluations"]] == [whole["evaluations"][0]["step"]]
    carried = 10_000.0  # the stopped process's wall time, which the continued run counts on from
    partial["evaluations"][0]["wall_seconds"] = carried
    (out / "results" / "batch-ppo-seed0.partial.json").write_text(json.dumps(partial))
    monkeypatch.setattr(batch_ppo, "ppo_update", real)
    capsys.readouterr()
    assert cli.main(args + ["--out", str(out), "--resume"]) == 0
    assert f"batch-ppo-seed0: continuing from step {partial['evaluations'][0]['step']}" in capsys.readouterr().out
    done = json.loads((out / "results" / "batch-ppo-seed0.json").read_text())
    assert done["status"] == "done" and len(done["continued"]) == 1 and done["steps"] == whole["steps"]
    assert [(e["step"], e["results"]) for e in done["evaluations"]] == \
        [(e["step"], e["results"]) for e in whole["evaluations"]]
    assert done["evaluations"][0]["wall_seconds"] == carried
    assert carried < done["evaluations"][1]["wall_seconds"] <= done["wall_seconds"] < carried + 600
    assert not (out / "results" / "batch-ppo-seed0.partial.json").exists()


def test_only_a_readable_partial_result_of_the_same_run_is_continued(tmp_path, fake_frameworks):
    out = tmp_path / "bench"
    cfg = interrupted_benchmark(out)
    point = {"step": 1, "learn_seconds": 1.0, "wall_seconds": 1.0, "results": []}
    partial = {"algo": "ppo", "seed": 1, "status": "running", "hyperparameters": cfg.params("ppo"),
               "evaluations": [point]}
    path = out / "results" / "ppo-seed1.partial.json"
    path.write_text(json.dumps(partial))
    assert runner.unfinished_result(out, "ppo", 1, cfg) == partial
    assert runner.unfinished_result(out, "ppo", 0, cfg) is None  # another seed's
    for changed in ({"hyperparameters": {"other": 1}}, {"algo": "batch-ppo"}, {"evaluations": []},
                    {"evaluations": [{**point, "wall_seconds": None}]}):
        path.write_text(json.dumps({**partial, **changed}))
        assert runner.unfinished_result(out, "ppo", 1, cfg) is None, changed
    path.write_text("{not json")
    assert runner.unfinished_result(out, "ppo", 1, cfg) is None


def test_our_trainers_continue_only_from_a_saved_run(tmp_path):
    from training.baselines import make_trainer
    from training.baselines.common import RunContext

    cfg = load_config(BaselinesConfig, SMOKE)
    for algo in ("ppo", "batch-ppo", "sb3-maskable-ppo"):
        ctx = RunContext(seed=0, num_players=2, work_dir=tmp_path / algo)
        trainer = make_trainer(algo, cfg.params(algo), ctx, cfg.steps, cfg.eval_points)
        assert not trainer.continue_run(150, 2.5) and trainer.steps == 0, algo  # nothing saved yet
        saved = ctx.work_dir / "run" / "checkpoints" / "latest.resume.json"
        saved.parent.mkdir(parents=True)
        saved.write_text("{}")
        assert trainer.continue_run(150, 2.5), algo
        assert (trainer.steps, trainer.learn_seconds, trainer.resuming) == (150, 2.5, True), algo
        trainer.close()
