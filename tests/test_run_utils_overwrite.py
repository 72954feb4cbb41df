"""``--overwrite`` deletes only what a run writes (``training.common.run_utils.RunDir``): a folder that
also holds anything else is refused, naming it, and keeps every file; a folder is a run by its
``config.yaml`` or ``checkpoints/latest.json``, not by a ``checkpoints/`` folder alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.common.run_utils import RunDir, RunExistsError, RunFolderError

RUN_WRITES = ["config.yaml", "config.yaml.tmp", ".config.yaml.tmp", "eval.json", "eval.json.tmp", ".eval.json.tmp",
              "learning_curve.png", ".learning_curve.png.tmp", "main_job_eval.json", "main_job_eval.json.tmp",
              "tb/events.out.tfevents.1700000000.host.42.0", "tb/ppo_1/events.out.tfevents.1700000001.host.42.0",
              "checkpoints/latest.pt", "checkpoints/latest.json", "checkpoints/latest.resume.json",
              "checkpoints/latest.resume-tensors.pt", "checkpoints/latest.pt.pending", "checkpoints/latest.json.tmp",
              "checkpoints/.latest.pt.tmp", "checkpoints/step_128.pt", "checkpoints/step_128.json",
              "checkpoints/final.pt", "checkpoints/final.json"]
"""Every file a run (its trainer, ``training.main_job``, ``training.long_run``'s copies) writes in its folder."""


def make(root: Path, files: list[str]) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_a_checkpoints_folder_alone_does_not_make_a_run_and_nothing_is_deleted(tmp_path):
    """The tester's case: ``proj/`` with ``checkpoints/`` and ``src/code.py``; --overwrite deleted src/."""
    proj = tmp_path / "proj"
    (proj / "checkpoints").mkdir(parents=True)
    make(proj, ["src/code.py"])
    run = RunDir(tmp_path, "proj")
    assert not run.holds_run()
    for overwrite in (False, True):
        with pytest.raises(RunFolderError, match=r"^folder .*proj' exists and is not a run folder: it holds \['src'\], "
                                                 r"which a run does not write: choose another name or run_dir, or "
                                                 r"remove them$"):
            run.create(overwrite)
        run.release()
    assert (proj / "src" / "code.py").read_text() == "src/code.py" and (proj / "checkpoints").is_dir()


@pytest.mark.parametrize("extra,shown", [
    ("notes.txt", "notes.txt"), ("src/code.py", "src"), ("checkpoints/mine.pt", "checkpoints/mine.pt"),
    ("checkpoints/old/step_1.pt", "checkpoints/old"), ("tb/readme.md", "tb/readme.md"),
    ("tb/ppo_1/deeper/events.out.tfevents.1.h.1.0", "tb/ppo_1/deeper"), ("config.yaml/x", "config.yaml"),
    (".config.yaml", ".config.yaml"), ("run.lock.bak", "run.lock.bak"),
])
def test_overwrite_refuses_a_run_folder_that_holds_anything_else(tmp_path, extra, shown):
    proj = tmp_path / "proj"
    make(proj, [f for f in RUN_WRITES if f != "config.yaml"] + [extra])
    before = tree(proj)
    run = RunDir(tmp_path, "proj")
    assert run.holds_run()
    with pytest.raises(RunExistsError, match="already holds a run: add --resume to continue it, or --overwrite"):
        run.create(False)
    with pytest.raises(RunFolderError, match=rf"^--overwrite: run folder .*proj' also holds \['{shown}'\], which a "
                                             rf"run does not write: nothing was deleted; choose another name or "
                                             rf"run_dir, or remove them$"):
        run.create(True)
    run.release()
    assert tree(proj) == before


def test_overwrite_deletes_every_file_a_run_writes_and_keeps_the_lock(tmp_path):
    proj = tmp_path / "proj"
    make(proj, RUN_WRITES)
    run = RunDir(tmp_path, "proj")
    try:
        run.create(True)
        assert tree(proj) == ["checkpoints", "run.lock"]
    finally:
        run.release()
    assert tree(proj) == ["checkpoints"]


def test_the_leftovers_of_a_run_need_overwrite_and_a_lone_lock_does_not(tmp_path):
    """A run stopped before its config.yaml left only run files: they are a run's, so --overwrite replaces them."""
    make(tmp_path / "left", ["tb/events.out.tfevents.1.h.1.0"])
    with pytest.raises(RunExistsError, match="already holds a run"):
        RunDir(tmp_path, "left").check_can_start(False)
    RunDir(tmp_path, "left").check_can_start(True)
    make(tmp_path / "locked", [".run.lock.0123abcd.tmp"])
    RunDir(tmp_path, "locked").check_can_start(False)


def test_the_package_s_models_folder_is_never_a_run_to_overwrite(tmp_path):
    """``run_dir=. name=models`` from the repository root: models/ has checkpoints/ but holds no run."""
    import models

    root = Path(models.__file__).resolve().parent
    before = tree(root / "checkpoints")
    run = RunDir(root.parent, "models")
    assert not run.holds_run()
    with pytest.raises(RunFolderError, match=r"exists and is not a run folder: it holds \['__init__.py', "):
        run.check_can_start(True)
    assert tree(root / "checkpoints") == before


def test_the_batch_ppo_command_refuses_the_tester_s_folder(tmp_path, capsys):
    from training import batch_ppo

    proj = tmp_path / "proj"
    (proj / "checkpoints").mkdir(parents=True)
    make(proj, ["src/code.py"])
    argv = [a for item in ["run_dir=" + str(tmp_path), "name=proj", "total_steps=100", "num_tables=8",
                           "rollout_steps=8", "eval_deals=1", "progress=false"] for a in ("--set", item)]
    with pytest.raises(SystemExit) as info:
        batch_ppo.main(["--config", "batch_ppo_default", *argv, "--device", "cpu", "--overwrite"])
    assert info.value.code == 2 and "is not a run folder: it holds ['src']" in capsys.readouterr().err
    assert tree(proj) == ["checkpoints", "src", "src/code.py"]


def test_a_run_folder_is_made_with_the_folders_above_it(tmp_path):
    """``run_dir`` need not exist yet (``runs/`` on a fresh checkout, or deeper)."""
    run = RunDir(tmp_path / "not" / "yet", "there")
    run.create(overwrite=False)
    try:
        assert run.checkpoints.is_dir()
    finally:
        run.release()


def test_the_evaluation_s_win_rate_is_the_agent_s_own():
    """``evaluate_agent``'s win rate is the evaluated agent's share of the wins (seat 0 of each
    rotation), as the duplicate records count them, not an opponent's."""
    import numpy as np

    from training.common.run_utils import evaluate_agent
    from tt_env.engine.rules import Rules
    from tt_env.evaluation.duplicate import run_deals

    rules = Rules(num_players=3, rounds=(1, 2))
    result, = evaluate_agent("expert-v0", ["random-v0"], rules, deals=4, seed=5)
    records = run_deals(["expert-v0", "random-v0", "random-v0"], rules, 4, 5)
    assert result.win_rate == np.mean([g.win_shares[0] for deal in records for g in deal]) > 0.5
