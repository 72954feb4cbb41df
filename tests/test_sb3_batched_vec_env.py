"""``training/sb3/batched_vec_env.py``: the batched engine as an SB3 ``VecEnv``, and ``vec_env: batched`` in train_sb3."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from training.common.config import ConfigError, SB3Config, load_config  # noqa: E402
from training.sb3.batched_vec_env import BatchedVecEnv  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402


def play(env, steps: int, seed: int = 0):
    """Random legal play through the SB3 interface; yields (obs, rewards, dones, infos) after each step."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        masks = get_action_masks(env)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        yield env.step(actions)


def test_it_is_the_vector_env_in_sb3s_terms():
    env = BatchedVecEnv.build(5, ["greedy-v0"], Rules(num_players=2, rounds=(1, 2)), "relative", seed=3)
    env.seed(11)
    obs = env.reset()
    assert obs.shape == (5, 294) and obs.dtype == np.float32
    masks = get_action_masks(env)
    assert masks.shape == (5, 54) and masks.dtype == bool
    np.testing.assert_array_equal(masks, env.env.action_masks())
    assert env.get_attr("render_mode") == [None] * 5 and env.env_is_wrapped(VecMonitor) == [False] * 5
    games = 0
    for obs, rewards, dones, infos in play(env, 300):
        assert obs.shape == (5, 294) and rewards.dtype == np.float32 and dones.dtype == bool
        np.testing.assert_array_equal(get_action_masks(env), env.env.action_masks())  # each table's own
        assert len(infos) == 5
        for i in range(5):
            assert ("terminal_observation" in infos[i]) == bool(dones[i])
            if dones[i]:
                final = infos[i]["terminal_observation"]
                assert final.shape == (294,) and not np.array_equal(final, obs[i])
                assert infos[i]["TimeLimit.truncated"] is False
        games += int(dones.sum())
    assert games > 0


def test_a_seed_replays_the_same_games_and_episode_returns_add_up():
    def returns(seed: int) -> list[float]:
        env = VecMonitor(BatchedVecEnv.build(4, ["random-v0"], Rules(num_players=2, rounds=(1,)), "relative", seed=7))
        env.seed(seed)
        env.reset()
        episodes = []
        total = np.zeros(4)
        for _, rewards, dones, infos in play(env, 200, seed=1):
            total += rewards
            for i in np.flatnonzero(dones):
                assert infos[i]["episode"]["r"] == pytest.approx(total[i], abs=1e-3)  # VecMonitor's sum
                episodes.append(float(total[i]))
                total[i] = 0.0
        return episodes

    first = returns(5)
    assert first and first == returns(5)
    assert returns(6) != first  # SB3's env.seed(...) reaches the deals


def test_set_attr_is_for_all_tables_and_unknown_methods_fail():
    env = BatchedVecEnv.build(3, ["greedy-v0"], Rules(num_players=2), "relative", seed=0)
    with pytest.raises(ValueError, match="share their attributes"):
        env.set_attr("illegal_action", "raise", indices=[0])
    env.set_attr("illegal_action", "raise")
    assert env.get_attr("illegal_action") == ["raise"] * 3
    with pytest.raises(AttributeError):
        env.env_method("no_such_method")


def test_batched_needs_opponents_with_a_batched_version():
    with pytest.raises(ConfigError, match="vec_env: batched"):
        load_config(SB3Config, None, ["vec_env=batched", "opponents=[expert-v0]"])
    with pytest.raises(ConfigError, match=r"vec_env='threads' is not allowed: use one of \['subproc', 'dummy', 'batched'\]"):
        load_config(SB3Config, None, ["vec_env=threads"])
    assert load_config(SB3Config, None, ["vec_env=batched", "opponents=[greedy-v0, ppo-2p-v0]"]).vec_env == "batched"


def test_train_sb3_learns_on_the_batched_tables(tmp_path, monkeypatch):
    from training import train_sb3

    built = []
    build = BatchedVecEnv.build.__func__
    monkeypatch.setattr(BatchedVecEnv, "build", classmethod(lambda cls, *a, **k: built.append(a) or build(cls, *a, **k)))

    cfg = load_config(SB3Config, None, [
        "total_steps=512", "num_envs=8", "n_steps=32", "batch_size=64", "n_epochs=1", "eval_every=256",
        "eval_deals=1", "eval_opponents=[greedy-v0]", "progress=false", "rules.rounds=[1, 2]",
        "hidden_sizes=[16, 16]", "vec_env=batched", "device=cpu", f"run_dir={tmp_path}", "name=sb3b"])
    run = train_sb3.train(cfg)
    assert json.loads((run.checkpoints / "final.json").read_text())["training_steps"] == 512
    assert [h["step"] for h in json.loads((run.path / "eval.json").read_text())] == [256, 512]
    assert len(built) == 1 and built[0][0] == 8  # the 8 envs were batched tables


def test_build_plays_the_rules_it_is_given() -> None:
    rules = Rules(num_players=3, decks=2, aces="high_or_low", rounds=(10, 11), meld_needs_natural=True)
    env = BatchedVecEnv.build(2, ["random-v0"], rules, "win", seed=1)
    assert env.env.rules == rules and env.env.game.rules == rules and env.env.game.reward_mode == "win"
    assert env.reset().shape == (2, env.observation_space.shape[0])
