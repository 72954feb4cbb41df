"""Trainer configs as YAML reads them (a key twice, merge keys, YAML 1.2 numbers, odd keys and
huge numbers) and the agents they name (checkpoint paths, opponents that cannot play the game)."""

from __future__ import annotations

import pytest

from training.common.config import ConfigError, SB3Config, SelfPlayConfig, load_config


@pytest.mark.parametrize("text, key, line", [
    ("total_steps: 1000\nlearning_rate: 1.0e-3\ntotal_steps: 5\n", "total_steps", 3),
    ("rules:\n  rounds: [1]\n  rounds: [2]\n", "rounds", 3),
])
def test_a_key_given_twice_is_refused_not_the_last_one_kept(tmp_path, text, key, line):
    """PyYAML kept the last of two equal keys without a word: total_steps 5, not 1000."""
    path = tmp_path / "twice.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"is not valid YAML: found the key '{key}' twice in one mapping "
                                          rf"\(line {line}, column \d+\)$"):
        load_config(SelfPlayConfig, path)
    with pytest.raises(ConfigError, match="found the key 'rounds' twice"):
        load_config(SelfPlayConfig, None, ["rules={rounds: [1], rounds: [2]}"])


def test_yaml_merge_keys_may_still_be_overridden(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text("rules:\n  <<: {rounds: [1, 2], aces: low}\n  rounds: [3]\n")
    assert load_config(SelfPlayConfig, path).rules == {"rounds": [3], "aces": "low"}
    path.write_text("rules:\n  <<: {aces: low}\n  rounds: [1]\n  rounds: [2]\n")  # a merge key first, then twice
    with pytest.raises(ConfigError, match="found the key 'rounds' twice"):
        load_config(SelfPlayConfig, path)


def test_a_checkpoint_path_is_an_agent_wherever_a_name_is():
    """docs/training.md: "a checkpoint path works wherever an agent name does"; the configs said
    "use registered agents" to a path."""
    from models.shipped import CHECKPOINT_DIR

    path = str(CHECKPOINT_DIR / "ppo-2p-v0.pt")
    assert load_config(SelfPlayConfig, None, [f"opponents=[{path}]", f"eval_opponents=[{path}]"]).opponents == [path]
    assert load_config(SB3Config, None, [f"opponents=[{path}]"]).opponents == [path]
    with pytest.raises(ConfigError, match=r"opponents='nobody-v0' is not allowed: use registered agents \[.*\] or "
                                          r"checkpoint paths \(\.pt\)$"):
        load_config(SelfPlayConfig, None, ["opponents=[nobody-v0]"])


@pytest.mark.parametrize("cls", [SelfPlayConfig, SB3Config])
def test_a_training_opponent_that_cannot_play_the_game_is_refused_before_the_run(cls):
    """SB3's subprocess workers died with a 67-line traceback on a 2-player network at 3 players."""
    with pytest.raises(ConfigError, match=r"^opponents: 'ppo-2p-v1' cannot play this run's games \(.*player count"):
        load_config(cls, None, ["num_players=3", "opponents=[ppo-2p-v1]", "eval_opponents=[greedy-v0]"])


def test_odd_yaml_is_one_line_not_a_traceback(tmp_path):
    """Unknown keys of mixed types failed to sort (TypeError); an integer too large for a float
    overflowed (OverflowError); a nested 5e-1 was a string, "not a fraction"."""
    from training.ppo.batch_config import BatchPPOConfig

    mixed = tmp_path / "mixed.yaml"
    mixed.write_text("1: x\nfoo: y\n")
    with pytest.raises(ConfigError, match=r"unknown config key\(s\) \['foo', 1\]"):
        load_config(SelfPlayConfig, mixed)
    with pytest.raises(ConfigError, match=r"unknown rule option\(s\) \['foo', 1\]"):
        load_config(SelfPlayConfig, None, ["rules={1: x, foo: y}"])
    huge = "1" + "0" * 400
    for override in (f"learning_rate={huge}", f"selfplay_prob={huge}", f"rules.max_turns_per_round={huge}",
                     f"rules={{rounds: [{huge}]}}"):
        with pytest.raises(ConfigError, match=r"is not allowed: use numbers below 2\*\*63 in size$"):
            load_config(SelfPlayConfig, None, [override])
    with pytest.raises(ConfigError, match=r"is not allowed: use numbers below 2\*\*63 in size$"):
        load_config(SelfPlayConfig, None, [f"rules.max_turns_per_round={2 ** 63}"])  # the bound itself
    below = load_config(SelfPlayConfig, None, [f"rules.max_turns_per_round={2 ** 63 - 1}"])  # one under it
    assert below.train_rules().max_turns_per_round == 2 ** 63 - 1
    cfg = load_config(BatchPPOConfig, None, ["opponents={self: 5e-1, greedy-v0: 5e-1}", "learning_rate=1e-3"])
    assert cfg.opponents == {"self": 0.5, "greedy-v0": 0.5} and cfg.learning_rate == 0.001
    with pytest.raises(ConfigError, match=r"total_steps=100000.0 has the wrong type: expected int"):
        load_config(SelfPlayConfig, None, ["total_steps=1e5"])
