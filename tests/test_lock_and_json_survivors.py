"""Tests written against one-line bugs that a mutation audit found surviving (issue 25): the run lock
releasing a lock that another holder owns, and ``write_json`` writing in place instead of atomically."""

from __future__ import annotations

import json
import os

import pytest

from training.common.run_lock import LOCK_NAME, RunLock
from tt_env import jsonio
from tt_env.jsonio import write_json


def test_release_leaves_a_lock_that_another_holder_owns(tmp_path):
    lock = RunLock(tmp_path)
    lock.acquire()
    mine = json.loads((tmp_path / LOCK_NAME).read_text())
    other = {**mine, "token": "f" * 32, "pid": mine["pid"] + 1}  # the lock was taken over meanwhile
    (tmp_path / LOCK_NAME).write_text(json.dumps(other))
    lock.release()
    assert json.loads((tmp_path / LOCK_NAME).read_text())["token"] == "f" * 32
    assert not lock.held


def test_release_removes_its_own_lock_once_every_hold_has_ended(tmp_path):
    first, second = RunLock(tmp_path), RunLock(tmp_path)
    first.acquire()
    second.acquire()  # the same process, twice
    first.release()
    assert (tmp_path / LOCK_NAME).exists()
    first.release()  # a second release of the same hold changes nothing
    assert (tmp_path / LOCK_NAME).exists()
    second.release()
    assert not (tmp_path / LOCK_NAME).exists()
    RunLock(tmp_path).release()  # never held: nothing to do
    third = RunLock(tmp_path)
    third.acquire()
    assert third.held and (tmp_path / LOCK_NAME).exists()
    third.release()
    assert not (tmp_path / LOCK_NAME).exists()


def test_write_json_replaces_the_file_instead_of_writing_into_it(tmp_path):
    path = tmp_path / "r.json"
    write_json(path, {"run": 1})
    os.link(path, tmp_path / "reader.json")  # a reader holding the old file sees it whole
    write_json(path, {"run": 2})
    assert json.loads((tmp_path / "reader.json").read_text()) == {"run": 1}
    assert json.loads(path.read_text()) == {"run": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "reader.json"]


def test_write_json_cut_short_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    write_json(path, {"run": 1})

    def dying_replace(src, dst):
        raise KeyboardInterrupt("killed before the rename")

    monkeypatch.setattr(jsonio.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        write_json(path, {"run": 2, "rows": list(range(1000))})
    monkeypatch.undo()
    assert json.loads(path.read_text()) == {"run": 1}
