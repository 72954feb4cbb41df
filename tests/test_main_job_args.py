"""``python -m training.main_job`` refuses bad arguments and an unwritable run folder before training."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")
from training import main_job  # noqa: E402


@pytest.fixture
def no_training(monkeypatch):
    """Fail the test if training or an evaluation starts."""
    def refuse(*args, **kwargs):
        raise AssertionError("training or an evaluation started before the arguments were checked")

    monkeypatch.setattr(main_job, "train", refuse)
    monkeypatch.setattr(main_job, "evaluation_table", refuse)


def _refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main_job.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("argv, message", [
    (["--deals", "0"], "argument --deals: 0 is not allowed: use an integer >= 1"),
    (["--seed", "-2"], "argument --seed: -2 is not allowed: use a seed, an integer >= 0"),
    (["--workers", "0"], "argument --workers: 0 is not allowed: use an integer >= 1"),
    (["--workers", "two"], "argument --workers: 'two' is not an integer"),
    (["--set", "no_such_key=1"], "no_such_key"),
    (["--config", "missing.yaml"], "config file 'missing.yaml' does not exist"),
    (["--set", "num_players=3"], "num_players=3 is not allowed here: the main job trains and evaluates 2 players"),
])
def test_bad_arguments_are_refused_before_training(argv, message, capsys, no_training):
    assert message in _refused(argv, capsys)


def test_a_run_folder_below_a_file_is_refused_before_training(tmp_path, capsys, no_training):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    line = _refused(["--set", f"run_dir={blocker}"], capsys)
    assert f"run folder {blocker / 'main_job'}" in line and f"{blocker} is a file, not a folder" in line


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_a_read_only_run_folder_is_refused_before_training(tmp_path, capsys, no_training):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert f"no permission to write in {locked}" in _refused(["--set", f"run_dir={locked}"], capsys)
    finally:
        locked.chmod(0o755)


def test_skip_training_needs_the_checkpoint(tmp_path, capsys, no_training):
    line = _refused(["--skip-training", "--set", f"run_dir={tmp_path}"], capsys)
    assert "final.pt does not exist" in line and "without --skip-training" in line


def final_checkpoint(run_dir, **rules):
    """A small run's ``final.pt`` (with its sidecar) in ``run_dir/main_job``, trained with ``rules``."""
    from models.checkpoint import save_checkpoint
    from models.networks import build_network
    from tt_env.engine.rules import Rules
    from tt_env.observation import OBS_VERSION

    return save_checkpoint(run_dir / "main_job" / "checkpoints" / "final.pt",
                           build_network("mlp", num_players=2, hidden_sizes=[8]), obs_version=OBS_VERSION,
                           rules=Rules(**rules).to_dict(), training_steps=1)


@pytest.mark.parametrize("natural", [False, True])
def test_the_evaluation_plays_the_run_s_scoring_and_the_shipped_agent_where_it_fits(tmp_path, monkeypatch, capsys,
                                                                                  natural):
    """The evaluation games are the run's rules over every round; ``ppo-2p-v0`` (trained without
    ``meld_needs_natural``) plays beside the new agent only where it fits them, else is left out by name."""
    seen = {}

    def table(agents, opponents, deals, seed, workers, rules):
        seen.update(agents=list(agents), rules=rules)
        return []

    monkeypatch.setattr(main_job, "evaluation_table", table)
    monkeypatch.setattr(main_job, "print_table", lambda rows: None)
    final_checkpoint(tmp_path, meld_needs_natural=natural)
    main_job.main(["--skip-training", "--workers", "1", "--set", f"run_dir={tmp_path}",
                   "--set", f"rules.meld_needs_natural={str(natural).lower()}"])
    assert seen["rules"].meld_needs_natural is natural and seen["rules"].rounds == tuple(range(1, 12))
    err = capsys.readouterr().err
    if natural:
        assert seen["agents"] == ["main_job (new)"]
        assert "ppo-2p-v0 left out of the evaluation: " in err and "meld_needs_natural" in err
    else:
        assert seen["agents"] == ["main_job (new)", "ppo-2p-v0 (shipped)"] and "left out" not in err


def test_skip_training_refuses_other_scoring_than_the_run_s(tmp_path, capsys, no_training):
    """--skip-training with --set rules.aces=high_or_low on a run trained with aces='low' stopped in the
    evaluation with a ValueError traceback; now one line saying the run was trained with other rules."""
    final_checkpoint(tmp_path)
    line = _refused(["--skip-training", "--set", f"run_dir={tmp_path}", "--set", "rules.aces=high_or_low"], capsys)
    assert "was trained with aces='low', but the game has aces='high_or_low'" in line
    assert "the run was trained with other rules than this config's" in line and "allow_rule_mismatch" not in line


def test_skip_training_with_overwrite_is_refused(tmp_path, capsys, no_training):
    """--skip-training --overwrite silently ignored --overwrite (nothing is trained); now refused in one line."""
    final_checkpoint(tmp_path)
    line = _refused(["--skip-training", "--overwrite", "--set", f"run_dir={tmp_path}"], capsys)
    assert line.endswith("error: --overwrite is not allowed with --skip-training: nothing is trained, so nothing "
                         "would be overwritten; give one of them")
    assert (tmp_path / "main_job" / "checkpoints" / "final.pt").exists()
