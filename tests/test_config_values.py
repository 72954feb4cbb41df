"""Config values refused before anything trains or is written (``training.common.value_checks``):
evaluation opponents that cannot play the run's games, values that YAML anchors blow up (refused in a
short line, fast), the privileged critic's size, batch_ppo's rollout size."""

from __future__ import annotations

import pytest
import torch

from training.common.config import ConfigError, SB3Config, SelfPlayConfig, load_config
from training.common.value_checks import MAX_VALUE_ITEMS, short
from training.ppo.batch_config import BatchPPOConfig

TRAINERS = [SelfPlayConfig, SB3Config, BatchPPOConfig]


@pytest.mark.parametrize("cls", TRAINERS)
@pytest.mark.parametrize("overrides,name,problem", [
    (["eval_opponents=[greedy-v0, ppo-3p-v0]"], "ppo-3p-v0",
     r"was trained for 3 players, but the environment has 2 players"),
    (["num_players=3", "eval_opponents=[ppo-2p-v0]"], "ppo-2p-v0",
     r"was trained for 2 players, but the environment has 3 players"),
    (["eval_opponents=[ppo-2p-v0]", "rules={meld_needs_natural: true}"], "ppo-2p-v0",
     r"was trained with meld_needs_natural=False, but the game has meld_needs_natural=True \(rule mismatch: the "
     r"network learned other scoring\)\)"),
    (["num_players=5", "eval_opponents=[ismcts-v1]"], "ismcts-v1", r"unknown belief 'belief-5p-v0'"),
])
def test_an_evaluation_opponent_that_cannot_play_the_run_s_games_is_refused(cls, overrides, name, problem):
    with pytest.raises(ConfigError, match=rf"^eval_opponents: '{name}' cannot play this run's games \(.*{problem}.*: "
                                          rf"use agents trained for num_players=\d and this run's scoring rules"):
        load_config(cls, None, overrides)


@pytest.mark.parametrize("cls", TRAINERS)
def test_evaluation_opponents_that_fit_pass(cls):
    cfg = load_config(cls, None, ["num_players=3", "eval_opponents=[ppo-3p-v0, ismcts-v1, expert-v0]"])
    assert cfg.eval_opponents == ["ppo-3p-v0", "ismcts-v1", "expert-v0"]


def test_the_fit_is_read_from_the_sidecar_not_the_weights(monkeypatch):
    import models.checkpoint

    def no_weights(*args, **kwargs):
        raise AssertionError("the weights were read")

    monkeypatch.setattr(models.checkpoint, "load_checkpoint", no_weights)
    monkeypatch.setattr(torch, "load", no_weights)
    with pytest.raises(ConfigError, match="was trained for 3 players"):
        load_config(SelfPlayConfig, None, ["eval_opponents=[ppo-3p-v0]"])


def test_batch_ppo_refuses_the_opponent_before_writing_anything(tmp_path, capsys):
    """The tester's run: it trained, then failed at its first evaluation, its training lost."""
    from training import batch_ppo

    argv = [a for item in [f"run_dir={tmp_path}", "name=g5", "eval_opponents=[ppo-3p-v0]", "eval_every=0",
                           "total_steps=4000", "save_every=0", "num_tables=8", "rollout_steps=16", "eval_deals=1",
                           "progress=false"] for a in ("--set", item)]
    with pytest.raises(SystemExit) as info:
        batch_ppo.main(["--config", "batch_ppo_default", *argv, "--device", "cpu"])
    assert info.value.code == 2 and "eval_opponents: 'ppo-3p-v0' cannot play" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def anchors(levels: int) -> str:
    """A YAML list whose entry k holds 2**(k+1) ones through aliases: a few hundred bytes, 2**levels entries."""
    items = ["&a0 [1, 1]"] + [f"&a{k} [*a{k - 1}, *a{k - 1}]" for k in range(1, levels)]
    return "[" + ", ".join(items) + "]"


@pytest.mark.parametrize("key", ["critic_hidden_sizes", "eval_opponents", "rules", "network_kwargs", "opponents"])
def test_a_value_blown_up_by_yaml_anchors_is_refused_in_one_short_line(tmp_path, key):
    text = anchors(20)  # 2**20 entries: printed whole, a message of megabytes
    data = {"rules": f"{{rounds: {text}}}", "network_kwargs": f"{{hidden_sizes: {text}}}",
            "opponents": f"{{self: {text}}}"}.get(key, text)
    path = tmp_path / "bomb.yaml"
    path.write_text(f"{key}: {data}\n")
    assert path.stat().st_size < 500
    for source, overrides in ((path, []), (None, [f"{key}={data}"])):
        with pytest.raises(ConfigError) as info:
            load_config(BatchPPOConfig, source, overrides)
        message = str(info.value)
        assert len(message) < 300 and message.startswith(f"{key}=") and "..." in message
        assert message.endswith(f"is not allowed: use a value of at most {MAX_VALUE_ITEMS} entries in all (nested "
                                f"lists and mappings counted, a YAML alias each time it appears)")


class Counted(list):
    """A list that counts how often it is gone through."""

    walks = 0

    def __iter__(self):
        Counted.walks += 1
        return super().__iter__()


def test_the_size_check_stops_at_its_limit_on_a_value_of_2_to_the_60_entries():
    from training.common.value_checks import check_value_size

    value = Counted([1, 1])
    for _ in range(59):
        value = Counted([value, value])
    Counted.walks = 0
    with pytest.raises(ConfigError, match=rf"^critic_hidden_sizes=\[\[\[\[\.\.\.\], \[\.\.\.\]\], .* at most {MAX_VALUE_ITEMS} "):
        check_value_size("critic_hidden_sizes", value)
    assert Counted.walks <= MAX_VALUE_ITEMS


@pytest.mark.parametrize("value,message", [
    ("[[1, 2], [3, 4]]", r"^critic_hidden_sizes=\[\[1, 2\], \[3, 4\]\] is not allowed: use a non-empty list of at"),
    (str(list(range(200))), r"^critic_hidden_sizes=\[0, 1, 2, 3, 4, 5, 6, 7, \.\.\.\] is not allowed"),
    ("'" + "x" * 500 + "'", r"^critic_hidden_sizes='x{20,}\.\.\. has the wrong type: expected list$"),
])
def test_values_are_shortened_in_messages(value, message):
    with pytest.raises(ConfigError, match=message) as info:
        load_config(BatchPPOConfig, None, [f"critic_hidden_sizes={value}"])
    assert len(str(info.value)) < 200


def test_short_is_the_repr_of_small_values_and_bounded_for_shared_ones():
    assert [short(v) for v in (None, 5, -1.5, "x", [], {"step": 128}, [1, [2]])] == \
        ["None", "5", "-1.5", "'x'", "[]", "{'step': 128}", "[1, [2]]"]
    shared: list = [1, 1]
    for _ in range(22):  # 2**23 entries
        shared = [shared, shared]
    assert len(short(shared)) <= 60 and len(short(shared, limit=200)) <= 200


def test_network_options_nested_in_lists_are_refused_in_a_short_line():
    with pytest.raises(ConfigError, match=r"^network_kwargs: network option hidden=\[\[1, 2\], \[3\]\] is not allowed: "
                                          r"use ints, lists of ints, bools or short strings$"):
        load_config(SelfPlayConfig, None, ["network=mlp", "network_kwargs={hidden: [[1, 2], [3]]}"])


@pytest.mark.parametrize("players,sizes", [(2, [256, 256]), (4, [7]), (8, [64, 32, 16])])
def test_the_critic_s_parameter_count_is_the_module_s(players, sizes, monkeypatch):
    """The limit counts what ``PrivilegedCritic`` builds: refused exactly one parameter below its size."""
    import models.checkpoint
    from training.common.value_checks import check_mlp_size
    from training.ppo.batch_critic import PrivilegedCritic
    from tt_env.observation.state import state_size

    with torch.device("meta"):
        size = sum(p.numel() for p in PrivilegedCritic(players, sizes).parameters())
    monkeypatch.setattr(models.checkpoint, "MAX_PARAMETERS", size)
    check_mlp_size("critic_hidden_sizes", "the privileged critic", state_size(players) + players, sizes)
    monkeypatch.setattr(models.checkpoint, "MAX_PARAMETERS", size - 1)
    with pytest.raises(ConfigError, match=rf"^critic_hidden_sizes: the privileged critic would have {size:,} "
                                          rf"parameters, over the {size - 1:,} allowed: use fewer or smaller layers$"):
        check_mlp_size("critic_hidden_sizes", "the privileged critic", state_size(players) + players, sizes)


def test_batch_ppo_refuses_a_critic_over_the_policy_network_s_limit():
    with pytest.raises(ConfigError, match=r"^critic_hidden_sizes: the privileged critic would have 153,325,569 "
                                          r"parameters, over the 50,000,000 allowed"):
        load_config(BatchPPOConfig, None, [f"critic_hidden_sizes={[4096] * 10}"])


def test_every_shipped_batch_ppo_config_is_within_the_rollout_limit():
    from training.common.config_files import resolve_config
    from training.ppo.batch_config import MAX_MOVES

    for name in ("batch_ppo_default", "batch_ppo_scratch_2p_v1", "batch_ppo_scratch_2p_v1_expert",
                 "batch_ppo_scratch_2p_v1_expert2"):
        cfg = load_config(BatchPPOConfig, resolve_config(name))
        assert cfg.rollout_steps * cfg.num_tables <= MAX_MOVES
