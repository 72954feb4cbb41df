"""RLlib RLModules for our env: the masked PPO policy, and fixed opponents.

RLlib's own action-masking module lives among its examples
(``ray/rllib/examples/rl_modules/classes/action_masking_rlm.py``), which are not a stable API;
this file keeps the same idea in our code. Observations arrive as the dict made by
``training/rllib/env.py``: ``{"observations": float32 (B, obs), "action_mask": int8 (B, 54)}``.

* :class:`MaskedPPOModule` wraps one of our networks (``models.networks``, built by name with
  ``build_network``). Every forward pass (exploration, inference, training) sets the logits of
  forbidden actions to ``MASKED_LOGIT``, as ``models.distributions.MaskedCategorical`` does, so
  sampling, the PPO ratio, the entropy and the KL all see the masked distribution, and the
  exported network gives the same probabilities. The training pass keeps the values it computed
  (as RLlib's "embeddings") so the value loss does not run the network twice.
* :class:`FixedAgentModule` plays an agent of ``tt_env.agents`` (a scripted opponent such as
  ``greedy-v0``, or a checkpoint path) on the env runners. It has no weights and must not be in
  ``policies_to_train``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule

from models.distributions import MASKED_LOGIT
from models.networks import build_network
from training.rllib.env import MASK_KEY, OBS_KEY
from tt_env.engine.rules import Rules


def _split(batch: dict[str, Any]) -> tuple[Any, Any]:
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or OBS_KEY not in obs or MASK_KEY not in obs:
        raise ValueError(f"expected observations as a dict with keys {OBS_KEY!r} and {MASK_KEY!r} "
                         f"(wrap the env with training.rllib.env); got {type(obs).__name__}")
    return obs[OBS_KEY], obs[MASK_KEY]


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every forbidden action (``mask == 0``) at ``MASKED_LOGIT``: probability 0."""
    return torch.where(mask.bool(), logits, torch.full_like(logits, MASKED_LOGIT))


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """PPO policy + value network of ``models.networks``, its logits masked by ``action_mask``.

    ``model_config``: ``{"network": "mlp", "network_kwargs": {"num_players": 2, ...}}``, the
    arguments of ``models.networks.build_network``.
    """

    def setup(self) -> None:
        cfg = self.model_config or {}
        self.net = build_network(cfg.get("network", "mlp"), **dict(cfg.get("network_kwargs") or {}))
        if self.net.obs_size != int(np.prod(self.observation_space[OBS_KEY].shape)):
            raise ValueError(f"network takes observations of length {self.net.obs_size}, the env gives "
                             f"{self.observation_space[OBS_KEY].shape}")

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, mask = _split(batch)
        logits, _ = self.net.logits_and_value(self.net.as_input(obs))
        return {Columns.ACTION_DIST_INPUTS: masked_logits(logits, mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, mask = _split(batch)
        logits, value = self.net.logits_and_value(self.net.as_input(obs))
        return {Columns.ACTION_DIST_INPUTS: masked_logits(logits, mask), Columns.EMBEDDINGS: value}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is not None:  # the values kept by _forward_train
            return embeddings
        obs, _ = _split(batch)
        return self.net.get_value(obs)


class FixedAgentModule(RLModule):
    """A fixed policy: an agent of ``tt_env.agents`` (a scripted opponent or a checkpoint).

    ``model_config``: ``{"agent": "greedy-v0", "rules": Rules.to_dict(), "seed": 0}``; the
    agent is built with the rules of the games (public knowledge).
    """

    def setup(self) -> None:
        from tt_env.agents import make_agent

        cfg = self.model_config or {}
        self.agent_name = cfg["agent"]
        self.agent = make_agent(self.agent_name, Rules.from_dict(cfg["rules"]))
        self._rng = np.random.default_rng(cfg.get("seed"))

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, mask = (x.cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x) for x in _split(batch))
        actions = [int(self.agent.act(o, m, self._rng)) for o, m in zip(obs, mask, strict=True)]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward_inference(batch, **kwargs)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError(f"fixed agent {self.agent_name!r} is not trainable; "
                           "keep it out of policies_to_train")
