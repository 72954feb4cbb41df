"""Checks shared by the environments: actions that are not integers, seeds, done agents.

Kept apart from the environments so that their modules hold the game logic; the messages
say what is wrong and what is allowed (STYLE: bad input gets a clear error).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .engine import game


class ActionCheckWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` with errors that say what is wrong.

    A non-integer action (a bool, a float, a string, ``None`` at a live agent's turn, an array
    with a shape) raises ``TypeError`` and an integer outside ``0..53`` raises ``ValueError``,
    both naming what is allowed, instead of a bare ``AssertionError`` (or, for ``True``, an
    error from inside ``TerminateIllegalWrapper``). These are bugs in the caller, not moves:
    only an in-range action that the mask forbids is an illegal move, which
    ``TerminateIllegalWrapper`` turns into -1 for the offender.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def step(self, action: Any) -> None:
        if type(action) is not int:
            raw = self._raw
            if action is None and raw.game_state is not None and _is_done(raw, raw.agent_selection):
                self.env.step(None)
                return
            action = raw._checked_action(action)
        if not 0 <= action < game.NUM_ACTIONS:
            raise ValueError(f"action {action} is outside the action space: use an int 0..{game.NUM_ACTIONS - 1} "
                             f"(one whose action_mask entry is 1)")
        self.env.step(action)


def _is_done(env: Any, agent: str) -> bool:
    """Whether ``agent`` is terminated or truncated (or already removed)."""
    return env.terminations.get(agent, True) or env.truncations.get(agent, True)


def checked_seed(seed: Any, *, allow_list: bool = False) -> Any:
    """``seed`` for ``reset``: ``None``, an int >= 0 (a numpy integer becomes an int) or, with
    ``allow_list``, a non-empty list or tuple of them; else ``ValueError``/``TypeError`` naming it."""
    if seed is None or type(seed) is int and seed >= 0:
        return seed
    allowed = "None or an integer >= 0" + (" (or a non-empty list of them)" if allow_list else "")
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise ValueError(f"seed={seed!r} is not allowed: a seed must not be negative; use {allowed}")
        return int(seed)
    if allow_list and isinstance(seed, (list, tuple)) and seed:
        try:
            return [checked_seed(s) for s in seed]
        except (TypeError, ValueError):
            raise ValueError(f"seed={seed!r} is not allowed: every entry of a seed list must be an integer "
                             f">= 0; use {allowed}") from None
    raise TypeError(f"seed={seed!r} ({type(seed).__name__}) is not allowed: use {allowed}")
