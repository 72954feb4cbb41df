"""``state_from_json`` raises ``ValueError`` and nothing else, cheaply, whatever the text.

Its docstring promises ``ValueError`` for every malformed input. Tampered parameters used to
reach OpenSpiel and come back as ``SpielError`` (a wrong type), ``RuntimeError`` (an int too
large for C++), ``TypeError`` or ``RecursionError`` (deep JSON). Hypothesis replaces the
parameters, the history and the whole text with arbitrary JSON values.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pyspiel = pytest.importorskip("pyspiel")

from tt_env.jsonio import loads  # noqa: E402  (after the importorskip)
from tt_env.openspiel.game import (  # noqa: E402
    GAME_NAME,
    JSON_FORMAT,
    max_history_length,
    rules_from_params,
    state_from_json,
    state_to_json,
)


def _played_text(steps: int = 60) -> str:
    game = pyspiel.load_game(GAME_NAME, {"num_players": 2, "rounds": "3,4"})
    state = game.new_initial_state()
    rng = np.random.default_rng(1)
    for _ in range(steps):
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state_to_json(state)


TEXT = _played_text()
DATA = json.loads(TEXT)


def _with(**changes) -> str:
    return json.dumps({**DATA, **changes})


def _params(**changes) -> str:
    return _with(params={**DATA["params"], **changes})


BAD = {
    "num_players as a string": (_params(num_players="3"), "num_players"),
    "num_players as a float": (_params(num_players=3.0), "num_players"),
    "num_players as null": (_params(num_players=None), "num_players"),
    "num_players as a list": (_params(num_players=[1]), "num_players"),
    "an unknown parameter": (_params(foo=1), "unknown rule option"),
    "aces as an object": (_params(aces={}), "aces"),
    "rounds as an int": (_params(rounds=5), "rounds"),
    "rounds out of range": (_params(rounds="[0;99]"), "rounds"),
    "decks as a bool": (_params(decks=True), "decks"),
    "decks too large for C++": (_params(decks=10 ** 30), "decks"),
    "max_turns too large for C++": (_params(max_turns_per_round=10 ** 30), "max_turns_per_round"),
    "max_turns giving a game too long for C++": (_params(max_turns_per_round=10 ** 9), "32-bit"),
    "a bool option as an int": (_params(discard_drawn_discard=1), "discard_drawn_discard"),
    "params as a list": (_with(params=[1, 2]), "'params'"),
    "history as an object": (_with(history={}), "'history'"),
    "a history action as a string": (_with(history=["1"]), "history[0]"),
    "a history action too large": (_with(history=DATA["history"][:3] + [10 ** 30]), "history[3]"),
    "a history longer than any game": (_with(history=[0] * 100_000), "longer than any game"),
    "another game": (_with(game="kuhn_poker"), "kuhn_poker"),
    "another format": (_with(format="x"), "format"),
    "deeply nested params": ('{"format": "%s", "params": %s, "history": []}' % (JSON_FORMAT, "[" * 100_000
                                                                                + "]" * 100_000), "nested"),
    "deeply nested text": ("[" * 100_000 + "]" * 100_000, "nested"),
    "NaN": ('{"format": "%s", "params": {"num_players": NaN}, "history": []}' % JSON_FORMAT, "NaN"),
    "1e999": ('{"format": "%s", "params": {"num_players": 1e999}, "history": []}' % JSON_FORMAT, "too large"),
    "an int of 5000 digits": ('{"format": "%s", "params": {"num_players": 1%s}, "history": []}'
                              % (JSON_FORMAT, "0" * 5000), "not valid JSON"),
    "not UTF-8": (b"\xff\xfe", "UTF-8"),
    "None": (None, "str or bytes"),
    "a pickle payload": ("cos\nsystem\n(S'echo hi'\ntR.", "not valid JSON"),
    "a huge text": ("[" + "0," * (9 * 2 ** 20) + "0]", "characters"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_each_tampered_text_is_a_value_error_naming_the_problem(name, capfd):
    text, words = BAD[name]
    with pytest.raises(ValueError) as info:
        state_from_json(text)
    assert words in str(info.value), str(info.value)
    assert "OpenSpiel exception" not in capfd.readouterr().err  # refused before OpenSpiel saw it


def test_the_untampered_text_still_loads():
    _, state = state_from_json(TEXT)
    assert state.history() == DATA["history"]
    assert state_to_json(state) == TEXT


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
PARAM_NAMES = st.sampled_from(["num_players", "decks", "aces", "rounds", "discard_drawn_discard",
                               "max_turns_per_round", "meld_needs_natural", "other"])


def _only_value_errors(text) -> None:
    try:
        state_from_json(text)
    except ValueError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.dictionaries(PARAM_NAMES, JSON_VALUES, min_size=1, max_size=3))
def test_any_parameter_values_give_a_value_error_or_a_game(changes):
    _only_value_errors(_params(**changes))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=st.lists(st.integers(-2 ** 70, 2 ** 70) | JSON_VALUES, max_size=30), keep=st.integers(0, 60))
def test_any_history_gives_a_value_error_or_a_state(history, keep):
    _only_value_errors(_with(history=DATA["history"][:keep] + history))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON_VALUES, text=st.text(max_size=40) | st.binary(max_size=40))
def test_any_json_value_or_text_gives_a_value_error(value, text):
    _only_value_errors(json.dumps({"format": JSON_FORMAT, "params": value, "history": value}))
    _only_value_errors(json.dumps(value))
    _only_value_errors(text)


def test_the_history_bound_holds_every_game_played_to_the_end():
    game = pyspiel.load_game(GAME_NAME, {"num_players": 3, "rounds": "1,2", "max_turns_per_round": 6})
    rules = rules_from_params(game.get_parameters())
    rng = np.random.default_rng(0)
    for _ in range(5):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        assert len(state.history()) <= max_history_length(rules)
        state_from_json(state_to_json(state))


def test_json_input_bounds_and_names_the_input():
    assert loads('{"a": [1, 2.5]}', "x") == {"a": [1, 2.5]}
    with pytest.raises(ValueError, match="^record y is too long: 9 characters"):
        loads("[1, 2, 3]", "record y", max_chars=4)
    with pytest.raises(ValueError, match="^record y is not valid JSON .*Infinity is not JSON"):
        loads("[Infinity]", "record y")
