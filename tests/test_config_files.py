"""``--config`` finds the shipped configs by name from any directory (they are package data in a wheel)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from training.common import config_files
from training.common.config_files import config_dir, resolve_config, shipped_config, shipped_configs

ROOT = Path(__file__).resolve().parents[1]
REPO_CONFIGS = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))


def test_the_shipped_configs_are_the_repository_configs():
    assert REPO_CONFIGS and shipped_configs() == REPO_CONFIGS
    assert config_dir().resolve() == (ROOT / "configs").resolve()  # a checkout reads configs/ itself


@pytest.mark.parametrize("text", ["main_job", "main_job.yaml", "configs/main_job.yaml"])
def test_a_shipped_config_by_name_from_another_directory(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_config(text) == config_dir() / "main_job.yaml"


def test_an_existing_file_wins_over_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    mine = tmp_path / "configs" / "main_job.yaml"
    mine.write_text("total_steps: 5\n")
    assert resolve_config("configs/main_job.yaml") == Path("configs/main_job.yaml")


@pytest.mark.parametrize("text", ["nowhere/main_job.yaml", "/abs/main_job.yaml", "configs/sub/main_job.yaml",
                                  "main_job.yml", "main_jobs", "configs/../main_job.yaml"])
def test_other_missing_paths_are_refused_naming_the_shipped_configs(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert shipped_config(text) is None
    shipped = ", ".join(REPO_CONFIGS)
    with pytest.raises(FileNotFoundError, match=r"does not exist, and it is not the name of a shipped config "
                                                + re.escape(f"(shipped: {shipped})")):
        resolve_config(text)


def test_an_installed_package_reads_its_own_configs_folder(tmp_path, monkeypatch):
    """In a wheel the configs are ``training/configs/*.yaml``: that folder is used when it exists."""
    package = tmp_path / "training"
    (package / "configs").mkdir(parents=True)
    (package / "configs" / "only_this.yaml").write_text("seed: 3\n")
    monkeypatch.setattr(config_files, "files", lambda name: package)
    assert config_dir() == package / "configs" and shipped_configs() == ["only_this"]
    monkeypatch.chdir(tmp_path)
    assert resolve_config("configs/only_this.yaml") == package / "configs" / "only_this.yaml"


@pytest.mark.parametrize("name", REPO_CONFIGS)
def test_every_shipped_config_loads_by_name_from_another_directory(name, tmp_path, monkeypatch):
    pytest.importorskip("yaml")
    from training.baselines.config import BaselinesConfig
    from training.ppo.batch_config import BatchPPOConfig
    from training.common.config import SB3Config, SelfPlayConfig, load_config
    from training.train_rllib import RLlibConfig

    monkeypatch.chdir(tmp_path)
    prefixes = {"rllib": RLlibConfig, "sb3": SB3Config, "baselines": BaselinesConfig,
                "batch_ppo": BatchPPOConfig}
    cls = next((c for prefix, c in prefixes.items() if name.startswith(prefix)), SelfPlayConfig)
    assert load_config(cls, name).to_dict() == load_config(cls, ROOT / "configs" / f"{name}.yaml").to_dict()
