"""The bridge from checkpoints to ``tt_env`` agents, and the shipped agents by name.

Imported lazily by ``tt_env.agents.registry`` through the ``three_thirteen.agents`` entry point
(so ``tt_env`` itself never needs torch nor names this package), it
registers a checkpoint loader (``make_agent("runs/x/checkpoints/final.pt", rules)`` works
everywhere a scripted agent name does; so does a Stable-Baselines3 ``model.zip``, read by
:mod:`models.sb3_zip` without unpickling) and the shipped checkpoints of
``models/checkpoints/`` under their names (:mod:`models.shipped`): ``ppo-2p-v0`` is
``models/checkpoints/ppo-2p-v0.pt``.

A :class:`~models.checkpoint_agent.CheckpointAgent` (its own module, re-exported here) plays the
most probable legal action by default (``greedy=True``, the usual choice for evaluation: the
numbers in the README are for it); with
``greedy=False`` it samples from the masked policy with the ``rng`` it is given.

It decides one observation (``act``) or many at once (``act_batch``, what the evaluator uses
for games played side by side: one preprocess and a few forward passes for the batch). Both run
the network through :class:`models.batch_policy.BatchPolicy`, whose rows do not depend on the
batch, so the agent makes the same choice for an observation however it is asked: alone, in
a batch of any size, in any position (``tests/test_eval_batch.py``).
"""

from __future__ import annotations

from pathlib import Path

import torch

from tt_env.agents import register_agent, register_checkpoint_loader
from tt_env.engine.rules import Rules
from tt_env.env_checks import checked_flag
from tt_env.observation import OBS_VERSION, observation_size

from .agent_info import is_checkpoint_spec
from .checkpoint import CheckpointError, load_checkpoint
from .checkpoint_agent import CheckpointAgent
from .sb3_zip import is_sb3_zip, load_sb3_agent
from .shipped import CHECKPOINT_DIR, SHIPPED

__all__ = ["CHECKPOINT_DIR", "SHIPPED", "CheckpointAgent", "is_checkpoint_spec", "load_agent"]


def load_agent(path: str | Path, rules: Rules | None = None, greedy: bool = True, name: str | None = None,
               allow_rule_mismatch: bool = False) -> CheckpointAgent:
    """A :class:`CheckpointAgent` from a checkpoint, checked against ``rules``.

    The player count and observation layout must fit; so must the scoring rules (``aces``,
    ``meld_needs_natural``: the network learned one scoring) unless ``allow_rule_mismatch``.
    """
    rules = rules or Rules()
    n = rules.num_players
    greedy, allow_rule_mismatch = checked_flag(greedy, "greedy"), checked_flag(allow_rule_mismatch,
                                                                               "allow_rule_mismatch")
    torch.set_num_threads(1)  # one move at a time: more threads only contend
    net, meta = load_checkpoint(path, num_players=n, obs_version=OBS_VERSION, obs_size=observation_size(n),
                                rules=rules, allow_rule_mismatch=allow_rule_mismatch)
    if hasattr(net, "play_under"):  # features of the game on the table (its turn limit, decks)
        net.play_under(rules)
    return CheckpointAgent(net, name=name or Path(path).stem, greedy=greedy, meta=meta, rules=rules)


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


register_checkpoint_loader(_loader)
for _name, _file in SHIPPED.items():
    if (CHECKPOINT_DIR / _file).exists():
        register_agent(_name, _shipped_factory(_name, _file))


from . import search_agents  # noqa: E402,F401  (registers ismcts-v1, the search on the learned belief)
