"""Every old import path of a moved module still works for one release: it warns with
``DeprecationWarning`` and is the new module (so every name, private ones included, is there)."""

import importlib
import importlib.util
import subprocess
import sys
import warnings

import pytest

MOVED = [
    ("tt_env.observation_checks", "tt_env.observation.checks"),
    ("tt_env.agents.observation_view", "tt_env.observation.decode"),
    ("training.duplicate", "tt_env.evaluation.duplicate"),
    ("training.eval_stats", "tt_env.evaluation.stats"),
    ("tt_env.json_input", "tt_env.jsonio"),
    ("tt_env.simulation", "tt_env.search.simulation"),
    ("tt_env.state", "tt_env.observation.state"),
    ("tt_env.replay", "tt_env.ui.replay"),
    pytest.param("tt_env.openspiel_game", "tt_env.openspiel.game",
                 marks=pytest.mark.skipif(importlib.util.find_spec("pyspiel") is None, reason="needs open_spiel")),
    ("training.config", "training.common.config"),
    ("training.config_files", "training.common.config_files"),
    ("training.device", "training.common.device"),
    ("training.resume", "training.common.resume"),
    ("training.run_lock", "training.common.run_lock"),
    ("training.run_utils", "training.common.run_utils"),
    ("training.selfplay_tables", "training.ppo.selfplay_tables"),
    ("training.batch_config", "training.ppo.batch_config"),
    *[pytest.param(old, new, marks=pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray"))
      for old, new in [("training.rllib_env", "training.rllib.env"), ("training.rllib_masking", "training.rllib.masking")]],
]


@pytest.mark.parametrize("old, new", MOVED)
def test_old_path_warns_and_is_the_new_module(old: str, new: str) -> None:
    new_module = importlib.import_module(new)
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old_module = importlib.import_module(old)
    assert old_module is new_module
    assert any(issubclass(w.category, DeprecationWarning) and new in str(w.message) for w in caught), \
        [str(w.message) for w in caught]


def test_the_changelog_lists_every_move() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "CHANGELOG.md").read_text()
    for entry in MOVED:
        old, new = entry.values if hasattr(entry, "values") else entry
        assert f"`{old}`" in text and f"`{new}`" in text, (old, new)


@pytest.mark.parametrize("entry, library", [("training.evaluate", "tt_env.evaluation.evaluator"),
                                            ("training.leaderboard", "tt_env.evaluation.leaderboard")])
def test_the_command_entry_points_stay_and_give_the_library(entry: str, library: str) -> None:
    """``python -m training.evaluate`` and ``training.leaderboard`` are commands, not deprecated."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert importlib.import_module(entry) is importlib.import_module(library)


def test_python_m_tt_env_replay_still_runs() -> None:
    """``python -m tt_env.replay`` (published before the ui regroup) runs the replay, with a warning."""
    done = subprocess.run([sys.executable, "-m", "tt_env.replay", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "usage" in done.stdout.lower()
    assert "DeprecationWarning" in done.stderr and "tt_env.ui.replay" in done.stderr


def test_the_old_ppo_module_names_warn_from_the_package() -> None:
    """``training.ppo`` was a module; it is the package of the PPO code now, and its old names
    (``from training.ppo import Buffer, ppo_update``) still come, with a warning."""
    pytest.importorskip("torch")
    update = importlib.import_module("training.ppo.update")
    for name in ("Buffer", "ppo_update"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(f"from training.ppo import {name} as got", namespace := {})
        assert namespace["got"] is getattr(update, name)
        assert any(issubclass(w.category, DeprecationWarning) and "training.ppo.update" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from training.ppo import batch_config  # a submodule: no warning
    assert batch_config is importlib.import_module("training.ppo.batch_config")
    with pytest.raises(ImportError):
        exec("from training.ppo import no_such_name", {})


MOVED_NAMES = [  # a name moved out of a module that stays: still importable there, without a warning
    ("training.selfplay", "training.ppo.selfplay_tables", ["Table", "SelfPlay", "LEARNER"]),
    ("tt_env.engine.melds_py", "tt_env.engine.meld_inputs", ["check_input", "check_cards", "MAX_CARDS", "ALL_DRAWS"]),
]


@pytest.mark.parametrize("old, new, names", MOVED_NAMES)
def test_moved_names_stay_importable_at_the_old_module(old: str, new: str, names: list) -> None:
    if old.startswith("training.selfplay"):
        pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(old_module, name) is getattr(new_module, name), name
