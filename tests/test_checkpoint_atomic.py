"""Checkpoint saves are atomic as a whole: a crash at any point leaves a loadable checkpoint (issue 9.2)."""

from __future__ import annotations

import os

import pytest
import torch

from models import build_network
from models import checkpoint as ckpt
from models.checkpoint import CheckpointError, load_checkpoint, read_attachment, save_checkpoint
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION


class Crash(Exception):
    """Stands for the process dying at that point."""


def net_with(value: float):
    net = build_network("mlp", num_players=2, hidden_sizes=[8])
    with torch.no_grad():
        for p in net.parameters():
            p.fill_(value)
    return net


def save(path, value: float, attachments: bool = True):
    extra = {"state.json": f'{{"value": {value}}}'.encode(), "tensors.pt": ckpt.serialize_state(
        {"v": torch.tensor([value])})} if attachments else None
    return save_checkpoint(path, net_with(value), obs_version=OBS_VERSION, rules=Rules().to_dict(),
                           training_steps=int(value * 10), attachments=extra)


def loaded_value(path) -> float:
    """The value the checkpoint at ``path`` was saved with; its attachments must agree with its weights."""
    net, meta = load_checkpoint(path)
    values = {float(p.detach().flatten()[0]) for p in net.parameters()}
    assert len(values) == 1
    value = values.pop()
    assert meta["training_steps"] == int(value * 10)
    if meta.get("attachments"):
        assert read_attachment(path, "state.json") == f'{{"value": {value}}}'.encode()
        tensors = ckpt.deserialize_state(read_attachment(path, "tensors.pt"), "test")
        assert float(tensors["v"]) == value
    return value


def count_replaces(monkeypatch, tmp_path) -> int:
    calls = []
    real = os.replace
    monkeypatch.setattr(ckpt.os, "replace", lambda a, b: (calls.append(a), real(a, b)))
    save(tmp_path / "probe" / "x.pt", 1.0)
    save(tmp_path / "probe" / "x.pt", 2.0)
    monkeypatch.setattr(ckpt.os, "replace", real)
    return len(calls) // 2


def crash_at(monkeypatch, k: int) -> None:
    """Make the ``k``-th call (0-based) of ``os.replace`` in models.checkpoint die."""
    real = os.replace
    count = {"n": 0}

    def replace(a, b):
        count["n"] += 1
        if count["n"] - 1 == k:
            raise Crash(f"killed at os.replace #{k}")
        return real(a, b)

    monkeypatch.setattr(ckpt.os, "replace", replace)


def test_a_save_replaces_every_file(monkeypatch, tmp_path):
    # sidecar (the commit), weights and two attachments: four replaces; nothing else left behind
    assert count_replaces(monkeypatch, tmp_path) == 4
    assert sorted(p.name for p in (tmp_path / "probe").iterdir()) == ["x.json", "x.pt", "x.state.json",
                                                                      "x.tensors.pt"]


@pytest.mark.parametrize("attachments", [True, False])
def test_a_crash_at_any_replace_leaves_a_loadable_checkpoint(monkeypatch, tmp_path, attachments):
    steps = 2 + 2 * attachments  # the sidecar, the weights, each attachment
    for k in range(steps):
        path = tmp_path / f"k{k}" / "latest.pt"
        save(path, 1.0, attachments)
        crash_at(monkeypatch, k)
        with pytest.raises(Crash):
            save(path, 2.0, attachments)
        monkeypatch.undo()
        # before the commit (k = 0) the previous checkpoint is intact; after it, the new one is complete
        assert loaded_value(path) == (1.0 if k == 0 else 2.0), f"crash at replace {k}"
        # and the next save completes whatever the crash left, then replaces it
        save(path, 3.0, attachments)
        assert loaded_value(path) == 3.0
        assert not list(path.parent.glob("*.pending")) and not list(path.parent.glob("*.tmp"))


def test_two_crashes_in_a_row(monkeypatch, tmp_path):
    for first in range(4):
        for second in range(4):
            path = tmp_path / f"{first}-{second}" / "latest.pt"
            save(path, 1.0)
            crash_at(monkeypatch, first)
            with pytest.raises(Crash):
                save(path, 2.0)
            monkeypatch.undo()
            expected = 1.0 if first == 0 else 2.0
            crash_at(monkeypatch, second)
            try:
                save(path, 3.0)
            except Crash:
                pass
            monkeypatch.undo()
            value = loaded_value(path)
            assert value in (expected, 3.0), (first, second, value)


def test_a_crash_while_writing_the_new_weights(monkeypatch, tmp_path):
    path = tmp_path / "latest.pt"
    save(path, 1.0)
    real = ckpt._write

    def half_write(target, data):
        if target.name.endswith(ckpt.PENDING):
            target.write_bytes(data[: len(data) // 2])
            raise Crash("killed while writing")
        real(target, data)

    monkeypatch.setattr(ckpt, "_write", half_write)
    with pytest.raises(Crash):
        save(path, 2.0)
    monkeypatch.undo()
    assert loaded_value(path) == 1.0


def test_the_first_save_cut_short_after_its_commit_loads(monkeypatch, tmp_path):
    path = tmp_path / "new.pt"
    crash_at(monkeypatch, 1)  # sidecar in place, weights still pending
    with pytest.raises(Crash):
        save(path, 5.0)
    monkeypatch.undo()
    assert not path.exists() and loaded_value(path) == 5.0


def test_a_stale_pending_file_does_not_pass_for_the_weights(tmp_path):
    path = tmp_path / "x.pt"
    save(path, 1.0)
    other = tmp_path / "other.pt"
    save(other, 2.0, attachments=False)
    path.write_bytes(b"garbage")
    (tmp_path / "x.pt.pending").write_bytes(other.read_bytes())  # complete, but not the weights the sidecar names
    with pytest.raises(CheckpointError, match="do not match the sha256"):
        load_checkpoint(path)


def test_the_sidecar_lists_each_attachment_with_its_file_hash_and_size(tmp_path):
    import hashlib

    path = save(tmp_path / "c.pt", 0.5)
    listed = ckpt.read_metadata(path)["attachments"]
    assert sorted(listed) == ["state.json", "tensors.pt"]
    for name, entry in listed.items():
        data = read_attachment(path, name)
        assert entry == {"file": ckpt.attachment_path(path, name).name, "sha256": hashlib.sha256(data).hexdigest(),
                         "bytes": len(data)}
