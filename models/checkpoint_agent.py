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

from tt_env.agents.base import checked_mask
from tt_env.agents.greedy import hand_from_observation
from tt_env.engine.rules import Rules
from tt_env.env_checks import checked_flag
from tt_env.observation import NUM_ACTIONS, get_layout, num_players_of

from .batch_policy import BatchPolicy
from .networks import PolicyValueNet


def observation_phase(observation: np.ndarray) -> int:
    """0 (draw) or 1 (discard): the phase an observation is in."""
    return int(observation[get_layout(num_players_of(observation)).phase + 1] > 0.5)


class CheckpointAgent:
    """An agent of the common interface backed by a policy network."""

    def __init__(self, net: PolicyValueNet, name: str = "checkpoint", greedy: bool = True,
                 meta: dict | None = None, rules: Rules | None = None) -> None:
        self.net = net.eval()
        self.name = name
        self.greedy = checked_flag(greedy, "greedy")
        self.meta = meta or {}
        self.rules = rules
        """The game's rules it was loaded for (``load_agent``): an environment given this object
        checks them against its own (``tt_env.agents.registry.check_agent_rules``)."""
        self.policy = BatchPolicy(self.net)  # traced (half the CPU of eager) on first use

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        """The argmax legal action (``greedy``) or one drawn from the masked policy with ``rng``."""
        return self.act_batch([observation], [action_mask], [rng])[0]

    @torch.inference_mode()
    def act_batch(self, observations: Sequence[np.ndarray] | np.ndarray,
                  action_masks: Sequence[np.ndarray] | np.ndarray, rngs: Sequence[np.random.Generator]) -> list[int]:
        """:meth:`act` for each row: one preprocess and a few forward passes for the batch.

        Row ``i`` samples with ``rngs[i]`` (``greedy=False``); its choice is the same whatever
        the batch it comes in (module docstring).
        """
        obs = np.asarray(observations, dtype=np.float32)
        if obs.size % self.net.obs_size or (obs.ndim > 1 and obs.shape[-1] != self.net.obs_size):
            raise ValueError(f"act_batch takes observations of length {self.net.obs_size} (the network's "
                             f"{self.net.num_players}-player layout), got an array of shape {obs.shape}")
        obs = obs.reshape(-1, self.net.obs_size)
        masks = np.asarray(action_masks)
        if masks.shape != (len(obs), NUM_ACTIONS) or len(rngs) != len(obs):
            raise ValueError(f"act_batch takes one {NUM_ACTIONS}-entry mask and one rng per observation: got "
                             f"{len(obs)} observations, masks of shape {masks.shape} and {len(rngs)} rngs")
        if not len(obs):
            return []
        for row, mask in enumerate(masks):  # a mask that means nothing here gets no answer (as scripted agents)
            try:
                checked_mask(mask, hand_from_observation(obs[row])[0], observation_phase(obs[row]))
            except ValueError as exc:
                raise ValueError(f"row {row}: {exc}" if len(obs) > 1 else str(exc)) from None
        legal = masks > 0
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
