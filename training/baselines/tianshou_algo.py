"""Tianshou's DQN (``tianshou.algorithm.DQN``, its masked ``DiscreteQLearningPolicy``) on our Gymnasium env.

The learner holds one seat (random per game) of ``gymnasium.make("tt_env/ThreeThirteen-v0")``
against scripted ``opponents`` (as ``training/train_sb3.py`` does); every step of that env is one
learner decision. Tianshou masks Q values with ``obs.mask``, so :class:`MaskedObservation` hands it
``{"obs": observation, "mask": action_mask}``. Training is Tianshou's own pieces in a small loop
(``Collector`` with a ``VectorReplayBuffer`` over ``DummyVectorEnv``, then ``algorithm.update``
inside ``policy_within_training_step``), the loop its ``OffPolicyTrainer`` runs, so that the
benchmark can stop at each evaluation point. Exploration decays linearly from ``eps_start`` to
``eps_end`` over ``eps_decay_fraction`` of the run's steps.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium
import numpy as np

from training.common.config import ConfigError, from_dict

from .common import RunContext, ScoreAgent, Trainer, seed_everything, torch_scores


@dataclass
class TianshouDQNParams:
    """``tianshou-dqn`` keys."""

    opponents: list = field(default_factory=lambda: ["greedy-v0"])
    hidden_sizes: list = field(default_factory=lambda: [256, 256])
    num_envs: int = 8
    buffer_size: int = 50_000
    batch_size: int = 64
    learning_rate: float = 5e-4
    gamma: float = 0.995
    n_step_return_horizon: int = 3
    target_update_freq: int = 500
    step_per_collect: int = 16
    updates_per_collect: int = 2
    min_buffer_size_to_learn: int = 1000
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_decay_fraction: float = 0.5

    def validate(self) -> None:
        from tt_env.agents import list_agents

        def check(ok: bool, key: str, allowed: str) -> None:
            if not ok:
                raise ConfigError(f"hyperparameters.tianshou-dqn: {key}={getattr(self, key)!r} is not allowed: "
                                  f"use {allowed}")

        check(bool(self.opponents) and all(o in list_agents() for o in self.opponents), "opponents",
              f"a non-empty list of registered agents {list_agents()}")
        check(bool(self.hidden_sizes) and all(isinstance(h, int) and h > 0 for h in self.hidden_sizes),
              "hidden_sizes", "a non-empty list of positive ints")
        for key in ("num_envs", "buffer_size", "batch_size", "n_step_return_horizon", "step_per_collect",
                    "updates_per_collect"):
            check(getattr(self, key) >= 1, key, "an int >= 1")
        for key in ("target_update_freq", "min_buffer_size_to_learn"):
            check(getattr(self, key) >= 0, key, "an int >= 0")
        check(0 < self.learning_rate <= 1, "learning_rate", "a float in (0, 1]")
        check(0 < self.gamma <= 1, "gamma", "a float in (0, 1]")
        check(0 <= self.eps_end <= self.eps_start <= 1, "eps_start", "0 <= eps_end <= eps_start <= 1")
        check(0 < self.eps_decay_fraction <= 1, "eps_decay_fraction", "a float in (0, 1]")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def tianshou_params(params: dict[str, Any], budget: int) -> TianshouDQNParams:
    """The checked ``tianshou-dqn`` section (unknown keys name the allowed ones)."""
    try:
        return from_dict(TianshouDQNParams, params)
    except ConfigError as exc:
        text = str(exc)
        raise ConfigError(text if text.startswith("hyperparameters.") else f"hyperparameters.tianshou-dqn: {text}"
                          ) from None


class MaskedObservation(gymnasium.Wrapper):
    """Observations as ``{"obs": observation, "mask": action_mask}`` (what Tianshou's Q policy masks with)."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.observation_space = gymnasium.spaces.Dict({
            "obs": env.observation_space,
            "mask": gymnasium.spaces.Box(0, 1, shape=(env.action_space.n,), dtype=np.int8)})

    def reset(self, **kwargs: Any) -> tuple[dict[str, np.ndarray], dict]:
        obs, info = self.env.reset(**kwargs)
        return {"obs": obs, "mask": info["action_mask"]}, info

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(int(action))
        return {"obs": obs, "mask": info["action_mask"]}, reward, terminated, truncated, info


class TianshouDQNTrainer(Trainer):
    """``tianshou-dqn``: the learner against scripted opponents."""

    def __init__(self, params: dict[str, Any], ctx: RunContext, budget: int) -> None:
        super().__init__(params, ctx)
        import torch
        from tianshou.algorithm import DQN
        from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
        from tianshou.algorithm.optim import AdamOptimizerFactory
        from tianshou.data import Collector, VectorReplayBuffer
        from tianshou.env import DummyVectorEnv
        from tianshou.utils.net.common import Net

        import tt_env  # noqa: F401  (registers the Gymnasium id)

        p = self.p = tianshou_params(params, budget)
        self.budget = budget
        seed_everything(ctx.seed)

        def make(index: int):
            def thunk() -> gymnasium.Env:
                return MaskedObservation(gymnasium.make("tt_env/ThreeThirteen-v0", opponents=list(p.opponents),
                                                        seat="random", num_players=ctx.num_players))
            return thunk

        self.envs = DummyVectorEnv([make(i) for i in range(p.num_envs)])
        self.envs.seed([ctx.seed * 1000 + i for i in range(p.num_envs)])
        probe = make(0)()
        obs_size = probe.observation_space["obs"].shape[0]
        self.net = Net(state_shape=obs_size, action_shape=probe.action_space.n,
                       hidden_sizes=list(p.hidden_sizes)).to(ctx.device)  # its MLP moves observations there
        probe.close()
        self.policy = DiscreteQLearningPolicy(model=self.net, action_space=gymnasium.spaces.Discrete(54),
                                              eps_training=p.eps_start)
        self.algorithm = DQN(policy=self.policy, optim=AdamOptimizerFactory(lr=p.learning_rate), gamma=p.gamma,
                             n_step_return_horizon=p.n_step_return_horizon, target_update_freq=p.target_update_freq)
        self.buffer = VectorReplayBuffer(p.buffer_size, p.num_envs)
        self.collector = Collector(self.algorithm, self.envs, self.buffer, exploration_noise=True)
        self.collector.reset()
        self._torch = torch

    def _epsilon(self) -> float:
        p = self.p
        progress = min(1.0, self.steps / max(1.0, p.eps_decay_fraction * self.budget))
        return p.eps_start + (p.eps_end - p.eps_start) * progress

    def train_until(self, steps: int) -> None:
        from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

        start = time.perf_counter()
        p = self.p
        while self.steps < steps:
            self.policy.set_eps_training(self._epsilon())
            with policy_within_training_step(self.policy), torch_train_mode(self.policy, False):
                stats = self.collector.collect(n_step=p.step_per_collect)
            self.steps += stats.n_collected_steps
            if len(self.buffer) >= max(p.min_buffer_size_to_learn, p.batch_size):
                with policy_within_training_step(self.policy):
                    for _ in range(p.updates_per_collect):
                        self.algorithm.update(buffer=self.buffer, sample_size=p.batch_size)
        self.learn_seconds += time.perf_counter() - start

    def agent(self) -> ScoreAgent:
        import copy

        net = copy.deepcopy(self.net).cpu().eval()  # evaluations run on the CPU
        return ScoreAgent(torch_scores(lambda obs: net(obs)[0]), name="tianshou-dqn")

    def close(self) -> None:
        self.envs.close()
