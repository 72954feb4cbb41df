"""The bridge from checkpoints to ``tt_env`` agents, and the shipped agents by name.

Imported lazily by ``tt_env.agents.registry`` (so ``tt_env`` itself never needs torch), it
registers a checkpoint loader (``make_agent("runs/x/checkpoints/final.pt", rules)`` works
everywhere a scripted agent name does; so does a Stable-Baselines3 ``model.zip``, read by
:mod:`models.sb3_zip` without unpickling) and the shipped checkpoints of
``models/checkpoints/`` under their names (:mod:`models.shipped`): ``ppo-2p-v0`` is
``models/checkpoints/ppo-2p-v0.pt``.

A :class:`CheckpointAgent` plays the most probable legal action by default (``greedy=True``,
the usual choice for evaluation: the numbers in the README are for it); with
``greedy=False`` it samples from the masked policy with the ``rng`` it is given.

It decides one observation (``act``) or many at once (``act_batch``, what the evaluator uses
for games played side by side: one preprocess and a few forward passes for the batch). Both run
the network through :class:`models.batch_policy.BatchPolicy`, whose rows do not depend on the
batch, so the agent makes the same choice for an observation however it is asked: alone, in
a batch of any size, in any position (``tests/test_eval_batch.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from tt_env.agents import register_agent, register_checkpoint_loader
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION, observation_size

from .batch_policy import BatchPolicy
from .checkpoint import CheckpointError, load_checkpoint
from .networks import PolicyValueNet
from .sb3_zip import is_sb3_zip, load_sb3_agent
from .shipped import CHECKPOINT_DIR, SHIPPED

__all__ = ["CHECKPOINT_DIR", "SHIPPED", "CheckpointAgent", "is_checkpoint_spec", "load_agent"]


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
    def act_batch(self, observations: Sequence[np.ndarray] | np.ndarray, action_masks: Sequence[np.ndarray] | np.ndarray,
                  rngs: Sequence[np.random.Generator]) -> list[int]:
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
        logits = np.where(legal, self.policy.logits(self.net.as_input(obs, legal)), -np.inf)  # MaskedCategorical's masking
        if self.greedy:
            return logits.argmax(axis=1).tolist()
        return [self._sample(row, rng) for row, rng in zip(logits, rngs)]

    @staticmethod
    def _sample(logits: np.ndarray, rng: np.random.Generator) -> int:
        """An action drawn with ``rng`` from the softmax of masked ``logits``."""
        probs = np.exp(logits - logits.max())
        return int(rng.choice(probs.size, p=probs / probs.sum()))


def load_agent(path: str | Path, rules: Rules | None = None, greedy: bool = True, name: str | None = None,
               allow_rule_mismatch: bool = False) -> CheckpointAgent:
    """A :class:`CheckpointAgent` from a checkpoint, checked against ``rules``.

    The player count and observation layout must fit; so must the scoring rules (``aces``,
    ``meld_needs_natural``: the network learned one scoring) unless ``allow_rule_mismatch``.
    """
    rules = rules or Rules()
    n = rules.num_players
    torch.set_num_threads(1)  # one move at a time: more threads only contend
    net, meta = load_checkpoint(path, num_players=n, obs_version=OBS_VERSION, obs_size=observation_size(n),
                                rules=rules, allow_rule_mismatch=allow_rule_mismatch)
    return CheckpointAgent(net, name=name or Path(path).stem, greedy=greedy, meta=meta)


def _loader(path: str, rules: Rules, *, greedy: bool = True, allow_rule_mismatch: bool = False) -> CheckpointAgent:
    if is_sb3_zip(path):  # a Stable-Baselines3 model.zip, read without unpickling (models.sb3_zip)
        return load_sb3_agent(path, rules, greedy=greedy, allow_rule_mismatch=allow_rule_mismatch)
    return load_agent(path, rules, greedy=greedy, allow_rule_mismatch=allow_rule_mismatch)


def _shipped_factory(name: str, filename: str):
    def factory(rules: Rules, *, greedy: bool = True, allow_rule_mismatch: bool = False) -> CheckpointAgent:
        path = CHECKPOINT_DIR / filename
        if not path.exists():
            raise CheckpointError(f"shipped agent {name!r} is missing its checkpoint {str(path)!r}")
        return load_agent(path, rules, greedy=greedy, name=name, allow_rule_mismatch=allow_rule_mismatch)

    return factory


def is_checkpoint_spec(spec: object) -> bool:
    """Whether agent ``spec`` is backed by a checkpoint (a shipped agent or a checkpoint path)."""
    if not isinstance(spec, str):
        return False
    if spec in SHIPPED:
        return True
    from tt_env.agents import list_agents

    return spec not in list_agents() and (spec.endswith(".pt") or Path(spec).is_file())


register_checkpoint_loader(_loader)
for _name, _file in SHIPPED.items():
    if (CHECKPOINT_DIR / _file).exists():
        register_agent(_name, _shipped_factory(_name, _file))


from . import search_agents  # noqa: E402,F401  (registers ismcts-v1, the search on the learned belief)
