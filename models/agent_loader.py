"""The bridge from checkpoints to ``tt_env`` agents, and the shipped agents by name.

Imported lazily by ``tt_env.agents.registry`` (so ``tt_env`` itself never needs torch), it
registers a checkpoint loader (``make_agent("runs/x/checkpoints/final.pt", rules)`` works
everywhere a scripted agent name does) and the shipped checkpoints of
``models/checkpoints/`` under their names: ``ppo-2p-v0`` is ``models/checkpoints/ppo-2p-v0.pt``.

A :class:`CheckpointAgent` plays the most probable legal action by default (``greedy=True``,
the usual choice for evaluation: the numbers in the README are for it); with
``greedy=False`` it samples from the masked policy with the ``rng`` it is given.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch

from tt_env.agents import register_agent, register_checkpoint_loader
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION, observation_size

from .checkpoint import CheckpointError, load_checkpoint
from .networks import PolicyValueNet

CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"
SHIPPED = {"ppo-2p-v0": "ppo-2p-v0.pt"}


class CheckpointAgent:
    """An agent of the common interface backed by a policy network."""

    def __init__(self, net: PolicyValueNet, name: str = "checkpoint", greedy: bool = True,
                 meta: dict | None = None) -> None:
        self.net = net.eval()
        self.name = name
        self.greedy = greedy
        self.meta = meta or {}
        self._policy = None  # the network traced for one observation at a time, built on first use

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        """Unmasked logits of one preprocessed observation; TorchScript-traced (half the CPU of eager)."""
        if self._policy is None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._policy = torch.jit.trace_module(self.net, {"logits_and_value": x}).logits_and_value
            except Exception:  # noqa: BLE001 - a network that cannot be traced runs eagerly
                self._policy = self.net.logits_and_value
        return self._policy(x)[0][0]

    @torch.inference_mode()
    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        """The argmax legal action (``greedy``) or one drawn from the masked policy with ``rng``."""
        legal = np.asarray(action_mask) > 0
        if not legal.any():
            raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
        x = self.net.as_input(np.asarray(observation, dtype=np.float32)[None], legal[None])
        logits = self._logits(x).double().numpy()
        logits = np.where(legal, logits, -np.inf)  # the masking of MaskedCategorical, in numpy
        if self.greedy:
            return int(logits.argmax())
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
