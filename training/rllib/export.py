"""Export of the RLlib-trained policy to our checkpoint format (torch only: no Ray import here).

The RLlib module (``training/rllib/masking.py``) wraps one network of ``models.networks``, so
exporting is copying its weights into a fresh network of the same class and saving it with
``models.checkpoint.save_checkpoint``: ``NAME.pt`` (a ``state_dict``) and ``NAME.json``. The
result loads anywhere without Ray (``models.checkpoint.load_checkpoint``,
``python -m training.evaluate NAME.pt greedy-v0``) and gives the same action probabilities as
the RLlib module on the same observations.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

import torch

from models.checkpoint import save_checkpoint
from models.networks import build_network
from tt_env.observation import OBS_VERSION

MODULE_PREFIX = "net."  # MaskedPPOModule keeps the network as ``self.net``


def export_policy(module_state: Mapping[str, Any], path: str | os.PathLike, *, network: str,
                  network_kwargs: Mapping[str, Any], rules: Mapping[str, Any], training_steps: int,
                  extra: Mapping[str, Any] | None = None) -> Path:
    """Write the RLlib module state ``module_state`` as our checkpoint ``path`` (+ ``.json``).

    ``module_state`` is the module's state dict as RLlib returns it (``net.``-prefixed names,
    numpy arrays or tensors); ``network``/``network_kwargs`` rebuild the network
    (``models.networks.build_network``); ``rules`` is the ``Rules.to_dict()`` of the training
    games; ``training_steps`` the environment steps sampled so far.
    """
    net = build_network(network, **dict(network_kwargs))
    state = {k.removeprefix(MODULE_PREFIX): torch.as_tensor(v) for k, v in module_state.items()
             if k.startswith(MODULE_PREFIX)}
    net.load_state_dict(state)  # strict: a missing or extra weight is an error
    return save_checkpoint(path, net.eval(), obs_version=OBS_VERSION, rules=dict(rules),
                           training_steps=training_steps, extra=dict(extra or {}))
