"""The command line of the scripts that make the docs' pictures (``make_images.py``,
``make_web_images.py``): where to write them, and ``--overwrite`` to replace pictures that are
there (the committed ones in ``docs/``), so that a stray run or a mistyped flag replaces nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

DOCS = Path(__file__).resolve().parent


def output_folder(doc: str, pictures: Sequence[str], argv: Sequence[str] | None = None) -> Path:
    """The folder to write ``pictures`` into (``--out``, default ``docs/``), after checking it:
    existing pictures are replaced only with ``--overwrite`` (argparse's exit 2 otherwise)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DOCS, help="folder of the pictures (default: docs/)")
    parser.add_argument("--overwrite", action="store_true", help="replace pictures that are already there")
    args = parser.parse_args(argv)
    held = [name for name in pictures if (args.out / name).exists()]
    if held and not args.overwrite:
        parser.error(f"{args.out} already holds {', '.join(held)}: give --overwrite to replace them, or --out "
                     f"another folder")
    args.out.mkdir(parents=True, exist_ok=True)
    return args.out
