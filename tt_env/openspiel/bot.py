"""Our agents as OpenSpiel bots: any ``tt_env.agents`` agent plays ``python_three_thirteen``.

``make_bot("expert-v0", game, player_id=1)`` (a registry name, a checkpoint path, or an agent
object) gives a ``pyspiel.Bot`` for OpenSpiel's tools, such as
``open_spiel.python.algorithms.evaluate_bots``. The bot reads what the agent reads everywhere
else: the seat's observation (``state.observation_tensor(player)``, the env's vector) and the
legal-action mask, never the game state.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from ..agents import Agent, make_agent
from .game import GAME_NAME, rules_from_params


class AgentBot(pyspiel.Bot):
    """``agent`` playing seat ``player_id``; its random choices come from ``seed``."""

    def __init__(self, agent: Agent, player_id: int, seed: int | None = None) -> None:
        pyspiel.Bot.__init__(self)
        self.agent = agent
        self.player_id = player_id
        self._rng = np.random.default_rng(seed)

    def step(self, state: pyspiel.State) -> int:
        """The agent's action at ``state``, where it is this bot's seat to move."""
        if state.current_player() != self.player_id:
            raise ValueError(f"{self.agent.name} plays seat {self.player_id}, but it is "
                             f"{state.current_player()}'s move (chance -1, terminal -4)")
        obs = np.asarray(state.observation_tensor(self.player_id), dtype=np.float32)
        mask = np.asarray(state.legal_actions_mask(self.player_id), dtype=np.int8)
        return int(self.agent.act(obs, mask, self._rng))

    def restart_at(self, state: pyspiel.State) -> None:
        """Nothing to reset: the agents keep no memory between moves."""

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        """Nothing to record: the observation carries what the agent reads."""

    def provides_policy(self) -> bool:
        return False

    def is_clonable(self) -> bool:
        return False


def make_bot(spec: str | Agent, game: pyspiel.Game, player_id: int, *, seed: int | None = None,
             **options: Any) -> AgentBot:
    """A bot of ``spec`` (as for ``tt_env.agents.make_agent``) for seat ``player_id`` of ``game``."""
    name = game.get_type().short_name
    if name != GAME_NAME:
        raise ValueError(f"our agents play {GAME_NAME!r} only, not {name!r}")
    if not 0 <= player_id < game.num_players():
        raise ValueError(f"player_id={player_id!r} is not a seat: use 0..{game.num_players() - 1}")
    rules = rules_from_params(game.get_parameters())
    return AgentBot(make_agent(spec, rules, **options), player_id, seed)
