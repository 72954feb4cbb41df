"""The sizes of the observation and the action space: the one place that knows them.

The observation of ``N`` players is ``OBS_PER_PLAYER * N + OBS_FIXED`` floats (107 N + 80 in
layout version 1), derived here from the layout itself, so that a change to the layout changes
every size with it. Nothing else in the project writes these numbers.
"""

from __future__ import annotations

import numpy as np

from ..engine.game import NUM_ACTIONS
from ..engine.rules import MAX_PLAYERS, MIN_PLAYERS
from .encoding import get_layout, observation_size

NUM_CARD_IDS = 52
"""Distinct cards of one deck (the card ids 0..51)."""
OBS_PER_PLAYER = observation_size(MIN_PLAYERS + 1) - observation_size(MIN_PLAYERS)
"""Floats the observation gains per player (107 in layout version 1)."""
OBS_FIXED = observation_size(MIN_PLAYERS) - MIN_PLAYERS * OBS_PER_PLAYER
"""Floats of the observation that do not depend on the player count (80 in layout version 1)."""
SIZE_FORMULA = f"{OBS_PER_PLAYER} * N + {OBS_FIXED}"
"""The observation length as people read it: ``"107 * N + 80"``."""

assert all(observation_size(n) == OBS_PER_PLAYER * n + OBS_FIXED for n in range(MIN_PLAYERS, MAX_PLAYERS + 1))


def players_of_size(size: int) -> int | None:
    """The player count whose observation has ``size`` floats, or None when none has."""
    n, rest = divmod(int(size) - OBS_FIXED, OBS_PER_PLAYER)
    return n if not rest and MIN_PLAYERS <= n <= MAX_PLAYERS else None


def num_players_of(observation: np.ndarray) -> int:
    """Player count implied by an observation's length (107 * N + 80)."""
    size = int(np.shape(observation)[-1])
    n, rest = divmod(size - OBS_FIXED, OBS_PER_PLAYER)
    if rest or n < 2:
        raise ValueError(f"an observation of length {size} is not a three_thirteen_v0 observation "
                         f"(length {SIZE_FORMULA} for N = 2..8 players)")
    return n


__all__ = ["NUM_ACTIONS", "NUM_CARD_IDS", "OBS_FIXED", "OBS_PER_PLAYER", "SIZE_FORMULA", "get_layout", "num_players_of",
           "observation_size", "players_of_size"]
