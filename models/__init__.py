"""PyTorch policy-value networks for Three Thirteen, their masked distribution and checkpoints.

Nothing here imports an environment or a training script: a network maps
``(observation, action_mask)`` to a masked action distribution and a value, and
:mod:`models.checkpoint` saves and loads it with a JSON sidecar. :mod:`models.agent_loader`
is the one bridge to ``tt_env`` (it turns a checkpoint into an agent); :mod:`models.shipped`
names the shipped checkpoints without torch.

The package itself imports nothing heavy: ``from models import CardNet`` imports torch (and
:mod:`models.networks`) when the name is first asked for, so that ``models.shipped`` works
in an environment-only install.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"MaskedCategorical": "distributions", "NETWORKS": "networks", "CardNet": "networks",
            "MLPPolicy": "networks", "PolicyValueNet": "networks", "build_network": "networks",
            "layer_init": "networks"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'models' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
