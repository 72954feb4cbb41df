"""Position data files (``.npz``, no pickles): arrays plus a JSON ``meta``, written atomically.

``training.oracle_data`` and ``training.belief_data`` write their files with :func:`save_npz`;
a file being written is never seen half-done under its final name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np


def save_npz(path: str | Path, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write ``arrays`` and ``meta`` (as a JSON string array named ``meta``) to ``path``; returns it."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.stem + ".tmp.npz")
    np.savez_compressed(tmp, meta=np.array(json.dumps(meta)), **arrays)
    tmp.replace(out)
    return out
