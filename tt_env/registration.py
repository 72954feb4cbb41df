"""Registration of the environment ids with PettingZoo and Gymnasium."""

from __future__ import annotations

ENV_ID = "tt_env/ThreeThirteen-v0"


def register_envs() -> None:
    """Register ``ENV_ID`` with PettingZoo's AEC registry and (single-agent) with Gymnasium."""
    import gymnasium

    try:
        from pettingzoo import register as pz_register
    except ImportError:  # older PettingZoo without a registry
        pz_register = None
    if pz_register is not None:
        try:
            pz_register("aec", ENV_ID, entry_point="tt_env.three_thirteen_v0:env")
        except Exception:  # noqa: BLE001 - already registered in this process
            pass
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="tt_env.gym_env:ThreeThirteenGymEnv",
                           vector_entry_point="tt_env.batch.vector_env:ThreeThirteenVectorEnv")
