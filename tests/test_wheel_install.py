"""A wheel (non-editable) install works from any directory: configs, checkpoints, console command.

The wheel is built from a copy of the checkout's files (what git tracks, plus new files it does
not ignore), installed with ``pip install --target`` into a fresh folder, and run with only
that folder on ``PYTHONPATH`` from another directory: the main job's first steps (a tiny run
and its evaluation) and an evaluation of a shipped agent through the ``three-thirteen`` command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
TINY_MAIN_JOB = ["--set", "total_steps=256", "--set", "num_envs=4", "--set", "rollout_steps=128",
                 "--set", "num_minibatches=2", "--set", "update_epochs=1", "--set", "eval_deals=1",
                 "--set", "eval_every=0", "--set", "progress=false",
                 "--set", "network_kwargs={channels: 8, hidden: 16}", "--deals", "1", "--workers", "1"]

pytestmark = pytest.mark.slow


def _source_files() -> list[str]:
    """The files a clean clone of this checkout has (tracked, or new and not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode()
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """Build the wheel from a copy of the sources, install it into a fresh folder; the paths."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know which files a clean clone has")
    base = tmp_path_factory.mktemp("wheel")
    source, dist, site, work = base / "source", base / "dist", base / "site", base / "work"
    for name in _source_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + ["wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(source)], check=True,
                   capture_output=True, timeout=600)
    wheel = next(dist.glob("three_thirteen-*.whl"))
    subprocess.run(pip + ["install", "--no-deps", "--target", str(site), str(wheel)], check=True,
                   capture_output=True, timeout=300)
    work.mkdir()
    return {"wheel": wheel, "site": site, "work": work}


def _run(installed: dict[str, Path], argv: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    """Run ``argv`` in the work folder with only the installed package importable from this project."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(installed["site"])
    proc = subprocess.run(argv, cwd=installed["work"], env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_the_wheel_holds_the_packages_and_their_data_and_nothing_else(installed):
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    info = f"three_thirteen-{PROJECT['version']}.dist-info"
    assert {n.split("/")[0] for n in names} == {"tt_env", "models", "training", info}
    configs = {Path(n).name for n in names if n.startswith("training/configs/")}
    assert configs == {p.name for p in (ROOT / "configs").glob("*.yaml")}
    checkpoints = {Path(n).name for n in names if n.startswith("models/checkpoints/")}
    assert {f"{name}.{ext}" for name in ("ppo-2p-v0", "ppo-2p-v1", "ppo-3p-v0", "ppo-4p-v0")
            for ext in ("pt", "json")} <= checkpoints
    assert {"tt_env/py.typed", "models/py.typed", "training/py.typed", f"{info}/licenses/LICENSE"} <= set(names)
    assert not [n for n in names if n.endswith((".c", ".h", ".pyc")) or "/tests/" in n or "__pycache__" in n]
    # the C extensions come built together or not at all (no compiler): the solver and the batched engine's kernels
    built = {n.split(".")[0] for n in names if n.startswith(("tt_env/engine/_meldsolver.", "tt_env/batch/_kernels."))}
    assert built in (set(), {"tt_env/engine/_meldsolver", "tt_env/batch/_kernels"})
    metadata = zipfile.ZipFile(installed["wheel"]).read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "Classifier: Typing :: Typed" in metadata
    entry_points = zipfile.ZipFile(installed["wheel"]).read(f"{info}/entry_points.txt").decode()
    assert "three-thirteen = tt_env.cli:main" in entry_points


def test_the_main_job_runs_from_another_directory(installed):
    where = _run(installed, [sys.executable, "-c", "import models, training, tt_env; from tt_env.engine import "
                             "solver_backend; print(tt_env.__file__, models.__file__, training.__file__)"])
    assert all(Path(p).is_relative_to(installed["site"]) for p in where.stdout.split()), where.stdout
    proc = _run(installed, [sys.executable, "-m", "training.main_job", *TINY_MAIN_JOB])
    run = installed["work"] / "runs" / "main_job"
    assert (run / "checkpoints" / "final.pt").is_file() and (run / "config.yaml").is_file()
    rows = json.loads((run / "main_job_eval.json").read_text())
    assert [(r["agent"], r["opponent"]) for r in rows] == [
        (agent, opponent) for agent in ("main_job (new)", "ppo-2p-v0 (shipped)")
        for opponent in ("random-v0", "greedy-v0", "expert-v0")]
    assert "checkpoint:     runs/main_job/checkpoints/final.pt" in proc.stdout


def test_the_console_command_evaluates_a_shipped_agent_from_another_directory(installed):
    command = str(installed["site"] / "bin" / "three-thirteen")
    assert _run(installed, [command, "--version"]).stdout == f"three-thirteen {PROJECT['version']}\n"
    _run(installed, [command, "evaluate", "ppo-2p-v0", "random-v0", "--games", "1", "--quiet", "--json", "ev.json"])
    report = json.loads((installed["work"] / "ev.json").read_text())
    assert [a["spec"] for a in report["agents"]] == ["ppo-2p-v0", "random-v0"] and report["games_played"] == 2
    configs = _run(installed, [sys.executable, "-c", "from training.common.config_files import shipped_configs, config_dir; "
                               "print(config_dir()); print(*shipped_configs())"]).stdout.splitlines()
    assert Path(configs[0]).is_relative_to(installed["site"])
    assert configs[1].split() == sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
