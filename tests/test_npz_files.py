"""``training.data.npz.save_npz``: written beside the target under a name of its own, then moved
into place; nothing else in the folder is touched."""

from __future__ import annotations

import numpy as np
import pytest

from training.data.npz import save_npz


def test_a_file_named_like_the_old_temporary_name_is_kept(tmp_path):
    """The temporary file was ``NAME.tmp.npz``: a file of that name was replaced, then moved onto
    the target (without ``--overwrite``), and two runs writing one name shared it."""
    kept = tmp_path / "data.tmp.npz"
    kept.write_bytes(b"someone else's file")
    out = save_npz(tmp_path / "data.npz", {"format": "x"}, {"a": np.arange(3)})
    assert kept.read_bytes() == b"someone else's file"
    with np.load(out, allow_pickle=False) as data:
        assert data["a"].tolist() == [0, 1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npz", "data.tmp.npz"]


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        save_npz(tmp_path / "data.npz", {}, {"a": np.arange(3)})
    assert list(tmp_path.iterdir()) == []


def test_the_data_tools_bound_their_workers_and_take_each_data_file_once(tmp_path, capsys):
    """``--workers 999999`` started that many processes; ``--data a --data b`` kept only b, and
    ``--data a a`` doubled a's positions (their copy then sat in the held-out tail too)."""
    import argparse

    from training.data.cli import add_collection_arguments, check_collection_arguments, check_data_files

    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--data", nargs="+", action="extend")
    add_collection_arguments(parser, keep=0.5)
    args = parser.parse_args(["--out", "x.npz", "--workers", "8", "--data", "a.npz", "--data", "b.npz"])
    check_collection_arguments(parser, args)
    assert args.workers == 3 and args.data == ["a.npz", "b.npz"]
    with pytest.raises(SystemExit):
        parser.parse_args(["--out", "x.npz", "--workers", "999999"])
    assert "999999 is not allowed: use an integer 1..256" in capsys.readouterr().err
    check_data_files(parser, ["a.npz", "b.npz"])
    with pytest.raises(SystemExit):
        check_data_files(parser, ["a.npz", "./a.npz"])
    assert "--data ./a.npz: given twice (as a.npz too): give each file once" in capsys.readouterr().err


def test_imitate_reads_every_data_file_of_repeated_flags(tmp_path, monkeypatch):
    """``--data a.npz --data b.npz`` read only b.npz (argparse kept the last flag's list)."""
    pytest.importorskip("torch")
    from training import imitate

    read = []

    def stop(path):
        read.append(str(path))
        if len(read) == 2:
            raise ValueError("read enough")
        return None

    monkeypatch.setattr(imitate, "load_oracle", stop)
    with pytest.raises(SystemExit):
        imitate.main(["--data", "a.npz", "--data", "b.npz", "--out", str(tmp_path / "x.pt")])
    assert read == ["a.npz", "b.npz"]
