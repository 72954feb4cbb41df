"""training.common.trainer_cli: the PPO trainers' end-of-run report (the speed benchmarks read its figure)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from training.common.trainer_cli import report_end


def fake_run(tmp_path: Path) -> SimpleNamespace:
    return SimpleNamespace(learn_sps=None, stopped_by=None, latest=tmp_path / "latest.pt",
                           checkpoints=tmp_path, curve_png=tmp_path / "curve.png")


def test_a_finished_run_records_its_learning_speed(tmp_path, capsys) -> None:
    run = report_end(fake_run(tmp_path), step=3_000, start_step=1_000, seconds=4.0, total_steps=3_000,
                     stopped_by=None, command=None, trainer="training/selfplay.py")
    assert run.learn_sps == pytest.approx(500.0) and run.stopped_by is None
    out = capsys.readouterr().out
    assert "steps/s during learning: 500" in out and "final.pt" in out


def test_a_stopped_run_says_how_to_resume(tmp_path, capsys) -> None:
    run = report_end(fake_run(tmp_path), step=10, start_step=0, seconds=1.0, total_steps=100, stopped_by=2,
                     command="python -m training.batch_ppo --resume", trainer="training/batch_ppo.py")
    assert run.stopped_by == 2 and run.learn_sps == pytest.approx(10.0)
    out = capsys.readouterr().out
    assert "stopped at step 10 of 100" in out and "resume with: python -m training.batch_ppo --resume" in out


def test_a_stopped_run_names_the_step_it_resumes_from(tmp_path, capsys) -> None:
    """SB3 saves at its last update: the message names that step, the speed counts every step learnt."""
    run = fake_run(tmp_path)
    run.path = tmp_path
    run = report_end(run, step=1_200, start_step=200, seconds=2.0, total_steps=5_000, stopped_by=15,
                     command=None, trainer="training/train_sb3.py", saved_step=1_024)
    assert run.learn_sps == pytest.approx(500.0)
    out = capsys.readouterr().out
    assert "stopped at step 1024 of 5000" in out
    assert f"python training/train_sb3.py --config {tmp_path / 'config.yaml'} --resume" in out


@pytest.mark.parametrize("module", ["selfplay", "batch_ppo", "train_sb3"])
def test_help_opens_with_the_trainer_s_one_line_summary(module: str, capsys) -> None:
    import importlib

    trainer = importlib.import_module(f"training.{module}")
    with pytest.raises(SystemExit) as stop:
        trainer.main(["--help"])
    assert stop.value.code == 0
    summary = " ".join(trainer.__doc__.split("\n\n")[0].split())
    assert summary in " ".join(capsys.readouterr().out.split())
