"""benchmarks/baselines.py never loses a folder it did not write and never shows a traceback for a
damaged one (issue 25): ``--overwrite`` deletes only a plain baselines run, after every other check;
``--out`` a file, and truncated ``config.json`` or result files under ``--resume`` or ``--report``,
are one line with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_baselines import SMOKE, benchmark_cli

ARGS = ["--config", str(SMOKE), "--algos", "ppo", "--seeds", "0"]


@pytest.fixture(scope="module")
def cli():
    return benchmark_cli()


def plain_run(out: Path) -> Path:
    """A folder as an interrupted baselines run leaves it."""
    from training.baselines.config import BaselinesConfig
    from training.common.config import load_config

    (out / "results").mkdir(parents=True)
    (out / "runs" / "ppo-seed0").mkdir(parents=True)
    (out / "runs" / "ppo-seed0" / "model.pt").write_bytes(b"x")
    (out / "config.json").write_text(json.dumps(load_config(BaselinesConfig, SMOKE).to_dict()))
    (out / "results" / "ppo-seed0.json").write_text(json.dumps(
        {"algo": "ppo", "seed": 0, "status": "done", "evaluations": []}))
    return out


def refused(cli, capsys, argv, *words) -> str:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return err


def test_overwrite_keeps_a_folder_that_is_not_plainly_a_baselines_run(cli, tmp_path, capsys):
    out = plain_run(tmp_path / "bench")
    (out / "thesis.tex").write_text("years of work")
    refused(cli, capsys, [*ARGS, "--out", str(out), "--overwrite"], "not plainly a baselines run", "thesis.tex")
    assert (out / "thesis.tex").read_text() == "years of work" and (out / "config.json").exists()

    other = tmp_path / "notes"
    other.mkdir()
    (other / "config.json").write_text('{"name": "my app"}')
    (other / "data.csv").write_text("1,2")
    refused(cli, capsys, [*ARGS, "--out", str(other), "--overwrite"], "not plainly a baselines run")
    assert (other / "data.csv").exists()

    only_config = tmp_path / "app"
    only_config.mkdir()
    (only_config / "config.json").write_text('{"name": "my app"}')
    refused(cli, capsys, [*ARGS, "--out", str(only_config), "--overwrite"], "not a baselines config")
    assert (only_config / "config.json").exists()

    odd = plain_run(tmp_path / "odd")
    (odd / "results" / "notes.txt").write_text("mine")
    refused(cli, capsys, [*ARGS, "--out", str(odd), "--overwrite"], "notes.txt")
    assert (odd / "results" / "notes.txt").exists()


def test_overwrite_checks_the_config_before_deleting(cli, tmp_path, capsys):
    out = plain_run(tmp_path / "bench")
    refused(cli, capsys, [*ARGS, "--out", str(out), "--overwrite", "--set",
                          "hyperparameters={ppo: {anneal_lr: true, network: mlp}}"], "anneal_lr must be false")
    assert (out / "runs" / "ppo-seed0" / "model.pt").exists()


def test_overwrite_deletes_a_plain_baselines_run(cli, tmp_path, capsys, monkeypatch):
    out = plain_run(tmp_path / "bench")

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_one", stopped)
    assert cli.main([*ARGS, "--out", str(out), "--overwrite"]) == 130
    assert not (out / "runs" / "ppo-seed0" / "model.pt").exists()
    assert not (out / "results" / "ppo-seed0.json").exists() and (out / "config.json").exists()


def test_out_an_existing_file_is_one_line(cli, tmp_path, capsys):
    out = tmp_path / "file.txt"
    out.write_text("mine")
    for extra in ([], ["--resume"], ["--overwrite"], ["--report"]):
        refused(cli, capsys, [*ARGS, "--out", str(out), *extra], "--out", "is a file, not a folder")
    assert out.read_text() == "mine"


@pytest.mark.parametrize("flag", ["--resume", "--report"])
@pytest.mark.parametrize("damaged", ["config.json", "results/ppo-seed0.json", "results/ppo-seed0.partial.json"])
def test_truncated_files_under_resume_and_report_are_one_line(cli, tmp_path, capsys, flag, damaged):
    out = plain_run(tmp_path / "bench")
    target = out / damaged
    text = target.read_text() if target.exists() else '{"algo": "ppo", "seed": 0, "status": "running"}'
    target.write_text(text[: len(text) // 2])
    refused(cli, capsys, [*ARGS, "--out", str(out), flag], flag, Path(damaged).name, "truncated")
    assert target.exists()


def test_report_refuses_a_config_json_that_is_not_a_baselines_config(cli, tmp_path, capsys):
    out = plain_run(tmp_path / "bench")
    (out / "config.json").write_text("[1, 2]")
    refused(cli, capsys, [*ARGS, "--out", str(out), "--report"], "not a baselines config")
    (out / "config.json").write_text('{"steps": "many"}')
    refused(cli, capsys, [*ARGS, "--out", str(out), "--report"], "--report", "steps")
