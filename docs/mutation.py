"""Mutation testing of the search and agents modules with mutmut, on a sample of mutants (not in CI).

Run from the repository root, after ``pip install -e ".[dev,mutation]"`` and building the C
solver (``python setup.py build_ext --inplace``)::

    nice -n 10 python docs/mutation.py prepare              # copy, generate every mutant, map tests (~10 min)
    nice -n 10 python docs/mutation.py run --per-module 12  # a seeded sample of each module's mutants
    python docs/mutation.py report                          # the score per module, the survivors

``prepare`` copies the committed tree (``git archive HEAD``) and the built solver to
``--work`` (default ``/tmp/tt-mutation``), writes mutmut's ``setup.cfg`` there (the modules of
``MODULES``, the tests of ``TESTS``) and runs mutmut once with no mutant, which generates them
all and records which tests reach which function ("stats"). Each mutant then runs only the
tests that reach its function, and stops at the first failure. The editable install of the
project would let the tests import the unmutated package; a ``sitecustomize`` on
``PYTHONPATH`` removes its finder in the mutation runs, so ``tt_env`` comes from mutmut's
copy alone. ``run`` draws ``--per-module`` mutant names per module (seed ``--seed``) and
runs them; ``report`` reads the results mutmut stored.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = ["tt_env/search/*.py", "tt_env/observation/*.py", "tt_env/agents/*.py"]
TESTS = ["tests/test_determinize.py", "tests/test_observation_checks.py", "tests/test_search_details.py",
         "tests/test_ismcts.py", "tests/test_agents.py", "tests/test_last_turn.py",
         "tests/test_hidden_information.py", "tests/test_agents_rules_variants.py"]
SITECUSTOMIZE = '''import sys

sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__name__", type(f).__name__).lower()]
'''


def _setup_cfg() -> str:
    lines = ["[mutmut]", "source_paths = tt_env", "only_mutate ="] + [f"    {m}" for m in MODULES]
    lines += ["also_copy =", "    models", "    training", "    README.md", "pytest_add_cli_args_test_selection ="]
    lines += [f"    {t}" for t in TESTS] + ["pytest_add_cli_args =", "    -p", "    no:cacheprovider", "    -q"]
    return "\n".join(lines) + "\n"


def _env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(work / "site")
    return env


def _mutmut(work: Path, *args: str) -> int:
    return subprocess.call([sys.executable, "-m", "mutmut", "run", "--max-children", "1", *args],
                           cwd=work / "tree", env=_env(work))


def prepare(work: Path) -> int:
    if work.exists():
        shutil.rmtree(work)
    (work / "tree").mkdir(parents=True)
    (work / "site").mkdir()
    (work / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(work / "tree")], input=archive, check=True)
    for solver in (ROOT / "tt_env" / "engine").glob("_meldsolver*.so"):
        shutil.copy(solver, work / "tree" / "tt_env" / "engine")
    (work / "tree" / "setup.cfg").write_text(_setup_cfg())
    _mutmut(work, "no.mutant.at.all")  # generates every mutant and the stats, then finds no mutant of that name
    stats = work / "tree" / "mutants" / "mutmut-stats.json"
    print(f"stats {'written' if stats.exists() else 'MISSING (see the output above)'}: {stats}")
    return 0 if stats.exists() else 1


def _metas(work: Path) -> dict[str, dict[str, int | None]]:
    """``{module file: {mutant name: exit code or None}}`` from mutmut's ``.meta`` files."""
    out = {}
    for meta in sorted((work / "tree" / "mutants" / "tt_env").rglob("*.py.meta")):
        out[str(meta.relative_to(work / "tree" / "mutants"))[:-5]] = json.loads(meta.read_text())["exit_code_by_key"]
    return out


def run(work: Path, per_module: int, seed: int) -> int:
    chosen = []
    for module, codes in _metas(work).items():
        names = sorted(codes)
        chosen += random.Random(f"{seed}:{module}").sample(names, min(per_module, len(names)))
    print(f"running {len(chosen)} mutants", flush=True)
    return _mutmut(work, *chosen)


def report(work: Path) -> int:
    """The score per module: killed (a test failed, or the mutant hung past mutmut's timeout) over run."""
    from mutmut.stats import status_by_exit_code

    print("| module | mutants | run | killed | timeout | survived | no test reaches it | score |")
    print("|---|---|---|---|---|---|---|---|")
    survivors = []
    for module, codes in _metas(work).items():
        status = {k: status_by_exit_code[v] for k, v in codes.items() if v is not None}
        count = {s: sum(1 for v in status.values() if v == s) for s in ("killed", "timeout", "survived", "no tests")}
        survivors += [k for k, v in status.items() if v in ("survived", "no tests")]
        score = f"{(count['killed'] + count['timeout']) / len(status):.0%}" if status else "-"
        print(f"| `{module}` | {len(codes)} | {len(status)} | {count['killed']} | {count['timeout']} | "
              f"{count['survived']} | {count['no tests']} | {score} |")
    print("\nsurvivors (see each with: cd <work>/tree && python -m mutmut show NAME):")
    for name in survivors:
        print(f"  {name}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["prepare", "run", "report"])
    parser.add_argument("--work", type=Path, default=Path("/tmp/tt-mutation"), help="work folder (is replaced)")
    parser.add_argument("--per-module", type=int, default=12, help="mutants drawn per module (default 12)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        return prepare(args.work)
    if args.command == "run":
        return run(args.work, args.per_module, args.seed)
    return report(args.work)


if __name__ == "__main__":
    sys.exit(main())
