"""Game records whatever their structure or size: a ``ValueError`` naming the problem, at once.

Deep JSON used to raise ``RecursionError``, a generator state with a huge int ``OverflowError``
(only when the replay began), a seed list of millions of entries took seconds, and a file was
read whole whatever its size.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tt_env.engine import Rules, game
from tt_env.ui import records
from tt_env.ui.records import GameRecord, load_record

BASE = {"format": "three-thirteen-game", "format_version": 1, "rules": Rules(rounds=(1,)).to_dict(), "seed": 1,
        "seats": ["a", "b"], "actions": [0]}
PCG = {"bit_generator": "PCG64", "has_uint32": 0, "uinteger": 0}


@pytest.mark.parametrize("changes, words", [
    ({"rules": ["num_players"]}, "use an object of rule options"),
    ({"rules": 3}, "use an object of rule options"),
    ({"actions": [0] * (game.max_actions(Rules(rounds=(1,))) + 1)}, "a whole game under its rules takes at most"),
    ({"seed": [1] * 1_000_000}, "a list of 1 to 64"),
    ({"seed": None, "rng_state": {**PCG, "state": {"state": 10 ** 100, "inc": 1}}}, "rng_state"),
    ({"seed": None, "rng_state": {**PCG, "state": []}}, "rng_state"),
    ({"final_scores": [True, False]}, "final_scores"),
    ({"final_scores": [-1, 3]}, "final_scores"),
])
def test_bad_records_are_refused_when_read(changes, words):
    with pytest.raises(ValueError, match="^the record") as info:
        GameRecord.from_dict({**BASE, **changes})
    assert words in str(info.value)


def test_the_longest_game_fits_the_action_bound():
    rules = Rules(rounds=(1, 2), max_turns_per_round=3)
    assert game.max_actions(rules) == 2 * 2 * (3 + 1)
    state, actions = game.new_game(rules, np.random.default_rng(0)), 0
    while not state.game_over:
        game.apply(state, game.legal_actions(state)[0])
        actions += 1
    assert actions <= game.max_actions(rules)


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (json.dumps({**BASE, "seed": 1}).replace('"seed": 1', '"seed": NaN'), "NaN is not JSON"),
    (json.dumps({**BASE, "seed": 1}).replace('"seed": 1', '"seed": 1e999'), "too large"),
    ("{not json", "is not valid JSON"),
])
def test_bad_record_files_are_value_errors_naming_the_file(text, words, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="game record") as info:
        load_record(path)
    assert words in str(info.value) and "r.json" in str(info.value)


def test_a_file_is_read_only_up_to_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "MAX_CHARS", 1000)
    path = tmp_path / "big.json"
    path.write_text(json.dumps({**BASE, "seats": ["a" * 2000, "b"]}))
    with pytest.raises(ValueError, match="is too long: 1,001 characters"):
        load_record(path)
    if os.path.exists("/dev/zero"):  # endless: only the first 1,001 characters are read
        with pytest.raises(ValueError, match="is too long"):
            load_record("/dev/zero")
