"""Loads into a ``BatchGame`` (``from_game_states``, ``load_state``) that do not fit are refused
whole: the batch is left as it was, and plays on as if nothing had been tried."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchRandom
from tt_env.engine import game as engine
from tt_env.engine.rules import Rules



def snapshot(game: BatchGame) -> dict:
    """Copies of every field of the batch's state."""
    return {name: value.clone() for name, value in game.state.fields().items()}


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _game(seed: int = 0) -> tuple[BatchGame, Rules]:
    rules = Rules(num_players=2)
    return BatchGame(rules, 2, seed=seed), rules


def _states(rules: Rules) -> list[engine.GameState]:
    return [engine.new_game(rules, np.random.default_rng(k)) for k in range(2)]


def _same_games(game: BatchGame, other: BatchGame, steps: int = 30) -> bool:
    """Whether ``game`` and ``other`` play the same from here (same random actions): the first
    actions are ``other``'s, stepped into ``game`` as it was left (its masks, lockstep and kept
    penalties too, not derived again)."""
    agent_a, agent_b = BatchRandom(game.rules, seed=1), BatchRandom(other.rules, seed=1)
    if game._mask is None or game._lockstep_phase != other._lockstep_phase:
        return False
    ts_b = other._quiet_timestep()
    first = agent_b.act(ts_b.observation, ts_b.action_mask)
    agent_a.act(ts_b.observation, ts_b.action_mask)  # (the same draws from both agents)
    ts_a, ts_b = game.step(first), other.step(first)
    for _ in range(steps):
        if not torch.equal(ts_a.observation, ts_b.observation) or not torch.equal(ts_a.action_mask, ts_b.action_mask):
            return False
        ts_a, ts_b = game.step(agent_a.act(ts_a.observation, ts_a.action_mask)), other.step(
            agent_b.act(ts_b.observation, ts_b.action_mask))
    return same(snapshot(game), snapshot(other))


@pytest.mark.parametrize("spoil, message", [
    (lambda st: st.stock.extend([1] * 60), r"holds \[\d+(, \d+)*\] copies of cards \[1\] between its hands, stock"),
    (lambda st: st.hands[0].__setitem__(0, -1), r"holds cards \[-1\] that are not card ints 0\.\.51"),
    (lambda st: st.hands[0].__setitem__(0, 60), r"holds cards \[60\] that are not card ints 0\.\.51"),
    (lambda st: st.hands[1].__setitem__(0, st.hands[0][0]), r"copies of cards .* where a shoe of 1 deck\(s\) has 1"),
    (lambda st: setattr(st, "scores", [0, 0, 0]), r"from_game_states: a state's fields do not make this batch's "),
    (lambda st: setattr(st, "current_player", 5), r"seat"),
])
def test_a_state_that_does_not_fit_is_refused_and_the_batch_plays_on(spoil, message) -> None:
    """A failed load wrote its fields one by one: table 0 kept the new hands with the old stock
    (duplicate cards) and played on without an error; card -1 became the king of spades."""
    game, rules = _game()
    twin, _ = _game()
    for g in (game, twin):  # one draw each: the batch discards next (its lockstep), the states draw
        g.reset()
        g.step(torch.zeros(2, dtype=torch.int64))
    before = snapshot(game)
    states = _states(rules)
    spoil(states[1])
    with pytest.raises(ValueError, match=message):
        game.from_game_states(states)
    assert same(snapshot(game), before)
    assert _same_games(game, twin)


def test_a_saved_state_of_other_rounds_is_refused_and_the_batch_plays_on() -> None:
    """``load_state`` of a ``round_index`` past this game's rounds failed inside torch, after the
    state had been replaced (a 49-card garbage pile came back from ``to_game_state``)."""
    game, _ = _game()
    game.reset()
    twin, _ = _game()
    twin.reset()
    fields = {name: value.clone() for name, value in game.state.fields().items()}
    fields["round_index"] = torch.full_like(fields["round_index"], 11)
    with pytest.raises(ValueError, match=r"field round_index holds rounds outside this game's 11 "):
        game.load_state(fields)
    fields = {name: value.clone() for name, value in game.state.fields().items()}
    fields["pile_len"] = torch.full_like(fields["pile_len"], -3)
    with pytest.raises(ValueError):
        game.load_state(fields)
    assert _same_games(game, twin)


def test_good_states_still_load() -> None:
    game, rules = _game()
    game.reset()
    states = _states(rules)
    ts = game.from_game_states(states)
    assert ts.action_mask.any(dim=1).all()
    assert [sorted(game.to_game_state(i).hands[0]) for i in range(2)] == [sorted(st.hands[0]) for st in states]


def test_reset_tables_before_reset_is_refused_as_step_is() -> None:
    """It dealt the masked tables and left the others undealt (all zero, not over, no legal action)."""
    game, _ = _game()
    with pytest.raises(RuntimeError, match=r"reset_tables\(\) called before reset\(\): call reset\(\) first"):
        game.reset_tables(torch.tensor([True, False]))


def test_final_seat_picks_the_view_without_autoreset_too() -> None:
    """With ``autoreset=False``, ``final_seat`` was checked and then ignored: the final observation
    was the mover's view whatever was asked."""
    rules = Rules(num_players=2, rounds=(1,))
    game = BatchGame(rules, 8, seed=2, autoreset=False)
    ts = game.reset()
    agent = BatchRandom(rules, seed=0)
    ended = 0
    for _ in range(200):
        other = 1 - ts.seat
        finishing = ~game.state.game_over
        ts = game.step(agent.act(ts.observation, ts.action_mask), final_seat=other)
        for i in torch.nonzero(ts.game_over & finishing).flatten().tolist():
            from tt_env.observation import encode

            expected = encode(game.to_game_state(i), int(other[i]))
            assert np.array_equal(ts.final_observation[i].numpy(), expected)
            ended += 1
        if bool(game.state.game_over.all()):
            break
    assert ended > 0
