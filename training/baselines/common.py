"""What every algorithm of the baselines benchmark shares: its trainer interface and its agent adapter.

An *environment step* is one decision taken by a policy that is being trained: one transition
it learns from. Moves of scripted opponents and of frozen past versions are not counted; in
self-play every seat's decision counts (each is a learning sample). Every trainer counts the
same way and stops at the first chunk boundary at or past the step it is asked for.

*Learning time* is the time spent sampling and updating (``learn_seconds``); building the
trainer, evaluations and saving are not in it. Each trainer measures it where its framework
lets it: around its own training loop, or from the framework's own count (``selfplay.py`` and
``train_sb3.py`` report their steps per second of learning, RLlib the seconds of each iteration).

Each framework's policy plays in the duplicate evaluator as a ``tt_env.agents`` agent through
:class:`ScoreAgent`: a function from a batch of our observations to a score per action (Q
values, logits), and the agent plays the legal action with the highest score. It reads only
the observation and the mask, like every agent.
"""

from __future__ import annotations

import abc
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tt_env.engine.rules import Rules

STEP_DEFINITION = ("one decision taken by a policy that is being trained (one transition it learns from); moves "
                   "of scripted opponents and frozen past versions are not counted, and in self-play every "
                   "seat's decision counts")
TIME_DEFINITION = ("learning time: sampling and updates; building the trainer, evaluations and saving are not in it")


@dataclass
class RunContext:
    """What the benchmark tells a trainer about its run."""

    seed: int
    num_players: int
    work_dir: Path
    """A folder of its own for whatever the framework writes (created by the runner)."""
    torch_threads: int = 1
    device: str = "cpu"
    """Where the trainer's networks live (``cpu``, ``cuda`` or ``cuda:K``, already resolved and checked by
    ``training.baselines.config.algo_device``); trainers whose library gives no device ignore it."""

    @property
    def rules(self) -> Rules:
        """Rules of the training games (default rules at ``num_players``)."""
        return Rules(num_players=self.num_players)


class Trainer(abc.ABC):
    """One training run of one algorithm, advanced in chunks between evaluations."""

    def __init__(self, params: Any, ctx: RunContext) -> None:
        self.params, self.ctx = params, ctx
        self.steps = 0
        """Environment steps trained so far (module docstring)."""
        self.learn_seconds = 0.0
        """Learning time so far (module docstring)."""

    @abc.abstractmethod
    def train_until(self, steps: int) -> None:
        """Train until :attr:`steps` >= ``steps`` (a chunk may overshoot: frameworks update in whole rollouts)."""

    @abc.abstractmethod
    def agent(self) -> Any:
        """The current policy as a ``tt_env.agents`` agent (greedy: the best legal action by its scores)."""

    def close(self) -> None:  # noqa: B027  (optional: most trainers hold nothing to release)
        """Release processes and files (called once, also after an error)."""

    def continue_run(self, steps: int, learn_seconds: float) -> bool:
        """Pick up the unfinished run that an earlier process left in ``ctx.work_dir``, last evaluated
        at ``steps`` after ``learn_seconds`` of learning. False (the default): this trainer cannot,
        and the run starts again from scratch."""
        return False


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's global generators (frameworks that draw from them)."""
    import torch

    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    torch.manual_seed(seed)


class ScoreAgent:
    """A ``tt_env.agents`` agent from a batch scoring function: the legal action with the highest score.

    ``score_fn(observations)`` takes a float32 array ``(B, obs_size)`` and returns scores ``(B, 54)``
    (Q values or logits). ``act_batch`` makes the duplicate evaluator ask for many decisions at once.
    """

    def __init__(self, score_fn: Callable[[np.ndarray], np.ndarray], name: str) -> None:
        self.score_fn, self.name = score_fn, name

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        return self.act_batch([observation], [action_mask], [rng])[0]

    def act_batch(self, observations: Sequence[np.ndarray] | np.ndarray,
                  action_masks: Sequence[np.ndarray] | np.ndarray, rngs: Sequence[np.random.Generator]) -> list[int]:
        obs = np.asarray(observations, dtype=np.float32).reshape(len(rngs), -1)
        legal = np.asarray(action_masks).reshape(len(obs), -1) > 0
        if not legal.any(axis=1).all():
            raise ValueError("no legal action in a mask: the agent was asked to act out of turn")
        scores = np.asarray(self.score_fn(obs), dtype=np.float64).reshape(legal.shape)
        return np.where(legal, scores, -np.inf).argmax(axis=1).tolist()


def torch_scores(module: Any) -> Callable[[np.ndarray], np.ndarray]:
    """A :class:`ScoreAgent` scoring function from a torch module mapping observations to 54 scores."""
    import torch

    def score(obs: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return module(torch.as_tensor(obs)).float().cpu().numpy()

    return score
