"""The rules engine imports only the stdlib and numpy (STYLE.md G1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


ENGINE_MODULES = ("tt_env.engine", "tt_env.engine.cards", "tt_env.engine.rules", "tt_env.engine.melds",
                  "tt_env.engine.melds_py", "tt_env.engine.cardlist", "tt_env.engine.game")
FORBIDDEN = ("gymnasium", "pettingzoo", "torch", "pygame", "PIL", "pyspiel", "open_spiel")
PACKAGE_DIR = Path(__file__).resolve().parents[1] / "tt_env"

# Imports the engine modules in a fresh interpreter and prints which top-level packages
# ended up loaded. With STUB_PARENT, a bare ``tt_env`` package object stands in for
# tt_env/__init__.py, so only the engine's own code runs.
_PROBE = """
import importlib, json, sys, types
if {stub_parent!r}:
    parent = types.ModuleType("tt_env")
    parent.__path__ = [{package_dir!r}]
    sys.modules["tt_env"] = parent
for name in {modules!r}:
    importlib.import_module(name)
loaded = sorted({{m.split(".")[0] for m in sys.modules}})
print(json.dumps({{"loaded": loaded, "forbidden": [m for m in {forbidden!r} if m in loaded]}}))
"""


def _loaded_after_import(stub_parent: bool) -> dict[str, list[str]]:
    probe = _PROBE.format(stub_parent=stub_parent, package_dir=str(PACKAGE_DIR),
                          modules=ENGINE_MODULES, forbidden=FORBIDDEN)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    # the probe really imported the engine (guards against an empty run passing trivially)
    assert "tt_env" in report["loaded"] and "numpy" in report["loaded"]
    return report


def test_engine_code_imports_only_numpy_and_the_stdlib() -> None:
    report = _loaded_after_import(stub_parent=True)
    assert report["forbidden"] == [], f"the engine modules pulled in {report['forbidden']}"


def test_importing_the_package_stays_light() -> None:
    """``import tt_env`` registers the env ids (so gymnasium and pettingzoo load), but never
    imports torch or a rendering library."""
    report = _loaded_after_import(stub_parent=False)
    heavy = [m for m in report["forbidden"] if m not in ("gymnasium", "pettingzoo")]
    assert heavy == [], f"importing the engine through tt_env pulled in {heavy}"
