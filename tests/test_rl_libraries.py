"""Our AEC environment in two RL libraries, used as their tutorials show, unchanged.

- Tianshou 2 (its PettingZoo tic-tac-toe example): a DQN learner against a masked random
  player, one short training epoch. Before the infos had fixed keys, ``went_out`` appeared
  on some steps only, the buffer stored ``None`` (NaN) between, and the trainer stopped with
  ``MalformedBufferError: Encountered NaNs in buffer``.
- TorchRL's ``PettingZooWrapper``: the spec check and a whole random game.

Both are in the ``dev`` extra; the tests skip, saying so, where they are not installed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tt_env import three_thirteen_v0

SHORT_GAME = dict(rounds=[1, 2], max_turns_per_round=20)


@pytest.mark.slow
def test_tianshou_dqn_trains_one_epoch_on_the_env() -> None:
    pytest.importorskip("tianshou", minversion="2.0", reason="tianshou>=2 is not installed (the dev extra has it)")
    import torch
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    def make_env() -> PettingZooEnv:
        return PettingZooEnv(three_thirteen_v0.env(num_players=2, **SHORT_GAME))

    torch.manual_seed(0)
    env = make_env()
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
              hidden_sizes=[64])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.05)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.9, n_step_return_horizon=1,
                  target_update_freq=50)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)
    train_envs, test_envs = DummyVectorEnv([make_env] * 2), DummyVectorEnv([make_env] * 2)
    train_envs.seed(0)
    test_envs.seed(1)
    buffer = VectorReplayBuffer(2000, len(train_envs))
    train_collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    train_collector.reset()
    train_collector.collect(n_step=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tianshou's own notes on multi-dimensional reward stats
        result = algorithm.run_training(OffPolicyTrainerParams(
            training_collector=train_collector, test_collector=test_collector, max_epochs=1, epoch_num_steps=300,
            collection_step_num_env_steps=10, test_step_num_episodes=2, batch_size=32,
            update_step_num_gradient_steps_per_sample=0.1, test_in_training=False, show_progress=False,
            verbose=False, multi_agent_return_reduction=lambda rewards: rewards[:, 0]))
    assert result.train_step >= 300 and result.update_step > 0 and result.test_episode >= 2
    assert np.isfinite(result.best_reward)
    infos = buffer.info
    assert {"went_out", "round_number", "round_points", "final_scores"} <= set(infos.keys())
    assert (infos.went_out[: len(buffer)] >= 0).any() and (infos.round_number[: len(buffer)] > 0).any()


@pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested:UserWarning")
def test_torchrl_pettingzoo_wrapper_checks_specs_and_plays_a_whole_game() -> None:
    pytest.importorskip("torchrl", reason="torchrl is not installed (the dev extra has it)")
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    env = PettingZooWrapper(three_thirteen_v0.env(num_players=3, **SHORT_GAME), use_mask=True, seed=0)
    assert env.group_map == {f"player_{i}": [f"player_{i}"] for i in range(3)}
    check_env_specs(env)
    rollout = env.rollout(2000, break_when_any_done=True)
    assert rollout["next", "done"][-1].all() and not rollout["next", "done"][:-1].any()
    rounds_ended = rollout["next", "player_0", "info", "round_number"].flatten()
    assert rounds_ended.unique().tolist() == [0.0, 1.0, 2.0], "the game ran through both rounds"
    game = env._env.unwrapped.game_state
    assert game.game_over and len(game.round_results) == 2, "it ended by playing, not by an illegal move"
    final = rollout["next", "player_1", "info", "final_scores"][-1].flatten().tolist()
    assert final == [float(s) for s in game.scores]
