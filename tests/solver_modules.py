"""The two meld-solver backends as modules, for tests that run the same checks on each."""

from __future__ import annotations

import pytest

from tt_env.engine import melds_py

try:
    from tt_env.engine import _meldsolver
except ImportError:  # pragma: no cover - only where the C accelerator was not built
    _meldsolver = None

BACKEND_NAMES = ["c", "python"]


def solver_module(name: str):
    """The backend called ``name`` ("c" or "python"); skips the test when the C one is not built."""
    if name == "python":
        return melds_py
    if _meldsolver is None:
        pytest.skip("the C accelerator _meldsolver is not built")
    return _meldsolver
