"""Policy-based inference (``tt_env.agents.inference``): the table before the last discard is rebuilt
exactly, the true world passes when expert-v0 made that discard, and worlds that contradict it do not."""

from __future__ import annotations

import numpy as np
import pytest

from tt_env.agents import ExpertAgent
from tt_env.agents.inference import discard_is_consistent, last_discard_state
from tt_env.engine import Rules, game
from tt_env.engine.cardlist import CardList
from tt_env.observation import encode
from tt_env.search import determinize


def rotated(state: game.GameState, seat: int) -> game.GameState:
    """The same position with ``seat`` renumbered 0 (the others keep their order): a world whose
    hidden cards are the true ones, as search sees it."""
    n = state.rules.num_players
    order = [(seat + k) % n for k in range(n)]
    world = state.copy()
    for name in ("hands", "known_taken", "discards", "passed", "scores"):
        values = getattr(state, name)
        setattr(world, name, [values[s].copy() if isinstance(values[s], list) else values[s] for s in order])
    world.current_player = (state.current_player - seat) % n
    world.dealer = (state.dealer - seat) % n
    world.went_out = None if state.went_out is None else (state.went_out - seat) % n
    return world


@pytest.mark.parametrize("players", [2, 3])
def test_the_table_before_the_last_discard_is_rebuilt_exactly(players):
    rules = Rules(num_players=players)
    experts = [ExpertAgent(rules) for _ in range(players)]
    rng = np.random.default_rng(players)
    state = game.new_game(rules, np.random.default_rng(10 + players))
    seen: dict[int, tuple[np.ndarray, int]] = {}  # seat -> (its observation before its last discard, that card)
    checked = 0
    while not state.game_over and checked < 300:
        seat = state.current_player
        obs, mask = encode(state, seat), game.action_mask(state)
        prev = (seat - 1) % players
        if prev in seen and state.went_out is None and state.discards[prev]:
            found = last_discard_state(rotated(state, seat))
            assert found is not None
            before, card = found
            expected_obs, expected_card = seen[prev]
            assert card == expected_card
            np.testing.assert_array_equal(encode(before, before.current_player), expected_obs)
            checked += 1
        action = experts[seat].act(obs, mask, rng)
        if state.phase == game.PHASE_DISCARD:
            seen[seat] = (obs, action - game.DISCARD_BASE)
        round_before = state.round_number
        game.apply(state, action)
        if state.round_number != round_before:
            seen.clear()
    assert checked > 100


def test_true_worlds_pass_and_most_uniform_worlds_do_not():
    rules = Rules()
    experts = [ExpertAgent(rules), ExpertAgent(rules)]
    rng = np.random.default_rng(0)
    true_pass, uniform_pass, total = 0, 0, 0
    for g in range(6):
        state = game.new_game(rules, np.random.default_rng(g))
        while not state.game_over:
            seat = state.current_player
            obs, mask = encode(state, seat), game.action_mask(state)
            if state.went_out is None and state.discards[1 - seat] and state.discard_pile:
                total += 1
                true_pass += discard_is_consistent(rotated(state, seat), experts[0].act)
                uniform_pass += discard_is_consistent(determinize(obs, rules, rng, action_mask=mask), experts[0].act)
            game.apply(state, experts[seat].act(obs, mask, rng))
    assert total > 300
    assert true_pass == total  # both players are expert-v0: the truth always explains its discard
    assert uniform_pass < 0.4 * total


def test_a_world_the_discard_contradicts_is_refused():
    """The opponent threw 9H; a world that gives it 7H 8H (a run 9H would have made) is refused."""
    rules = Rules(rounds=(1,))  # three cards, threes wild
    state = game.new_game(rules, np.random.default_rng(0))
    state.current_player, state.phase, state.turn = 0, game.PHASE_DRAW, 1
    hearts = lambda r: 26 + r - 1  # noqa: E731
    state.hands = [[0, 14, 40], [hearts(7), hearts(8), 5]]  # AC 2D 2S | 7H 8H 6C
    state.discard_pile = CardList([12, hearts(9)])
    state.discards = [CardList(), CardList([hearts(9)])]
    state.known_taken = [[], []]
    rest = set(range(52)) - set(state.hands[0]) - set(state.hands[1]) - {12, hearts(9)}
    state.stock = sorted(rest)
    expert = ExpertAgent(rules)
    assert not discard_is_consistent(state, expert.act)
    state.hands[1] = [hearts(2), 18, 5]  # 2H 6D 6C: throwing 9H is what expert-v0 does
    assert discard_is_consistent(state, expert.act)
