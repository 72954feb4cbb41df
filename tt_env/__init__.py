"""three-thirteen: Three Thirteen rummy as a reinforcement-learning environment.

Importing ``tt_env`` registers ``"tt_env/ThreeThirteen-v0"`` with PettingZoo (AEC) and
with Gymnasium (the single-agent wrapper).
"""

from __future__ import annotations

from .registration import register_envs

__version__ = "0.1.0"

register_envs()
