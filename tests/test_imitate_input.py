"""``python -m training.imitate`` refuses bad oracle files and oversized networks in one line (issue 19)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from training import imitate
from tt_env.engine.rules import Rules


def oracle(path, meta="__rules__", drop=()):
    arrays = {"obs": np.zeros((4, 294), np.float32), "mask": np.ones((4, 54), np.int8),
              "cands": np.zeros((4, 3), np.int64), "q": np.zeros((4, 3), np.float32),
              "round": np.ones(4, np.int64), "phase": np.zeros(4, np.int64),
              "meta": np.array(json.dumps({"rules": Rules().to_dict()}) if meta == "__rules__" else meta)}
    np.savez(path, **{k: v for k, v in arrays.items() if k not in drop})
    return path


def refused(capsys, argv) -> str:
    with pytest.raises(SystemExit) as info:
        imitate.main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("kwargs,message", [
    ({"drop": ("q",)}, "lacks the array(s) ['q']"),
    ({"meta": "[" * 100000}, "nested too deeply"),
    ({"meta": "[1]"}, "holds no rules"),
    ({"meta": "{"}, "is not valid JSON"),
])
def test_bad_oracle_files_are_refused(tmp_path, capsys, kwargs, message):
    path = oracle(tmp_path / "o.npz", **kwargs)
    assert message in refused(capsys, ["--data", str(path), "--out", str(tmp_path / "x.pt")])


def test_network_sizes_are_bounded_before_training(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(imitate, "fit", lambda *a, **k: pytest.fail("training started"))
    path = oracle(tmp_path / "o.npz")
    line = refused(capsys, ["--data", str(path), "--out", str(tmp_path / "x.pt"), "--channels", "100000"])
    assert "out of bounds" in line
    line = refused(capsys, ["--data", str(path), "--out", str(tmp_path / "x.pt"), "--channels", "4096",
                            "--hidden", "4096"])
    assert "parameters, over the 50,000,000 allowed" in line


def test_fit_builds_a_cardnet_for_the_decks_of_the_data(tmp_path):
    """Oracle data of a two-deck game trains a CardNet that counts two decks (``CardNet.rule_kwargs``)."""
    from test_eval_batch import positions

    rules = Rules(decks=2, rounds=(1, 2))
    obs, masks = positions(rules, 8, seed=1)
    cands = np.array([np.flatnonzero(m)[:2] for m in masks], dtype=np.int64)
    data = {"obs": obs, "mask": masks, "cands": cands, "q": np.zeros(cands.shape, np.float32),
            "meta": {"rules": rules.to_dict()}}
    net, _ = imitate.fit(data, net_kwargs={"channels": 4, "hidden": 8, "lookahead_features": True}, epochs=1,
                         batch=4, lr=1e-3, temperature=1.0, validation=0.25, seed=0, log=lambda *_: None)
    assert net.num_decks == 2 and net.config()["decks"] == 2


@pytest.mark.parametrize("existing", [".pt", ".json"])
def test_an_existing_checkpoint_or_sidecar_is_kept_without_overwrite(tmp_path, capsys, monkeypatch, existing):
    """--out whose .pt or .json sidecar exists: refused by name before training; with --overwrite, replaced."""
    data, out = oracle(tmp_path / "o.npz"), tmp_path / "x.pt"
    there = out.with_suffix(existing)
    there.write_bytes(b"kept")
    argv = ["--data", str(data), "--out", str(out), "--epochs", "1", "--batch", "4", "--channels", "4",
            "--blocks", "0", "--hidden", "8", "--validation", "0.5"]
    with monkeypatch.context() as patched:
        patched.setattr(imitate, "fit", lambda *a, **k: pytest.fail("training started"))
        line = refused(capsys, argv)
    its = "" if existing == ".pt" else "its sidecar x.json: "
    assert line == (f"python -m training.imitate: error: --out {out}: {its}the file exists: "
                    f"give --overwrite to replace it, or another name")
    assert there.read_bytes() == b"kept"
    assert imitate.main([*argv, "--overwrite"]) == out
    assert out.read_bytes() != b"kept" and json.loads(out.with_suffix(".json").read_text())["extra"]["trainer"] \
        == "training/imitate.py"



@pytest.mark.parametrize("share,message", [
    ("0.001", "--data holds 4 position(s): --validation 0.001 would train on 4 and hold out 0;"),
    ("0.9", "--data holds 4 position(s): --validation 0.9 would train on 0 and hold out 4;"),
])
def test_a_split_with_an_empty_side_is_refused_before_training(tmp_path, capsys, monkeypatch, share, message):
    """A --validation that left no position held out (or none to train on) crashed in fit() with
    ``RuntimeError: cannot reshape tensor of 0 elements``; now refused in one line, naming both sides."""
    monkeypatch.setattr(imitate, "fit", lambda *a, **k: pytest.fail("training started"))
    line = refused(capsys, ["--data", str(oracle(tmp_path / "o.npz")), "--out", str(tmp_path / "x.pt"),
                            "--validation", share])
    assert message in line and "give more data or another --validation" in line


def test_fit_refuses_an_empty_held_out_set():
    """fit() itself refuses a split with an empty side instead of failing in a reshape."""
    from test_eval_batch import positions

    obs, masks = positions(Rules(), 1, seed=1)
    cands = np.array([np.flatnonzero(m)[:2] for m in masks], dtype=np.int64)
    data = {"obs": obs, "mask": masks, "cands": cands, "q": np.zeros(cands.shape, np.float32),
            "meta": {"rules": Rules().to_dict()}}
    with pytest.raises(ValueError, match="leaves 1 of 1 positions to train on and 0 held out"):
        imitate.fit(data, net_kwargs={"channels": 4, "hidden": 8}, epochs=1, batch=4, lr=1e-3, temperature=1.0,
                    validation=0.25, seed=0, log=lambda *_: None)
