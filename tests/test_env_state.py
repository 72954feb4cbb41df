"""``env.state()`` and ``env.state_space``: the full state for centralized critics (issue 19, section 3).

It holds everything (decoded field by field it is the engine's state, and a game rebuilt from it
gives every player the same observation and the same legal moves), and no observation leaks it
(hidden cards exchanged between a hand and the stock change the state, never the observer's view).
"""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test.state_test import test_state as pettingzoo_state_test
from pettingzoo.test.state_test import test_state_space as pettingzoo_state_space_test

from tt_env import three_thirteen_v0
from tt_env.engine import game
from tt_env.engine.cardlist import CardList
from tt_env.engine.game import GameState
from tt_env.engine.rules import Rules
from tt_env.observation import encode
from tt_env.observation.state import (STATE_VERSION, decode_state, encode_state, get_state_layout, state_facts,
                          state_layout_table, state_size)

CONFIGS = [
    {"num_players": 2},
    {"num_players": 3, "aces": "high_or_low", "discard_drawn_discard": True},
    {"num_players": 4, "decks": 3, "rounds": (9, 10, 11), "max_turns_per_round": 12},
    {"num_players": 8, "rounds": (11,), "meld_needs_natural": True},
]


def _positions(options: dict, seed: int, limit: int = 400):
    """``(env, rng)`` at each step of a random masked game (at most ``limit`` steps)."""
    env = three_thirteen_v0.raw_env(**options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(limit):
        yield env, rng
        if env.game_state.game_over:
            return
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


def rebuild(facts: dict, rules: Rules, rng: np.random.Generator) -> GameState:
    """A :class:`GameState` made only from the facts of a state vector (stock and pile order drawn anew)."""
    stock = list(facts["stock"])
    rng.shuffle(stock)
    below = list(facts["discard_below"])
    rng.shuffle(below)
    pile = below + ([facts["discard_top"]] if facts["discard_top"] is not None else [])
    return GameState(rules=rules, rng=rng, hands=[list(h) for h in facts["hands"]], stock=stock,
                     discard_pile=CardList(pile), round_index=rules.rounds.index(facts["round_number"]),
                     round_number=facts["round_number"], dealer=facts["dealer"],
                     current_player=facts["current_player"], phase=facts["phase"], scores=list(facts["scores"]),
                     went_out=facts["went_out"], turn=facts["turn"], taken_this_turn=facts["taken_this_turn"],
                     known_taken=[list(k) for k in facts["known_taken"]],
                     discards=[CardList(d) for d in facts["discards"]], game_over=facts["game_over"])


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: f"{o['num_players']}p")
def test_the_state_holds_every_field_of_the_game(options):
    for seed in (0, 1):
        for env, _ in _positions(options, seed):
            vector = env.state()
            assert vector.dtype == np.float32 and vector.shape == (state_size(env.rules.num_players),)
            assert env.state_space.contains(vector)
            assert decode_state(vector, env.rules) == state_facts(env.game_state), env.game_state.describe()


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: f"{o['num_players']}p")
def test_a_game_rebuilt_from_the_state_is_the_same_game_for_every_player(options):
    for env, rng in _positions(options, seed=2):
        state = env.game_state
        rebuilt = rebuild(decode_state(env.state(), env.rules), env.rules, np.random.default_rng(rng.integers(2**31)))
        assert np.array_equal(encode_state(rebuilt), env.state())
        for seat in range(env.rules.num_players):
            assert np.array_equal(encode(rebuilt, seat), encode(state, seat)), (seat, state.describe())
        assert game.legal_actions(rebuilt) == game.legal_actions(state)
        assert game.round_penalties(rebuilt) == game.round_penalties(state)


def _hidden_swap(state: GameState, observer: int) -> GameState | None:
    """A copy of ``state`` with one card of another seat's hidden hand exchanged with a different stock card."""
    for other in range(state.rules.num_players):
        if other == observer:
            continue
        hidden = [c for c in state.hands[other] if state.hands[other].count(c) > state.known_taken[other].count(c)]
        for card in hidden:
            for i, stock_card in enumerate(state.stock):
                if stock_card != card:
                    world = state.copy()
                    world.hands[other][world.hands[other].index(card)] = stock_card
                    world.stock[i] = card
                    return world
    return None


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: f"{o['num_players']}p")
def test_no_observation_shows_what_the_state_adds(options):
    swaps = 0
    for env, rng in _positions(options, seed=3):
        state = env.game_state
        observer = int(rng.integers(env.rules.num_players))
        world = _hidden_swap(state, observer)
        if world is None or state.game_over:
            continue
        swaps += 1
        assert not np.array_equal(encode_state(world), encode_state(state)), "the state shows the hidden cards"
        assert np.array_equal(encode(world, observer), encode(state, observer)), "an observation leaks hidden cards"
    assert swaps > 20


def test_reading_the_state_changes_nothing_and_observations_stay_as_they_were():
    env = three_thirteen_v0.env(num_players=3)
    env.reset(seed=4)
    raw = env.unwrapped
    before = raw.game_state.to_dict()
    observations = {a: env.observe(a) for a in env.agents}
    first = env.state()
    assert np.array_equal(first, env.state()) and raw.game_state.to_dict() == before
    for agent, obs in observations.items():
        assert set(obs) == {"observation", "action_mask"}
        again = env.observe(agent)
        assert all(np.array_equal(obs[k], again[k]) for k in obs)
    assert first.shape != observations["player_0"]["observation"].shape


def test_pettingzoo_state_checks():
    """PettingZoo's own checks (its play samples unmasked actions: the wrapped env ends the game on an illegal one)."""
    pettingzoo_state_space_test(three_thirteen_v0.raw_env(num_players=3))
    for seed in range(5):
        env = three_thirteen_v0.env(num_players=3)
        pettingzoo_state_space_test(env)
        pettingzoo_state_test(env, num_cycles=200, seed=seed)


def test_state_before_reset_is_an_error_that_says_reset():
    with pytest.raises(RuntimeError, match=r"state\(\) called before reset\(\): call reset\(\) first"):
        three_thirteen_v0.raw_env().state()


def test_the_docstring_table_is_the_layout_and_the_layout_is_versioned():
    lines = three_thirteen_v0.__doc__.splitlines()
    start = lines.index(state_layout_table(2).splitlines()[0])
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    assert "\n".join(lines[start:end]) == state_layout_table(2)
    assert STATE_VERSION == 1
    for n in range(2, 9):
        lay = get_state_layout(n)
        assert lay.size == 160 * n + 236 == sum(size for _, size, _ in lay.pieces)
        assert three_thirteen_v0.raw_env(num_players=n).state_space.shape == (lay.size,)
