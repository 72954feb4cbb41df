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


# ---------------------------------------------------------------- issue 9.2: every float, names, seeds, CLI errors
def float_fields(cls) -> list[str]:
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    return [f.name for f in dataclasses.fields(cls) if hints[f.name] is float]


@pytest.mark.parametrize("cls", [SelfPlayConfig, SB3Config])
def test_every_float_field_has_a_range(cls):
    assert sorted(cls.FLOAT_RANGES) == sorted(float_fields(cls))


@pytest.mark.parametrize("cls,key", [(c, k) for c in (SelfPlayConfig, SB3Config) for k in float_fields(c)])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", ".inf", ".nan"])
def test_non_finite_floats_are_rejected(cls, key, value):
    shown = {"inf": "inf", "-inf": "-inf", "nan": "nan", ".inf": "inf", ".nan": "nan"}[value]
    with pytest.raises(ConfigError, match=rf"^{key}={shown} is not allowed: use a finite float"):
        load_config(cls, None, [f"{key}={value}"])


@pytest.mark.parametrize("cls,override,message", [
    (SelfPlayConfig, "learning_rate=0", r"learning_rate=0.0 is not allowed: use a finite float in \(0, 1\]"),
    (SelfPlayConfig, "learning_rate=2", r"learning_rate=2.0 is not allowed"),
    (SelfPlayConfig, "gae_lambda=1.5", r"gae_lambda=1.5 is not allowed: use a finite float in \[0, 1\]"),
    (SelfPlayConfig, "ent_coef=-0.1", r"ent_coef=-0.1 is not allowed: use a finite float >= 0"),
    (SelfPlayConfig, "vf_coef=-1", r"vf_coef=-1.0 is not allowed: use a finite float >= 0"),
    (SelfPlayConfig, "max_grad_norm=0", r"max_grad_norm=0.0 is not allowed: use a finite float > 0"),
    (SelfPlayConfig, "clip_coef=1.5", r"clip_coef=1.5 is not allowed: use a finite float in \(0, 1\]"),
    (SelfPlayConfig, "pool_prob=-0.5", r"pool_prob=-0.5 is not allowed"),
    (SB3Config, "clip_range=0", r"clip_range=0.0 is not allowed: use a finite float in \(0, 1\]"),
    (SelfPlayConfig, "seed=-1", r"seed=-1 is not allowed: use an int from 0 to 2147483647"),
    (SB3Config, "seed=-7", r"seed=-7 is not allowed"),
    (SelfPlayConfig, "save_every=-1", r"save_every=-1 is not allowed: use an int >= 0"),
    (SelfPlayConfig, "eval_opponents=[]", r"eval_opponents=\[\] is not allowed: use a non-empty list"),
    (SB3Config, "eval_opponents=[]", r"eval_opponents=\[\] is not allowed"),
])
def test_out_of_range_values_are_rejected(cls, override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(cls, None, [override])


@pytest.mark.parametrize("name", ["..", ".", "../escape", "a/b", "/abs", "a\\\\b", ".hidden", "", "x" * 101])
def test_run_names_cannot_leave_run_dir(name):
    with pytest.raises(ConfigError, match=r"^name=.* is not allowed: use a folder name of letters"):
        load_config(SelfPlayConfig, None, [f"name='{name}'"])


def test_good_run_names():
    for name in ("main_job", "ppo-2p.v1", "run_3"):
        assert load_config(SelfPlayConfig, None, [f"name={name}"]).name == name


def test_malformed_yaml_names_the_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: 1\nrules: {rounds: [1, 2}\n")
    with pytest.raises(ConfigError, match=r"config file '.*bad.yaml' is not valid YAML: .*\(line 2, column \d+\)$"):
        load_config(SelfPlayConfig, bad)


def _cli_errors():
    from training import main_job, selfplay, train_sb3

    return [selfplay.main, train_sb3.main, main_job.main]


@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("argv,message", [
    (["--config", "MISSING.yaml"], "config file 'MISSING.yaml' does not exist"),
    (["--config", "BAD"], "is not valid YAML: "),
    (["--set", "learning_rate=inf"], "learning_rate=inf is not allowed: use a finite float in (0, 1]"),
    (["--set", "seed=-3"], "seed=-3 is not allowed"),
    (["--set", "name=../up"], "name='../up' is not allowed"),
    (["--set", "rules.rounds=[1, 2"], "the value is not valid YAML"),
    (["--set", "=3"], "override '=3' has no key"),
])
def test_command_lines_reject_bad_configs_in_one_line(tmp_path, capsys, which, argv, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text("seed: [1\n")
    argv = [str(bad) if a == "BAD" else a for a in argv]
    with pytest.raises(SystemExit) as info:
        _cli_errors()[which](argv)
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert message in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].count("error: ") == 1 and message in err.strip().splitlines()[-1]


def test_a_bad_config_fails_in_a_subprocess_with_one_line(tmp_path):
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    bad = tmp_path / "bad.yaml"
    bad.write_text("learning_rate: .inf\n")
    proc = subprocess.run([sys.executable, str(root / "training" / "selfplay.py"), "--config", str(bad),
                           "--set", f"run_dir={tmp_path}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith("error: learning_rate=inf is not allowed: use a finite "
                                                         "float in (0, 1]")
    assert list(tmp_path.iterdir()) == [bad]  # nothing was created
