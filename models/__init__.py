"""PyTorch policy-value networks for Three Thirteen, their masked distribution and checkpoints.

Nothing here imports an environment or a training script: a network maps
``(observation, action_mask)`` to a masked action distribution and a value, and
:mod:`models.checkpoint` saves and loads it with a JSON sidecar. :mod:`models.agent_loader`
is the one bridge to ``tt_env`` (it turns a checkpoint into an agent).
"""

from __future__ import annotations

from .distributions import MaskedCategorical
from .networks import NETWORKS, CardNet, MLPPolicy, PolicyValueNet, build_network, layer_init

__all__ = ["NETWORKS", "CardNet", "MLPPolicy", "MaskedCategorical", "PolicyValueNet", "build_network",
           "layer_init"]
