"""``benchmarks/hand_mutants.py`` stays in step with the code: each hand mutant's text occurs
exactly once in its file (so it still mutates what it was written for), changes it, and runs
tests that exist; a mutant expected to survive says why. (Running them is the script's job.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def hand_mutants():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("hand_mutants", ROOT / "benchmarks" / "hand_mutants.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["hand_mutants"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def test_every_hand_mutant_applies_once_and_names_real_tests() -> None:
    module = hand_mutants()
    assert len(module.MUTANTS) >= 50
    for m in module.MUTANTS:
        text = (ROOT / m.file).read_text()
        assert text.count(m.old) == 1, (m.file, m.old)
        assert m.new != m.old and text.replace(m.old, m.new) != text
        assert all((ROOT / t).is_file() for t in m.tests)
        assert m.equivalent == "" or len(m.equivalent) > 20
    assert len({(m.file, m.old) for m in module.MUTANTS}) == len(module.MUTANTS)  # no mutant twice
