"""The one game loop: agents act in turn until the game is over.

:func:`play_game` is what the evaluation (``duplicate.play_game``), the data tools and the
benchmarks call to play a game between agents (one agent per seat), each seeing only its
observation and action mask. What a caller records (positions, actions, time) it records in
``on_decision``. :func:`agent_decision` is one agent's move of that loop: the web app's Play
page, which stops at a person's turn, asks its agents through it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ..agents import Agent
from ..engine import game
from ..engine.rules import Rules
from ..observation import encode

DecisionHook = Callable[[game.GameState, int, np.ndarray, np.ndarray, int, float], None]
"""``on_decision(state, seat, observation, mask, action, seconds)``: called before the action is applied."""


def can_batch(agent: Agent) -> bool:
    """Whether ``agent`` decides many observations in one call (an ``act_batch`` method)."""
    return callable(getattr(agent, "act_batch", None))


def agent_decision(agent: Agent, state: game.GameState, rng: np.random.Generator | None, *,
                   batched: bool = False) -> tuple[np.ndarray, np.ndarray, int, float]:
    """What ``agent`` plays at ``state``, for the seat to move: ``(observation, mask, action, seconds)``.

    The agent sees only that seat's observation and the action mask, and acts with ``rng``;
    ``batched``: ask it with one row of ``act_batch`` (see :func:`play_game`). ``seconds`` is the
    time the agent took. The action is not checked or applied: that is the caller's.
    """
    seat = state.current_player
    obs = encode(state, seat)
    mask = game.action_mask(state)
    t0 = time.perf_counter()
    if batched:
        action = agent.act_batch([obs], [mask], [rng])[0]
    else:
        action = agent.act(obs, mask, rng)
    return obs, mask, action, time.perf_counter() - t0


def play_game(agents: Sequence[Agent], rules: Rules, rng: np.random.Generator | None, *,
              agent_rngs: Sequence[np.random.Generator] | None = None,
              shuffle_rng: np.random.Generator | None = None, state: game.GameState | None = None,
              on_decision: DecisionHook | None = None) -> game.GameState:
    """Play one game, ``agents[seat]`` at each seat, and return its finished state.

    The game is dealt with ``game.new_game(rules, rng, shuffle_rng=shuffle_rng)``, or ``state``
    (a game in progress) is played on. Each agent acts with ``agent_rngs[seat]`` (default: ``rng``).
    A batch-capable agent (``act_batch``) is asked with one row, so that it decides here as it
    does in games played side by side. An illegal action raises ``RuntimeError``.
    """
    if len(agents) != rules.num_players:
        raise ValueError(f"{len(agents)} agents need rules with num_players={len(agents)}, "
                         f"got num_players={rules.num_players}")
    if state is None:
        if rng is None:
            raise ValueError("play_game needs rng to deal a game (or a state to play on)")
        state = game.new_game(rules, rng, shuffle_rng=shuffle_rng)
    rngs = list(agent_rngs) if agent_rngs is not None else [rng] * len(agents)
    batched = [can_batch(a) for a in agents]
    while not state.game_over:
        seat = state.current_player
        agent = agents[seat]
        obs, mask, action, seconds = agent_decision(agent, state, rngs[seat], batched=batched[seat])
        if on_decision is not None:
            on_decision(state, seat, obs, mask, action, seconds)
        if not mask[action]:
            raise RuntimeError(f"agent {getattr(agent, 'name', agent)!r} chose illegal action "
                               f"{action} at {state.describe()}")
        game.apply(state, action)
    return state
