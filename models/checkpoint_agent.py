"""A policy network as an agent of the common interface: :class:`CheckpointAgent`.

It decides one observation (``act``) or many at once (``act_batch``, what the evaluator uses
for games played side by side). Both run the network through
:class:`models.batch_policy.BatchPolicy`, whose rows do not depend on the batch, so the agent
makes the same choice for an observation however it is asked. Loading one from a file, by
path or shipped name, is :mod:`models.agent_loader`'s job.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .batch_policy import BatchPolicy
from .networks import PolicyValueNet


class CheckpointAgent:
    """An agent of the common interface backed by a policy network."""

    def __init__(self, net: PolicyValueNet, name: str = "checkpoint", greedy: bool = True,
                 meta: dict | None = None) -> None:
        self.net = net.eval()
        self.name = name
        self.greedy = greedy
        self.meta = meta or {}
        self.policy = BatchPolicy(self.net)  # traced (half the CPU of eager) on first use

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        """The argmax legal action (``greedy``) or one drawn from the masked policy with ``rng``."""
        legal = np.asarray(action_mask) > 0
        if not legal.any():
            raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
        return self.act_batch([observation], [action_mask], [rng])[0]

    @torch.inference_mode()
    def act_batch(self, observations: Sequence[np.ndarray] | np.ndarray,
                  action_masks: Sequence[np.ndarray] | np.ndarray, rngs: Sequence[np.random.Generator]) -> list[int]:
        """:meth:`act` for each row: one preprocess and a few forward passes for the batch.

        Row ``i`` samples with ``rngs[i]`` (``greedy=False``); its choice is the same whatever
        the batch it comes in (module docstring).
        """
        obs = np.asarray(observations, dtype=np.float32).reshape(-1, self.net.obs_size)
        legal = np.asarray(action_masks).reshape(len(obs), -1) > 0
        if len(rngs) != len(obs):
            raise ValueError(f"act_batch got {len(obs)} observations but {len(rngs)} rngs: give one rng per row")
        playable = legal.any(axis=1)
        if not playable.all():
            row = int(np.flatnonzero(~playable)[0])
            raise ValueError(f"no legal action in the mask of row {row}: the agent was asked to act out of turn")
        # MaskedCategorical's masking
        logits = np.where(legal, self.policy.logits(self.net.as_input(obs, legal)), -np.inf)
        if self.greedy:
            return logits.argmax(axis=1).tolist()
        return [self._sample(row, rng) for row, rng in zip(logits, rngs, strict=True)]

    @staticmethod
    def _sample(logits: np.ndarray, rng: np.random.Generator) -> int:
        """An action drawn with ``rng`` from the softmax of masked ``logits``."""
        probs = np.exp(logits - logits.max())
        return int(rng.choice(probs.size, p=probs / probs.sum()))
