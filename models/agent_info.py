"""What ``tt_env``'s agent registry asks about the trained agents, without importing torch.

The registry never names ``models``: it finds this module through the entry point
``three_thirteen.agent_info`` (``pyproject.toml``) and calls the functions below, so that help
texts, the evaluation and the leaderboard know the trained agents where torch is missing too
(reading a checkpoint's player count needs torch, as before).
"""

from __future__ import annotations

from pathlib import Path

from .shipped import CHECKPOINT_DIR, NETWORK_AGENTS, SHIPPED, available_network_agents, available_shipped


def agent_names() -> list[str]:
    """The shipped and network agents present here (for help texts and errors), in order."""
    return available_shipped() + available_network_agents()


def trained_agent_names() -> list[str]:
    """Every named agent that needs trained networks: the network agents, then the shipped checkpoints."""
    return [*NETWORK_AGENTS, *SHIPPED]


def is_checkpoint_spec(spec: object) -> bool:
    """Whether agent ``spec`` is backed by a checkpoint (a shipped agent or a checkpoint path)."""
    if not isinstance(spec, str):
        return False
    if spec in SHIPPED:
        return True
    from tt_env.agents import list_agents

    return spec not in list_agents() and (spec.endswith(".pt") or Path(spec).is_file())


def trained_players(spec: str) -> int | None:
    """The player count checkpoint agent ``spec`` was trained for; None for a spec that is not a
    checkpoint (a shipped name, a ``.pt`` or an SB3 ``.zip`` path)."""
    if spec in SHIPPED:
        from .checkpoint import read_metadata

        return int(read_metadata(CHECKPOINT_DIR / SHIPPED[spec])["num_players"])
    if spec.endswith(".pt"):
        from tt_env.agents import list_agents

        if spec in list_agents():
            return None
        from .checkpoint import read_metadata

        return int(read_metadata(spec)["num_players"])
    if spec.endswith(".zip"):
        from .sb3_zip import read_sb3_zip

        return int(read_sb3_zip(spec)[1]["num_players"])
    return None
