"""``python_three_thirteen``: what each player may know, and its states cloned, serialized, resampled, as JSON."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.observation import make_observation  # noqa: E402

from tt_env.engine.game import DRAW_STOCK, TAKE_DISCARD  # noqa: E402
from tt_env.engine.rules import hand_size  # noqa: E402
from tt_env.observation import encode, get_layout  # noqa: E402

from openspiel_play import load, play  # noqa: E402


def replay_round(game, data):
    """A fresh one-round game fed the round logged in ``data``: it must be reachable as logged."""
    state = game.new_initial_state()
    state.apply_action(data.engine.dealer)
    for card in data.dealt:
        state.apply_action(card)
    for t, source in enumerate(data.source):
        state.apply_action(DRAW_STOCK if source == 0 else TAKE_DISCARD)
        if source == 0 and data.drawn[t] >= 0:
            state.apply_action(data.drawn[t])
        if data.discarded[t] >= 0:
            state.apply_action(2 + data.discarded[t])
    return state


# ------------------------------------------------------------------ what each player may know

def swap_hidden_card(state, opponent: int):
    """A clone where a card ``opponent`` was dealt and still holds trades places with a stock card."""
    other = state.clone()
    d = other.data
    s = d.engine
    n = d.rules.num_players
    start = (opponent - s.dealer - 1) % n
    places = range(start, n * hand_size(s.round_number), n)
    hidden = Counter(s.hands[opponent]) - Counter(s.known_taken[opponent])
    k = next(k for k in places if hidden[d.dealt[k]] and d.dealt[k] not in d.discarded)
    card, new = d.dealt[k], next(c for c in s.stock if c != d.dealt[k])
    s.hands[opponent][s.hands[opponent].index(card)] = new
    s.stock[s.stock.index(new)] = card
    d.dealt[k] = new
    return other


@pytest.mark.parametrize("num_players", [2, 3])
def test_hidden_cards_change_nothing_a_player_sees(num_players: int) -> None:
    game = load(num_players=num_players, rounds="9")
    state = play(game.new_initial_state(), np.random.default_rng(5), steps=60)
    opponent = (state.current_player() + 1) % num_players
    other = swap_hidden_card(state, opponent)
    assert str(other) != str(state)
    for p in range(num_players):
        same = [state.information_state_tensor(p) == other.information_state_tensor(p),
                state.information_state_string(p) == other.information_state_string(p),
                state.observation_tensor(p) == other.observation_tensor(p),
                state.observation_string(p) == other.observation_string(p)]
        assert all(same) if p != opponent else not any(same), f"player {p}: {same}"


def test_the_information_state_keeps_the_players_own_draws_in_order() -> None:
    game = load(rounds="5")
    state = play(game.new_initial_state(), np.random.default_rng(1), steps=40, stock_bias=1.0)
    d = state.data
    view = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    for p in (0, 1):
        view.set_from(state, p)
        for t, card in enumerate(d.drawn):
            shown = view.dict["drawn"][t]
            if d.actor(t) == p and card >= 0:
                assert shown[card] == 1.0 and shown.sum() == 1.0
            elif d.source[t] == 0:
                assert shown.sum() == 0.0  # an opponent's stock draw stays hidden
        assert np.flatnonzero(view.dict["draw_source"][:len(d.source), 0]).tolist() == \
            [t for t, s in enumerate(d.source) if s == 0]
        assert view.tensor.tolist() == state.information_state_tensor(p)


def test_the_observation_is_the_env_observation() -> None:
    game = load(num_players=3, rounds="3")
    state = play(game.new_initial_state(), np.random.default_rng(2), steps=50)
    observation = make_observation(game, pyspiel.IIGObservationType(perfect_recall=False))
    for p in range(3):
        observation.set_from(state, p)
        assert np.array_equal(observation.tensor, encode(state.game_state, p))
        assert np.array_equal(np.asarray(state.observation_tensor(p), np.float32), encode(state.game_state, p))
    assert list(observation.dict) == [name for name, _, _ in get_layout(3).pieces]
    with pytest.raises(ValueError, match="python_three_thirteen observes for one player"):
        make_observation(game, pyspiel.IIGObservationType(perfect_recall=False,
                                                          private_info=pyspiel.PrivateInfoType.ALL_PLAYERS))


# ------------------------------------------------------------------ clone, serialize, resample

def test_clone_and_serialize_round_trip() -> None:
    game = load(num_players=3, rounds="1,11", decks=3)
    state = play(game.new_initial_state(), np.random.default_rng(4), steps=90)
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(game2) == str(game) and "rounds=[1;11]" in str(game) and "decks=3" in str(game)
    for copy in (state.clone(), state2):
        assert str(copy) == str(state) and copy.history() == state.history()
        assert copy.information_state_string(1) == state.information_state_string(1)
        end_a = play(copy, np.random.default_rng(9))
        end_b = play(state.clone(), np.random.default_rng(9))
        assert end_a.returns() == end_b.returns() and end_a.history() == end_b.history()
    single = load(rounds="11")
    assert str(pyspiel.deserialize_game_and_state(
        pyspiel.serialize_game_and_state(single, single.new_initial_state()))[0]) == str(single)


@pytest.mark.parametrize("params, stock_bias, every", [
    ({"rounds": "1"}, 0.0, 3),
    ({"num_players": 3, "rounds": "2", "max_turns_per_round": 300}, 0.0, 5),
    ({"rounds": "11", "max_turns_per_round": 150}, 0.95, 9),            # reshuffles
    ({"num_players": 4, "rounds": "11", "max_turns_per_round": 150}, 0.95, 11),  # two decks
])
def test_resample_from_infostate_keeps_what_the_player_knows(params: dict, stock_bias: float, every: int) -> None:
    """OpenSpiel's ResampleInfostateTest, plus: the resampled round replays from scratch."""
    game = load(**params)
    n = game.num_players()
    rng = np.random.default_rng(11)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    state, checked, differed, refills = game.new_initial_state(), 0, 0, 0
    while not state.is_terminal():
        if len(state.history()) % every == 1 and not state.is_chance_node():
            for p in range(n):
                other = state.resample_from_infostate(p, sampler)
                assert other.information_state_string(p) == state.information_state_string(p)
                assert other.information_state_tensor(p) == state.information_state_tensor(p)
                assert other.observation_tensor(p) == state.observation_tensor(p)
                assert other.current_player() == state.current_player()
                replayed = replay_round(game, other.data)
                assert str(replayed) == str(other)
                for q in range(n):
                    assert replayed.information_state_string(q) == other.information_state_string(q)
                differed += str(other) != str(state)
                checked += 1
            refills = max(refills, len(state.data.refills))
        play(state, rng, steps=1, stock_bias=stock_bias)
    assert checked > 5 and differed > checked // 2
    if stock_bias:
        assert refills, "the test did not reach a reshuffle"


def test_state_json_round_trips_and_refuses_bad_text():
    """The safe text format: JSON of the parameters and history, replayed with every action checked."""
    from tt_env.openspiel.game import state_from_json, state_to_json

    game = pyspiel.load_game("python_three_thirteen", {"num_players": 3, "rounds": "10,11"})
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    while not state.is_terminal() and len(state.history()) < 300:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
    text = state_to_json(state)
    _, back = state_from_json(text)
    assert back.history() == state.history() and str(back) == str(state)
    assert back.information_state_string(1) == state.information_state_string(1)
    data = json.loads(text)
    data["history"][-1] = 9999
    with pytest.raises(ValueError, match=r"history\[\d+\] = 9999 is not legal"):
        state_from_json(json.dumps(data))
    with pytest.raises(ValueError, match="not a python_three_thirteen-state/1 text"):
        state_from_json("cos\nsystem\n(S'echo hi'\ntR.")  # a pickle payload is just bad text here
    with pytest.raises(ValueError, match="not a python_three_thirteen-state/1"):
        state_from_json(json.dumps({"format": "other"}))
