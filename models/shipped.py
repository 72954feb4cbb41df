"""The trained agents shipped with the package, by name, and where their checkpoints are.

``ppo-2p-v0`` is ``models/checkpoints/ppo-2p-v0.pt`` (+ its ``.json`` sidecar). The folder is
package data found through ``importlib.resources``, so a source checkout, an editable install
and an installed wheel find it the same way, from any working directory. This module needs
no torch: ``tt_env`` lists these names (``tt_env.agents.agent_names``) and says that torch is
needed to play them where it is missing; ``models.agent_loader`` loads them.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

SHIPPED = {"ppo-2p-v0": "ppo-2p-v0.pt", "ppo-2p-v1": "ppo-2p-v1.pt", "ppo-3p-v0": "ppo-3p-v0.pt",
           "ppo-4p-v0": "ppo-4p-v0.pt", "scratch-2p-v0": "scratch-2p-v0.pt",
           "scratch-2p-v1": "scratch-2p-v1.pt"}
"""Trained agents shipped in ``models/checkpoints`` (``python -m training.ship`` writes them), by name."""


NETWORK_AGENTS = {"ismcts-v1": ("belief-2p-v0.pt", "belief-3p-v0.pt", "belief-4p-v0.pt")}
"""Named agents that are not checkpoints but need the shipped networks (and torch): ``ismcts-v1``
searches on the shipped beliefs (``models.search_agents``), by name, with the files it reads."""


def checkpoint_dir() -> Path:
    """The folder of the shipped checkpoints (package data of ``models``)."""
    folder = files("models").joinpath("checkpoints")
    if not isinstance(folder, Path):  # pragma: no cover - a zipped install, which pip never makes
        raise RuntimeError(f"the shipped checkpoints are not on the file system ({folder}): install the package "
                           f"with pip, not as a zip")
    return folder


CHECKPOINT_DIR = checkpoint_dir()


def available_shipped() -> list[str]:
    """The shipped agents whose checkpoint is present (every one, in a complete install), in order."""
    return [name for name, filename in SHIPPED.items() if (CHECKPOINT_DIR / filename).is_file()]


def available_network_agents() -> list[str]:
    """The :data:`NETWORK_AGENTS` whose networks are present (every one, in a complete install)."""
    return [name for name, files in NETWORK_AGENTS.items() if all((CHECKPOINT_DIR / f).is_file() for f in files)]

