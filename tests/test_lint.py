"""The code passes ruff's checks as ``pyproject.toml`` configures them (``[tool.ruff.lint]``):
pyflakes (undefined names, unused imports and variables, redefinitions), pycodestyle's errors
and warnings (lines of at most 120 characters outside the tests) and flake8-bugbear (mutable
defaults, ``raise`` without ``from`` inside ``except``, and the like). ruff comes with the
``dev`` extra; without it the check is skipped."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed (pip install -e '.[dev]')")
def test_ruff_finds_nothing() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"ruff check . found problems (fix them, or see [tool.ruff.lint]):\n{done.stdout[-6000:]}"
