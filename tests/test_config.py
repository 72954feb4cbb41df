"""Config files and overrides: unknown keys and bad values are rejected before training (issue 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.config import ConfigError, SB3Config, SelfPlayConfig, apply_overrides, load_config

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.mark.parametrize("name", ["selfplay_default.yaml", "sb3_default.yaml", "main_job.yaml", "ppo_2p_v0.yaml"])
def test_shipped_configs_load(name):
    cls = SB3Config if name.startswith("sb3") else SelfPlayConfig
    cfg = load_config(cls, CONFIGS / name)
    assert cfg.total_steps > 0


def test_defaults_file_equals_dataclass_defaults():
    assert load_config(SelfPlayConfig, CONFIGS / "selfplay_default.yaml") == SelfPlayConfig()
    assert load_config(SB3Config, CONFIGS / "sb3_default.yaml") == SB3Config()


@pytest.mark.parametrize("overrides,message", [
    (["total_step=5"], r"unknown config key\(s\) \['total_step'\]: allowed are .*'total_steps'"),
    (["gamma=1.5"], r"gamma=1.5 is not allowed: use a finite float in \(0, 1\]"),
    (["num_envs=0"], "num_envs=0 is not allowed"),
    (["num_envs=2.5"], "num_envs=2.5 has the wrong type"),
    (["anneal_lr=maybe"], "anneal_lr='maybe' has the wrong type"),
    (["network=transformer"], r"network='transformer' is not allowed: use one of \['cardnet', 'mlp'\]"),
    (["network_kwargs.depth=3"], r"network_kwargs: unknown option\(s\) \['depth'\]"),
    (["num_players=9"], "num_players=9 is not allowed: use an int from 2 to 8"),
    (["rules.rounds=[3, 2]"], "rules: "),
    (["rules.aces=sometimes"], "rules: "),
    (["rules.colour=red"], "rules: "),
    (["opponents=[greedy-v9]"], "opponents='greedy-v9' is not allowed: use registered agents"),
    (["reward_mode=score"], "reward_mode='score' is not allowed"),
    (["selfplay_prob=2"], r"selfplay_prob=2.0 is not allowed: use a finite float in \[0, 1\]"),
    (["init_checkpoint=/nonexistent.pt"], "init_checkpoint='/nonexistent.pt' is not allowed"),
    (["nokey"], "is not key=value"),
])
def test_bad_values_are_rejected(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(SelfPlayConfig, None, overrides)


def test_sb3_specific_checks():
    with pytest.raises(ConfigError, match="vec_env='threads' is not allowed"):
        load_config(SB3Config, None, ["vec_env=threads"])
    with pytest.raises(ConfigError, match=r"unknown config key\(s\) \['selfplay_prob'\]"):
        load_config(SB3Config, None, ["selfplay_prob=0.5"])


def test_overrides_parse_yaml_and_nest():
    data = apply_overrides({"rules": {"aces": "low"}}, ["rules.rounds=[10, 11]", "seed=3", "name=x"])
    assert data == {"rules": {"aces": "low", "rounds": [10, 11]}, "seed": 3, "name": "x"}
    cfg = load_config(SelfPlayConfig, None, ["rules.rounds=[11]", "learning_rate=1e-3", "num_players=3"])
    assert cfg.train_rules().rounds == (11,) and cfg.eval_rules().rounds == tuple(range(1, 12))
    assert cfg.learning_rate == 0.001 and cfg.train_rules().num_players == 3


def test_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(SelfPlayConfig, tmp_path / "missing.yaml")
    bad = tmp_path / "list.yaml"
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        load_config(SelfPlayConfig, bad)
    typo = tmp_path / "typo.yaml"
    typo.write_text("seed: 1\nlearning_rat: 0.1\n")
    with pytest.raises(ConfigError, match=r"\['learning_rat'\]"):
        load_config(SelfPlayConfig, typo)
