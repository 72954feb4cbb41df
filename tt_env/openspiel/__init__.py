"""Three Thirteen as an OpenSpiel game, ``python_three_thirteen`` (needs the ``openspiel`` extra).

Importing this package registers the game with pyspiel:

- :mod:`.game`: the game and its state (a thin adapter over ``tt_env.engine``), JSON I/O;
- :mod:`.observer`: the observation and information-state tensors and strings;
- :mod:`.resample`: ``resample_from_infostate``, so information-set search works;
- :mod:`.bot`: any ``tt_env.agents`` agent as a ``pyspiel.Bot`` (:func:`make_bot`).
"""

from __future__ import annotations

from .bot import make_bot
from .game import GAME_NAME, ThreeThirteenGame, ThreeThirteenState, state_from_json, state_to_json

__all__ = ["GAME_NAME", "ThreeThirteenGame", "ThreeThirteenState", "make_bot", "state_from_json", "state_to_json"]
