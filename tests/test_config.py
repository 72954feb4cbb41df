"""Config files and overrides: unknown keys and bad values are rejected before training (issue 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from training.common.config import ConfigError, SB3Config, SelfPlayConfig, apply_overrides, load_config

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


# ---------------------------------------------------------------- issue 19: types, bounds, nested overrides, files
def int_fields(cls) -> list[str]:
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    return [f.name for f in dataclasses.fields(cls) if hints[f.name] is int]


@pytest.mark.parametrize("cls,key", [(c, k) for c in (SelfPlayConfig, SB3Config) for k in int_fields(c)])
@pytest.mark.parametrize("value", ["true", "false"])
def test_a_bool_is_not_accepted_for_an_integer_field(cls, key, value):
    with pytest.raises(ConfigError, match=rf"^{key}={value.title()} has the wrong type: expected int$"):
        load_config(cls, None, [f"{key}={value}"])


def test_rollout_steps_below_num_minibatches_is_refused():
    with pytest.raises(ConfigError, match=r"^rollout_steps=3 is not allowed: use at least num_minibatches \(4\)$"):
        load_config(SelfPlayConfig, None, ["rollout_steps=3", "num_minibatches=4"])
    assert load_config(SelfPlayConfig, None, ["rollout_steps=4", "num_minibatches=4"]).rollout_steps == 4


@pytest.mark.parametrize("override", ["batch_size=1", "batch_size=129"])
def test_sb3_minibatches_fit_the_rollout(override):
    with pytest.raises(ConfigError, match=r"^batch_size=\d+ is not allowed: use an int from 2 to n_steps \* num_envs "
                                          r"\(128\)"):
        load_config(SB3Config, None, ["n_steps=64", "num_envs=2", override])
    assert load_config(SB3Config, None, ["n_steps=64", "num_envs=2", "batch_size=128"]).batch_size == 128


@pytest.mark.parametrize("cls,overrides,message", [
    (SB3Config, ["hidden_sizes=[10000000]"], r"hidden_sizes=\[10000000\] is out of bounds: sizes must be ints from 0 "
                                             r"to 4096"),
    (SB3Config, ["hidden_sizes=[4096, 4096, 4096, 4096]"], r"the network would have 103,329,847 parameters, over"),
    (SB3Config, ["hidden_sizes=[true, 16]"], r"hidden_sizes=\[True, 16\] is not allowed"),
    (SB3Config, [f"hidden_sizes=[{', '.join(['8'] * 65)}]"], "has 65 entries, over the 64 allowed"),
    (SelfPlayConfig, ["network=mlp", "network_kwargs={hidden_sizes: [10000000]}"], "out of bounds"),
    (SelfPlayConfig, ["network_kwargs={channels: 4096, hidden: 4096}"], "parameters, over the 50,000,000 allowed"),
    (SelfPlayConfig, ["num_envs=100000"], r"^num_envs=100000 is not allowed: use an int from 1 to 1024$"),
    (SelfPlayConfig, ["rollout_steps=10000000000"], r"rollout_steps=10000000000 is not allowed: use an int from 1"),
    (SB3Config, ["n_steps=1048576", "num_envs=2", "batch_size=64"], r"n_steps \* num_envs \(the rollout buffer\)"),
    (SelfPlayConfig, ["total_steps=10000000000000"], "total_steps=10000000000000 is not allowed"),
])
def test_sizes_are_bounded_before_anything_is_allocated(monkeypatch, cls, overrides, message):
    import models.networks as networks

    real = networks.build_network

    def on_meta_only(*args, **kwargs):
        import torch

        assert torch.empty(0).device.type == "meta", "a network was built for real during validation"
        return real(*args, **kwargs)

    monkeypatch.setattr(networks, "build_network", on_meta_only)
    with pytest.raises(ConfigError, match=message):
        load_config(cls, None, overrides)


@pytest.mark.parametrize("override,message", [
    ("total_steps.x=1", r"^override 'total_steps.x=1': total_steps is not a mapping, so total_steps.x does not exist"),
    ("seed.a=2", "seed is not a mapping"),
    ("rules.rounds.x=1",
     r"a nested key is FIELD.KEY, one level into a mapping \(mapping fields: network_kwargs, rules\)"),
    (".x=1", "a nested key is FIELD.KEY"),
    ("rules.=1", "a nested key is FIELD.KEY"),
    ("rules=" + "[" * 5000, "is nested too deeply|is not valid YAML"),
])
def test_nested_overrides_reach_only_into_mappings(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(SelfPlayConfig, None, [override])


def test_a_nested_override_into_a_value_set_by_the_file_is_one_line(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("total_steps: 5000\n")
    with pytest.raises(ConfigError, match="total_steps is not a mapping"):
        load_config(SelfPlayConfig, config, ["total_steps.x=1"])


def test_config_files_that_are_folders_huge_or_deeply_nested_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="is a folder: give a YAML file"):
        load_config(SelfPlayConfig, tmp_path)
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * (1 << 20) + "\n")
    with pytest.raises(ConfigError, match="bytes, over the 1048576 a config may have"):
        load_config(SelfPlayConfig, big)
    deep = tmp_path / "deep.yaml"
    deep.write_text("rules: " + "[" * 20000 + "]" * 20000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply|is not valid YAML"):
        load_config(SelfPlayConfig, deep)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(SelfPlayConfig, binary)


def test_run_dir_with_a_nul_byte_is_refused():
    with pytest.raises(ConfigError, match="run_dir=.* is not allowed: use a non-empty path"):
        load_config(SelfPlayConfig, None, ['run_dir="a\\0b"'])


@pytest.mark.parametrize("which", [0, 1, 2])
def test_command_lines_refuse_nested_overrides_into_numbers_in_one_line(capsys, which):
    with pytest.raises(SystemExit) as info:
        _cli_errors()[which](["--set", "total_steps.x=1"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    assert "total_steps is not a mapping" in err.strip().splitlines()[-1]


@pytest.mark.parametrize("name", ["..", ".", "../up", "a/b", ".hidden"])
def test_rllib_run_names_cannot_leave_run_dir(name):
    from training.train_rllib import RLlibConfig

    with pytest.raises(ConfigError, match=r"^name=.* is not allowed: use a folder name"):
        load_config(RLlibConfig, None, [f"name='{name}'"])


def test_rllib_network_sizes_are_bounded():
    from training.train_rllib import RLlibConfig

    with pytest.raises(ConfigError, match="out of bounds"):
        load_config(RLlibConfig, None, ["network_kwargs={hidden_sizes: [10000000]}"])
    with pytest.raises(ConfigError, match=r"network_kwargs: unknown option\(s\) \['depth'\]"):
        load_config(RLlibConfig, None, ["network_kwargs={depth: 3}"])


@pytest.mark.parametrize("config_cls", ["SelfPlayConfig", "SB3Config", "RLlibConfig", "BatchPPOConfig"])
@pytest.mark.parametrize("override,message", [
    ("rules.rounds=[3, 2]", "rules: "), ("rules.colour=red", "rules: "),
    ("rules.num_players=3", "rules: set num_players at the top level, not inside rules")])
def test_every_trainer_refuses_bad_rules_by_name(config_cls, override, message):
    """Each config's check of its rules (``RunConfig.check_rules``) names ``rules`` in one line."""
    from training.ppo.batch_config import BatchPPOConfig
    from training.train_rllib import RLlibConfig

    cls = {"SelfPlayConfig": SelfPlayConfig, "SB3Config": SB3Config, "RLlibConfig": RLlibConfig,
           "BatchPPOConfig": BatchPPOConfig}[config_cls]
    with pytest.raises(ConfigError, match=f"^{message}"):
        load_config(cls, None, [override])


@pytest.mark.parametrize("override,message", [
    ("num_envs=100000", "num_envs=100000 is not allowed: use an int from 1 to 1024"),
    ("env_runners=5000", "env_runners=5000 is not allowed"),
    ("train_batch_size=10000000000", "train_batch_size=10000000000 is not allowed"),
    ("iterations=true", "iterations=True has the wrong type: expected int"),
])
def test_rllib_counts_are_bounded(override, message):
    from training.train_rllib import RLlibConfig

    with pytest.raises(ConfigError, match=f"^{message}"):
        load_config(RLlibConfig, None, [override])


def test_a_config_fifo_is_refused_without_blocking(tmp_path):
    import os

    os.mkfifo(tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match="is not a regular file"):
        load_config(SelfPlayConfig, tmp_path / "c.yaml")


# ---------------------------------------------------------------- boundaries and names (mutation testing)
@pytest.mark.parametrize("override", ["num_cpus=true", "fail_at_step=false", "out=5"])
def test_optional_fields_refuse_bools_and_other_types(override):
    from training.train_rllib import RLlibConfig

    with pytest.raises(ConfigError, match="has the wrong type"):
        load_config(RLlibConfig, None, [override])
    assert load_config(RLlibConfig, None, ["num_cpus=2", "out=somewhere"]).num_cpus == 2


def test_the_limits_themselves_are_allowed():
    assert load_config(SelfPlayConfig, None, [f"seed={2 ** 31 - 1}"]).seed == 2 ** 31 - 1
    with pytest.raises(ConfigError, match=r"^seed=2147483648 is not allowed: use an int from 0 to 2147483647$"):
        load_config(SelfPlayConfig, None, [f"seed={2 ** 31}"])
    assert load_config(SelfPlayConfig, None, ["run_dir=" + "r" * 4096]).run_dir == "r" * 4096
    with pytest.raises(ConfigError, match="^run_dir='r"):
        load_config(SelfPlayConfig, None, ["run_dir=" + "r" * 4097])
    assert load_config(SelfPlayConfig, None, ["num_envs=1024"]).num_envs == 1024


@pytest.mark.parametrize("cls,override,message", [
    (SelfPlayConfig, "snapshot_every=0", "snapshot_every=0 is not allowed: use an int >= 1"),
    (SelfPlayConfig, "critic_warmup_steps=-1", "critic_warmup_steps=-1 is not allowed: use an int >= 0"),
    (SB3Config, "n_steps=1048576", "n_steps=1048576 is not allowed: use an int with n_steps * num_envs (the "
                                   "rollout buffer) at most 1048576"),
    (SelfPlayConfig, "rules.num_players=3", "rules: set num_players at the top level, not inside rules"),
    (SelfPlayConfig, "network_kwargs.num_players=3", "network_kwargs: set num_players at the top level"),
])
def test_messages_name_the_key_the_value_and_what_is_allowed(cls, override, message):
    with pytest.raises(ConfigError) as info:
        load_config(cls, None, [override])
    assert str(info.value).startswith(message)


def test_the_run_folder_flags():
    from training.common.config import config_arg_parser

    parser = config_arg_parser("d", SelfPlayConfig, run_folder=True)
    assert parser.parse_args(["--resume"]).resume and parser.parse_args(["--overwrite"]).overwrite
    args = parser.parse_args([])
    assert not args.resume and not args.overwrite and args.config is None and args.overrides == []
    with pytest.raises(SystemExit):
        parser.parse_args(["--resume", "--overwrite"])
    assert not hasattr(config_arg_parser("d", SelfPlayConfig).parse_args([]), "resume")


# ---------------------------------------------------------------- one declaration per shared key (issue 24)
def test_every_trainer_config_takes_the_shared_keys_from_run_config() -> None:
    import ast
    import dataclasses

    from training.common.config import BaseConfig, RunConfig
    from training.train_rllib import RLlibConfig

    shared = [f.name for f in dataclasses.fields(RunConfig)]
    for cls in (BaseConfig, SelfPlayConfig, SB3Config, RLlibConfig):
        assert issubclass(cls, RunConfig)
        assert [f.name for f in dataclasses.fields(cls)][:len(shared)] == shared, cls
    # RLlib gives two of them its own default and declares none of the others again
    source = Path(__file__).resolve().parent.parent / "training" / "train_rllib.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RLlibConfig").body
    declared = {n.target.id for n in body if isinstance(n, ast.AnnAssign)}
    assert declared & set(shared) == {"name", "num_envs"}
    assert (RLlibConfig().name, RLlibConfig().num_envs, RunConfig().num_envs) == ("rllib", 4, 8)


def test_rllib_refuses_the_ppo_trainers_keys_naming_its_own() -> None:
    from training.common.config import from_dict
    from training.train_rllib import RLlibConfig

    for key, value in (("total_steps", 1000), ("device", "cpu"), ("eval_every", 0)):
        with pytest.raises(ConfigError, match=rf"unknown config key\(s\) \['{key}'\]: allowed are \[.*'iterations'"):
            from_dict(RLlibConfig, {key: value})


def test_an_unknown_rule_option_names_the_allowed_ones() -> None:
    with pytest.raises(ConfigError, match=r"rules: unknown rule option\(s\) \['jokers'\]: allowed options are"):
        SelfPlayConfig(rules={"jokers": True}).validate()


@pytest.mark.parametrize("overrides, message", [
    (["network_kwargs.aces_high=true"], r"network_kwargs: \['aces_high'\] follow the game's rules: set them through "
                                        r"rules \(rules.aces\), not in network_kwargs"),
    (["network_kwargs.meld_needs_natural=true"], r"\(rules.meld_needs_natural\)"),
    (["rules.decks=2", "network_kwargs.decks=1"], r"network_kwargs: decks=1 is fewer than the game's 2 \(its counts "
                                                  r"would not fit\)"),
    (["init_checkpoint=''"], r"init_checkpoint='' is not allowed: use a checkpoint file's path"),
    (["init_checkpoint=/tmp"], r"init_checkpoint='/tmp' is not allowed: use a checkpoint file's path"),
])
def test_network_options_the_rules_set_and_a_checkpoint_that_is_no_file_are_refused(overrides, message):
    """CardNet's scoring options in ``network_kwargs`` overrode the rules (the network read features
    of another game), as did fewer decks than the game's; an empty ``init_checkpoint`` (an unset
    shell variable) trained from scratch. More decks than the game's are allowed."""
    from training.common.config import SelfPlayConfig, load_config
    from training.ppo.batch_config import BatchPPOConfig

    for cls in (SelfPlayConfig, BatchPPOConfig):
        with pytest.raises(ConfigError, match=message):
            load_config(cls, None, overrides)
        assert load_config(cls, None, ["rules.decks=2", "network_kwargs.decks=3"]).network_kwargs["decks"] == 3
