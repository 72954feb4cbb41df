"""The belief tools never lose data and never show a traceback (issue 25): bad ``.npz`` files are
refused in one line with exit status 2 before any work, NaN and inf are refused up front, ``--out``
is not replaced without ``--overwrite``, ``belief_eval --json`` makes its folder first,
``belief_data`` builds every agent first, ``save_belief`` replaces the pair atomically, and the
belief sidecar's fields are type-checked."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

pytest.importorskip("torch")
import torch  # noqa: E402

from models.belief import Belief, load_belief, save_belief  # noqa: E402
from models.belief_net import BeliefNet  # noqa: E402
from models.checkpoint import CheckpointError  # noqa: E402
from training import belief_data, belief_eval, train_belief  # noqa: E402
from training.data.npz import save_npz  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402

AGENTS = ["--agents", "expert-v0", "greedy-v0"]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("belief") / "d.npz"
    belief_data.main(["--games", "3", "--keep", "0.3", "--seed", "4", "--quiet", "--out", str(out), *AGENTS])
    return out


def small_belief(seed: int = 0, history: bool = True) -> Belief:
    torch.manual_seed(seed)
    return Belief(BeliefNet(2, width=8, blocks=1), Rules(num_players=2), history=history)


def refused(capsys, main, argv, *words):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return captured


def rewritten(data_file, path, change):
    arrays, meta = belief_data.load(data_file)
    arrays = {k: v.copy() for k, v in arrays.items()}
    change(arrays, meta)
    save_npz(path, meta, arrays)
    return path


def _nan_obs(a, m):
    a["obs"] = a["obs"].copy()
    a["obs"][0, 3] = np.nan


def _inf_recent(a, m):
    a["recent"] = a["recent"].astype(np.float32)
    a["recent"][1, 0, 5] = np.inf


BAD_ARRAYS = {
    "width": (lambda a, m: a.update(obs=a["obs"][:, :-1]), "obs has shape"),
    "3-D": (lambda a, m: a.update(obs=a["obs"][:, :, None]), "obs has shape"),
    "zero rows": (lambda a, m: a.update({k: v[:0] for k, v in a.items()}), "0 rows"),
    "label rows": (lambda a, m: a.update(label=a["label"][:-1]), "label has shape"),
    "label over copies": (lambda a, m: a["label"].__setitem__((0, 0, 7), 2), "allowed are 0..1"),
    "nan": (_nan_obs, "NaN or infinite"),
    "inf": (_inf_recent, "NaN or infinite"),
}


@pytest.mark.parametrize("case", list(BAD_ARRAYS))
def test_bad_arrays_are_refused_in_one_line_before_any_work(data_file, tmp_path, capsys, case):
    change, message = BAD_ARRAYS[case]
    bad = rewritten(data_file, tmp_path / "bad.npz", change)
    with pytest.raises(ValueError, match=message):
        belief_data.load(bad)
    out = refused(capsys, train_belief.main, ["--data", str(bad), "--out", str(tmp_path / "b.pt"), "--epochs", "1",
                                              "--width", "8", "--blocks", "1"], "--data", message)
    assert "epoch" not in out.out and not (tmp_path / "b.pt").exists()
    refused(capsys, belief_eval.main, ["--data", str(bad), "--worlds", "0"], "--data", message)


def test_a_card_passed_over_more_often_than_the_decks_loads(data_file, tmp_path):
    """A top discard comes back to the top (taken, discarded again) and is passed over again: a count
    of 3 with one deck is a real position (belief_data wrote such files and then refused them)."""
    path = rewritten(data_file, tmp_path / "passed.npz", lambda a, m: a["passed"].__setitem__((0, 0, 7), 3))
    arrays, _ = belief_data.load(path)
    assert arrays["passed"][0, 0, 7] == 3
    too_many = rewritten(data_file, tmp_path / "neg.npz",
                         lambda a, m: a.update(passed=a["passed"].astype(np.int16) - 1))
    with pytest.raises(ValueError, match="passes over a card; allowed are 0..255"):
        belief_data.load(too_many)


@pytest.mark.parametrize("damage", ["empty", "truncated", "crc", "not a zip"])
def test_damaged_npz_files_are_refused_in_one_line(data_file, tmp_path, capsys, damage):
    data = data_file.read_bytes()
    bad = tmp_path / "bad.npz"
    if damage == "empty":
        bad.write_bytes(b"")
    elif damage == "truncated":
        bad.write_bytes(data[: len(data) // 2])
    elif damage == "crc":
        middle = bytearray(data)
        for i in range(len(data) // 3, len(data) // 3 + 64):
            middle[i] ^= 0x5A
        bad.write_bytes(bytes(middle))
    else:
        bad.write_bytes(b"hello, this is no archive" * 10)
    refused(capsys, train_belief.main, ["--data", str(bad), "--out", str(tmp_path / "b.pt")], "--data", str(bad))
    refused(capsys, belief_eval.main, ["--data", str(bad), "--worlds", "0"], "--data", str(bad))


def test_a_key_missing_in_one_of_several_files_is_refused(data_file, tmp_path, capsys):
    arrays, meta = belief_data.load(data_file)
    save_npz(tmp_path / "extra.npz", meta, {**arrays, "extra_key": np.zeros(len(arrays["obs"]))})
    del arrays["passed"]
    save_npz(tmp_path / "lacking.npz", meta, arrays)
    refused(capsys, train_belief.main, ["--data", str(data_file), str(tmp_path / "lacking.npz"),
                                        "--out", str(tmp_path / "b.pt")], "lacking", "passed")
    # an extra array in the first file only is not a reason to fail
    out = tmp_path / "ok.pt"
    train_belief.main(["--data", str(tmp_path / "extra.npz"), str(data_file), "--out", str(out), "--epochs", "1",
                       "--width", "8", "--blocks", "1", "--val-share", "0.34"])
    assert load_belief(out).num_players == 2


# ---------------------------------------------------------------------- --out and --overwrite
def test_an_existing_data_file_is_kept_without_overwrite(data_file, tmp_path, capsys):
    out = tmp_path / "d.npz"
    out.write_bytes(data_file.read_bytes())
    refused(capsys, belief_data.main, ["--games", "1", "--quiet", "--out", str(out), *AGENTS], "--overwrite",
            "exists")
    assert out.read_bytes() == data_file.read_bytes()
    belief_data.main(["--games", "1", "--keep", "0.5", "--quiet", "--out", str(out), "--overwrite", *AGENTS])
    assert belief_data.load(out)[1]["games"] == 1


def test_an_existing_belief_is_kept_without_overwrite(data_file, tmp_path, capsys):
    out = tmp_path / "b.pt"
    save_belief(out, small_belief())
    before = out.read_bytes(), out.with_suffix(".json").read_bytes()
    argv = ["--data", str(data_file), "--out", str(out), "--epochs", "1", "--width", "8", "--blocks", "1",
            "--val-share", "0.34"]
    captured = refused(capsys, train_belief.main, argv, "--overwrite")
    assert "epoch" not in captured.out
    assert (out.read_bytes(), out.with_suffix(".json").read_bytes()) == before
    train_belief.main([*argv, "--overwrite"])
    assert out.read_bytes() != before[0]


def test_belief_eval_json_makes_its_folder_before_the_run(data_file, tmp_path, capsys):
    belief = tmp_path / "b.pt"
    save_belief(belief, small_belief())
    out = tmp_path / "new" / "deeper" / "r.json"
    belief_eval.main(["--data", str(data_file), "--belief", str(belief), "--worlds", "0", "--max-positions", "20",
                      "--json", str(out), "--quiet"])
    assert json.loads(out.read_text())["results"]["2"]


@pytest.mark.parametrize("flag, name", [("--json", "r.json"), ("--plot", "c.png")])
def test_belief_eval_keeps_an_existing_output_without_overwrite(data_file, tmp_path, capsys, monkeypatch, flag,
                                                                 name):
    """--json or --plot that exists: refused by name before any work; with --overwrite, replaced."""
    belief, target = tmp_path / "b.pt", tmp_path / name
    save_belief(belief, small_belief())
    target.write_bytes(b"kept")
    argv = ["--data", str(data_file), "--belief", str(belief), "--worlds", "0", "--max-positions", "20", "--quiet",
            flag, str(target)]
    with monkeypatch.context() as patched:
        patched.setattr(belief_data, "load", lambda *a, **k: pytest.fail("work started before the check"))
        captured = refused(capsys, belief_eval.main, argv)
    assert captured.err.strip() == (f"python -m training.belief_eval: error: {flag} {target}: the file exists: "
                                    f"give --overwrite to replace it, or another name")
    assert target.read_bytes() == b"kept"
    belief_eval.main([*argv, "--overwrite"])
    assert target.read_bytes() != b"kept"


def test_belief_data_builds_every_agent_before_playing(tmp_path, capsys):
    out = tmp_path / "d.npz"
    captured = refused(capsys, belief_data.main, ["--players", "3", "--games", "2", "--quiet", "--out", str(out),
                                                  "--agents", "greedy-v0", "ppo-2p-v1"], "ppo-2p-v1", "3-player")
    assert not out.exists() and "positions" not in captured.out


# ---------------------------------------------------------------------- save_belief, sidecar types
@pytest.mark.parametrize("crash_at", [1, 2, 3])
def test_a_save_killed_at_any_step_leaves_the_old_or_the_new_belief(tmp_path, monkeypatch, crash_at):
    path = tmp_path / "b.pt"
    old, new = small_belief(0), small_belief(1)
    save_belief(path, old)
    obs = np.zeros(old.obs_size, dtype=np.float32)
    obs[:11] = 1
    calls = {"n": 0}
    real_replace = os.replace

    def dying_replace(src, dst):
        calls["n"] += 1
        if calls["n"] == crash_at:
            raise KeyboardInterrupt("killed")
        return real_replace(src, dst)

    if crash_at == 3:  # the kill during the write of the new weights, before any rename
        import models.belief as module

        def dying_write(target, data):
            raise KeyboardInterrupt("killed")

        monkeypatch.setattr(module, "_write", dying_write)
    else:
        monkeypatch.setattr(os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        save_belief(path, new)
    monkeypatch.undo()
    loaded = load_belief(path)
    got = loaded.logits(obs)
    assert np.allclose(got, old.logits(obs)) or np.allclose(got, new.logits(obs))
    # the next save completes or drops what the cut one left, and then the new pair loads
    save_belief(path, new)
    assert np.allclose(load_belief(path).logits(obs), new.logits(obs))
    assert not list(tmp_path.glob("*.pending"))


@pytest.mark.parametrize("key, value, allowed", [
    ("history", "no", "true or false"), ("history", 1, "true or false"), ("num_players", "2", "2 to 8"),
    ("num_players", True, "2 to 8"), ("obs_size", 2.5, ">= 1"), ("weights_sha256", 7, "64 hex digits"),
    ("extra", [], "an object"),
])
def test_belief_sidecar_fields_are_type_checked(tmp_path, key, value, allowed):
    path = tmp_path / "b.pt"
    save_belief(path, small_belief())
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta[key] = value
    side.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"{key}=.*{allowed}"):
        load_belief(path)


def test_history_false_in_a_sidecar_is_kept(tmp_path):
    path = tmp_path / "b.pt"
    save_belief(path, small_belief(history=False))
    assert load_belief(path).history is False


@pytest.mark.parametrize("key, value, allowed", [
    ("num_players", 9, "2 to 8"), ("num_players", 1, "2 to 8"), ("obs_size", 0, ">= 1"), ("obs_version", -1, ">= 0"),
    ("weights_sha256", "g" * 64, "64 hex digits"), ("weights_sha256", "a" * 63, "64 hex digits"),
])
def test_belief_sidecar_numbers_are_range_checked(tmp_path, key, value, allowed):
    path = tmp_path / "b.pt"
    save_belief(path, small_belief())
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta[key] = value
    side.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"{key}=.*{allowed}"):
        load_belief(path)


def test_a_missing_belief_sidecar_is_named(tmp_path):
    path = tmp_path / "b.pt"
    save_belief(path, small_belief())
    path.with_suffix(".json").unlink()
    with pytest.raises(CheckpointError, match=r"^belief sidecar '.*b\.json' does not exist$"):
        load_belief(path)


def test_the_reason_and_the_format_found_are_named(data_file, tmp_path, capsys):
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"PK\x03\x04" + b"x" * 200)
    with pytest.raises(ValueError, match=r"not a readable \.npz file \(empty, truncated or corrupt: File is not a zip "
                                         r"file\)$"):
        belief_data.load(broken)
    arrays, meta = belief_data.load(data_file)
    save_npz(tmp_path / "other.npz", {**meta, "format": "three-thirteen-oracle-data/1"}, arrays)
    with pytest.raises(ValueError, match=r"not a belief data file of format 'three-thirteen-belief-data/1' \(found "
                                         r"'three-thirteen-oracle-data/1'\)"):
        belief_data.load(tmp_path / "other.npz")
    refused(capsys, belief_data.main, ["--players", "9", "--out", str(tmp_path / "x.npz")],
            "argument --players: 9 is not allowed: use a player count, 2..8")
