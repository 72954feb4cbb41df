"""The one interface of every policy, scripted or learned.

An agent maps what a seat may see to an action id: ``act(observation, action_mask, rng)``.
It reads only the observation vector (layout: ``tt_env.observation``) and the mask, never
the game state, so the same agent plays through the AEC env, the Gymnasium env, the
evaluator and a human-play session. The rules (public knowledge) are given at construction.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..engine.rules import Rules


@runtime_checkable
class Agent(Protocol):
    """Anything with a registry ``name`` and an ``act`` method."""

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        """Choose a legal action id (``action_mask[a] == 1``)."""
        ...


def num_players_of(observation: np.ndarray) -> int:
    """Player count implied by an observation's length (107 * N + 80)."""
    size = int(np.shape(observation)[-1])
    n, rest = divmod(size - 80, 107)
    if rest or n < 2:
        raise ValueError(f"an observation of length {size} is not a three_thirteen_v0 observation "
                         f"(length 107 * N + 80 for N = 2..8 players)")
    return n


class RandomAgent:
    """``random-v0``: uniform over the legal actions."""

    name = "random-v0"

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules or Rules()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
        return int(legal[rng.integers(legal.size)])
