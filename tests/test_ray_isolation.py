"""Ray stays optional (issue 5): only the three RLlib files of ``training/`` may import it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAY_FILES = {"training/rllib/env.py", "training/rllib/masking.py", "training/train_rllib.py"}
# Modules a user of an exported RLlib policy needs: none may pull Ray in, even when installed.
RAY_FREE_MODULES = ("tt_env", "tt_env.three_thirteen_v0", "tt_env.agents", "models", "models.checkpoint",
                    "models.agent_loader", "training.common.config", "training.evaluate", "training.rllib.export")


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_only_the_rllib_files_import_ray() -> None:
    scanned, offenders = 0, []
    for package in ("tt_env", "models", "training"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            scanned += 1
            if rel not in RAY_FILES and "ray" in _imported_roots(path):
                offenders.append(rel)
    assert scanned > 10, "the scan found no source files"
    assert offenders == [], f"these files import Ray: {offenders}"
    assert all("ray" in _imported_roots(ROOT / f) for f in RAY_FILES - {"training/train_rllib.py"})


def test_loading_and_evaluating_a_policy_does_not_load_ray() -> None:
    probe = (f"import importlib, json, sys\n"
             f"for m in {RAY_FREE_MODULES!r}: importlib.import_module(m)\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert "models" in loaded and "torch" in loaded  # the probe really imported them
    assert "ray" not in loaded
