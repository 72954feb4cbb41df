"""Position data files (``.npz``, no pickles): arrays plus a JSON ``meta``, written atomically.

``training.oracle_data`` and ``training.belief_data`` write their files with :func:`save_npz`;
a file being written is never seen half-done under its final name.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def save_npz(path: str | Path, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write ``arrays`` and ``meta`` (as a JSON string array named ``meta``) to ``path``; returns it."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    # a temporary name of its own beside the target (a fixed NAME.tmp.npz would replace a file of
    # that name, and two runs writing the same --out would share it); removed if the write fails
    fd, name = tempfile.mkstemp(prefix=f".{out.stem}.", suffix=".tmp.npz", dir=out.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        np.savez_compressed(tmp, meta=np.array(json.dumps(meta)), **arrays)
        tmp.replace(out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out
