"""The one interface of every policy, scripted or learned.

An agent maps what a seat may see to an action id: ``act(observation, action_mask, rng)``.
It reads only the observation vector (layout: ``tt_env.observation``) and the mask, never
the game state, so the same agent plays through the AEC env, the Gymnasium env, the
evaluator and a human-play session. The rules (public knowledge) are given at construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..engine.game import DISCARD_BASE, NUM_ACTIONS
from ..engine.rules import Rules
from ..observation.sizes import num_players_of  # noqa: F401  (re-exported: agents read it here)


@runtime_checkable
class Agent(Protocol):
    """Anything with a registry ``name`` and an ``act`` method."""

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        """Choose a legal action id (``action_mask[a] == 1``)."""
        ...


def checked_mask(action_mask: np.ndarray, hand: Sequence[int] | None = None, phase: int | None = None) -> np.ndarray:
    """``action_mask`` as an array, checked: 54 entries, each 0 or 1, at least one 1; draws or discards,
    not both; with ``hand`` (the cards the observation says the seat holds) and ``phase`` (0 draw, 1
    discard, as the observation says), only discards of held cards in the discard phase and only
    draws in the draw phase. Anything else is a ``ValueError`` naming the problem: a policy given
    such a mask would answer with a move that means nothing. (Plain Python over the 54 entries:
    faster than numpy calls at this size, and agents check every mask they act on.)"""
    mask = np.asarray(action_mask) if action_mask is not None else np.zeros(0)
    if mask.shape != (NUM_ACTIONS,) or mask.dtype.kind not in "biuf":
        raise ValueError(f"an action mask has {NUM_ACTIONS} entries (0 or 1), one per action id; got shape "
                         f"{mask.shape} and dtype {mask.dtype}")
    values = mask.tolist()
    legal = [a for a, v in enumerate(values) if v]
    if not legal:
        raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
    if any(values[a] != 1 for a in legal):
        raise ValueError(f"an action mask holds 0 or 1, got {sorted({values[a] for a in legal} - {1})[:5]}")
    discards = legal[-1] >= DISCARD_BASE
    if discards and legal[0] < DISCARD_BASE:
        raise ValueError("the action mask allows both draws and discards: a turn is in one phase or the other")
    if phase is not None and discards != (phase == 1):
        raise ValueError(f"the action mask allows {'discards' if discards else 'draws'}, but the observation is in "
                         f"the {'discard' if phase == 1 else 'draw'} phase")
    if hand is not None and discards:
        held = set(hand)
        stray = [a - DISCARD_BASE for a in legal if a - DISCARD_BASE not in held]
        if stray:
            raise ValueError(f"the action mask allows discarding card(s) {stray}, which the observation's hand "
                             f"does not hold")
    return mask


class RandomAgent:
    """``random-v0``: uniform over the legal actions."""

    name = "random-v0"

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules or Rules()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(checked_mask(action_mask))
        return int(legal[rng.integers(legal.size)])
