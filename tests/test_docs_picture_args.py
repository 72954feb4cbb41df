"""The scripts that make the docs' pictures replace the committed ones only with ``--overwrite``: a
stray run, or a mistyped flag such as ``--help`` before it existed, used to redraw them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from picture_args import DOCS, output_folder  # noqa: E402

PICTURES = ("a.png", "b.png")


def test_existing_pictures_are_kept_without_overwrite(tmp_path, capsys) -> None:
    (tmp_path / "b.png").write_bytes(b"kept")
    with pytest.raises(SystemExit) as exit_info:
        output_folder("Make pictures.", PICTURES, ["--out", str(tmp_path)])
    assert exit_info.value.code == 2
    assert f"{tmp_path} already holds b.png: give --overwrite to replace them" in capsys.readouterr().err
    assert output_folder("Make pictures.", PICTURES, ["--out", str(tmp_path), "--overwrite"]) == tmp_path
    assert (tmp_path / "b.png").read_bytes() == b"kept"  # (the check itself writes nothing)


def test_a_new_folder_is_made_and_the_default_is_docs(tmp_path) -> None:
    assert output_folder("Make pictures.", PICTURES, ["--out", str(tmp_path / "new")]) == tmp_path / "new"
    assert (tmp_path / "new").is_dir()
    with pytest.raises(SystemExit):  # docs/ holds the committed pictures
        output_folder("Make pictures.", ("table.png",), [])
    assert (DOCS / "table.png").exists()
