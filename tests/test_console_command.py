"""The ``three-thirteen`` console command: its subcommands, their ``--help`` names, its refusals."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tt_env import __version__, cli

ROOT = Path(__file__).resolve().parents[1]


def _run(argv, capsys) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's --help and refusals
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_console_script_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"three-thirteen": "tt_env.cli:main"}


def test_the_help_lists_every_command(capsys):
    code, out, _ = _run(["--help"], capsys)
    assert code == 0
    for name in ("evaluate", "leaderboard", "play", "replay", "train", "ship", "main-job", "web"):
        assert f"\n  {name} " in out
    assert _run(["--version"], capsys)[:2] == (0, f"three-thirteen {__version__}\n")
    code, out, _ = _run([], capsys)
    assert code == 2 and out.startswith("usage: three-thirteen COMMAND")


@pytest.mark.parametrize("argv, prog, needs", [
    (["evaluate"], "three-thirteen evaluate", None),
    (["leaderboard"], "three-thirteen leaderboard", None),
    (["play"], "three-thirteen play", None),
    (["replay"], "three-thirteen replay", None),
    (["ship"], "three-thirteen ship", "torch"),
    (["main-job"], "three-thirteen main-job", "torch"),
    (["train", "selfplay"], "three-thirteen train selfplay", "torch"),
    (["train", "sb3"], "three-thirteen train sb3", "sb3_contrib"),
    (["train", "batch-ppo"], "three-thirteen train batch-ppo", "torch"),
    (["train", "long-run"], "three-thirteen train long-run", "torch"),
    (["train", "rllib"], "three-thirteen train rllib", "yaml"),
])
def test_each_command_shows_how_it_is_run(argv, prog, needs, capsys):
    if needs:
        pytest.importorskip(needs)
    code, out, _ = _run(argv + ["--help"], capsys)
    assert code == 0 and out.startswith(f"usage: {prog} ")


def test_train_lists_its_trainers(capsys):
    code, out, _ = _run(["train", "--help"], capsys)
    assert code == 0 and out.startswith("usage: three-thirteen train COMMAND")
    assert all(f"\n  {name} " in out for name in ("selfplay", "sb3", "batch-ppo", "long-run", "rllib"))
    code, _, err = _run(["train", "ppo"], capsys)
    assert code == 2 and err == ("three-thirteen train: error: 'ppo' is not a command: use one of selfplay, sb3, "
                                 "batch-ppo, long-run, rllib (three-thirteen train --help)\n")


def test_an_unknown_command_is_one_line(capsys):
    code, _, err = _run(["evalute", "x"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("three-thirteen: error: 'evalute' is not a command: use one of evaluate, leaderboard")


def test_a_subcommand_refusal_names_the_subcommand(capsys):
    code, _, err = _run(["evaluate", "greedy-v0", "random-v0", "--games", "0"], capsys)
    assert code == 2
    assert err == "three-thirteen evaluate: error: argument --games: 0 is not allowed: use an integer >= 1\n"


def test_a_subcommand_runs_and_its_exit_status_comes_back(capsys, tmp_path):
    report = tmp_path / "r.json"
    code, out, _ = _run(["evaluate", "greedy-v0", "random-v0", "--games", "1", "--rounds", "11", "--quiet",
                         "--json", str(report)], capsys)
    assert code == 0 and report.exists() and "games/s" in out
    code, _, err = _run(["replay", str(tmp_path / "none.json")], capsys)
    assert code == 2 and "three-thirteen replay: error: " in err


def test_web_is_dispatched_to_tt_env_web_when_it_exists(capsys, monkeypatch):
    import importlib

    calls = []

    class FakeWeb:
        @staticmethod
        def main(argv):
            calls.append(argv)
            return 0

    real = importlib.import_module
    monkeypatch.setattr(cli.importlib, "import_module",
                        lambda name, *a: FakeWeb if name == "tt_env.web" else real(name, *a))
    assert _run(["web", "--port", "8001"], capsys)[0] == 0 and calls == [["--port", "8001"]]


def test_web_without_tt_env_web_is_one_line(capsys, monkeypatch):
    def missing(name, *args):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(cli.importlib, "import_module", missing)
    code, _, err = _run(["web"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("three-thirteen web: error: the module tt_env.web is not in this installation")
    assert "pip install 'three-thirteen[web]'" in err


def test_a_missing_dependency_of_a_command_is_one_line_and_a_bug_is_not_hidden(capsys, monkeypatch):
    def needs(dependency):
        def import_module(name, *args):
            raise ModuleNotFoundError(f"No module named {dependency!r}", name=dependency)
        return import_module

    monkeypatch.setattr(cli.importlib, "import_module", needs("fastapi"))
    code, _, err = _run(["web"], capsys)
    assert code == 2 and err == ("three-thirteen web: error: this command needs fastapi, which is not installed: "
                                 "pip install fastapi (or pip install 'three-thirteen[web]')\n")
    monkeypatch.setattr(cli.importlib, "import_module", needs("training.no_such_module"))
    with pytest.raises(ModuleNotFoundError):
        cli.main(["evaluate"])


def test_the_play_help_lists_every_agent_of_the_registry(capsys, monkeypatch):
    from tt_env.agents import agent_names, registry

    monkeypatch.setattr(registry, "_AGENTS", dict(registry._AGENTS, **{"new-v7": lambda rules: None}))
    code, out, _ = _run(["play", "--help"], capsys)
    assert code == 0
    text = " ".join(re.sub(r"-\n\s*", "-", out).split())  # argparse may wrap a name at a hyphen
    assert "new-v7" in agent_names() and all(name in text for name in agent_names())
    assert {"ppo-2p-v1", "ppo-3p-v0", "ppo-4p-v0", "ismcts-v0"} <= set(agent_names())


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback():
    """``three-thirteen train --help | head -0``: the help's flush met a closed pipe, a traceback."""
    code = "import sys; from tt_env.cli import main; sys.exit(main(['train', '--help']))"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the help is written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait() == 141 and "Traceback" not in err and "BrokenPipeError" not in err, err
