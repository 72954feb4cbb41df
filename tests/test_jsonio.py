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


def test_write_json_makes_its_folder(tmp_path):
    assert json.loads(write_json(tmp_path / "a" / "b" / "x.json", {"a": 1}).read_text()) == {"a": 1}


def test_write_json_refuses_what_is_not_a_regular_file(tmp_path):
    with pytest.raises(ValueError, match="not a regular file"):
        write_json(tmp_path, {"a": 1})
    assert tmp_path.is_dir()


# ---------------------------------------------------------------- issue 19: hostile JSON in, deep values out
from tt_env.jsonio import loads, read_json  # noqa: E402


@pytest.mark.parametrize("data,message", [
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ('{"a": ' * 50000 + "1" + "}" * 50000, "nested too deeply"),
    ("1" * 5000, "is not valid JSON"),
    (b"\xff\xfe{}", "it is not UTF-8 text"),
    ("{", "is not valid JSON"),
    ("", "is not valid JSON"),
])
def test_loads_refuses_what_is_not_usable_json_with_one_value_error(data, message):
    with pytest.raises(ValueError, match=message) as info:
        loads(data, "the file")
    assert str(info.value).startswith("the file is not") and "\n" not in str(info.value)


def test_loads_reads_json():
    assert loads(b'{"a": [1, 2.5, null]}', "x") == {"a": [1, 2.5, None]}


def test_read_json_limits_the_size_and_names_missing_files(tmp_path):
    big = tmp_path / "big.json"
    big.write_text("[" + "0," * 100 + "0]")
    with pytest.raises(ValueError, match=r"is 203 bytes, over the 100 bytes allowed"):
        read_json(big, limit=100)
    assert len(read_json(big)) == 101
    with pytest.raises(ValueError, match="cannot be read"):
        read_json(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="is a folder"):
        read_json(tmp_path)


def test_dumps_refuses_a_value_nested_too_deeply():
    value: list = []
    for _ in range(100000):
        value = [value]
    with pytest.raises(ValueError, match="nested too deeply"):
        dumps(value)


def test_read_json_refuses_a_fifo_without_blocking(tmp_path):
    import os

    os.mkfifo(tmp_path / "pipe.json")
    with pytest.raises(ValueError, match="is not a regular file"):
        read_json(tmp_path / "pipe.json")


@pytest.mark.parametrize("text, message", [('{"a": NaN}', "NaN is not JSON"), ("[Infinity]", "Infinity is not JSON"),
                                           ("-Infinity", "-Infinity is not JSON"), ("1e999", "too large for a float")])
def test_the_one_reader_refuses_non_finite_numbers(text: str, message: str) -> None:
    """Issue 24: one strict JSON reader, and it refuses NaN and Infinity (``tt_env.json_input`` did, ``jsonio`` did not)."""
    with pytest.raises(ValueError, match=message):
        loads(text, "x")
