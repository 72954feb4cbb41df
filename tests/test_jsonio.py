"""Every JSON file the package writes is strict JSON: no bare NaN or Infinity."""

import json
import math

import numpy as np
import pytest

from tt_env.jsonio import dumps, to_strict, write_json


def _strict_loads(text: str):
    def refuse(token: str):
        raise ValueError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_floats_become_null_everywhere():
    value = {"a": math.nan, "b": [1.0, math.inf, (-math.inf, 2)], "c": {"d": np.float32("nan")}, "e": 3}
    assert to_strict(value) == {"a": None, "b": [1.0, None, [None, 2]], "c": {"d": None}, "e": 3}
    assert _strict_loads(dumps(value)) == {"a": None, "b": [1.0, None, [None, 2]], "c": {"d": None}, "e": 3}


def test_write_json_is_strict_and_leaves_no_temporary(tmp_path):
    path = write_json(tmp_path / "x.json", {"ci95": float("nan"), "n": np.int64(3)})
    assert _strict_loads(path.read_text()) == {"ci95": None, "n": 3}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_numpy_integers_and_finite_floats_pass_through():
    assert _strict_loads(dumps([np.int32(4), np.float64(0.5)])) == [4, 0.5]
    with pytest.raises(TypeError):
        dumps({"x": object()})


def test_write_json_refuses_what_is_not_a_regular_file(tmp_path):
    with pytest.raises(ValueError, match="not a regular file"):
        write_json(tmp_path, {"a": 1})
    assert tmp_path.is_dir()
