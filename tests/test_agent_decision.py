"""``tt_env.evaluation.loop.agent_decision``: one agent's move of the one game loop, which
``play_game`` and the web app's Play page both use."""

from __future__ import annotations

import numpy as np

from tt_env.agents import make_agent
from tt_env.engine import game
from tt_env.engine.rules import Rules
from tt_env.evaluation.loop import agent_decision, play_game
from tt_env.observation import encode


def test_agent_decision_is_the_agents_own_act_at_the_seat_to_move() -> None:
    rules = Rules(num_players=3)
    state = game.new_game(rules, np.random.default_rng(4))
    agent = make_agent("random-v0")
    obs, mask, action, seconds = agent_decision(agent, state, np.random.default_rng(9))
    seat = state.current_player
    assert np.array_equal(obs, encode(state, seat)) and np.array_equal(mask, game.action_mask(state))
    assert action == agent.act(encode(state, seat), game.action_mask(state), np.random.default_rng(9))
    assert mask[action] and seconds >= 0


def test_play_game_is_agent_decision_in_turn() -> None:
    """The loop written out with the step gives the same game as ``play_game``."""
    rules = Rules(num_players=2, rounds=(3, 4))
    agents = [make_agent("greedy-v0"), make_agent("random-v0")]
    played = play_game(agents, rules, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    state = game.new_game(rules, rng)
    while not state.game_over:
        game.apply(state, agent_decision(agents[state.current_player], state, rng)[2])
    assert state.scores == played.scores
