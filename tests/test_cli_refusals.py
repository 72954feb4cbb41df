"""Every command line refuses in one line, parses ``--rounds`` one way, and prints small numbers legibly.

Issue 19: ``--rounds 9-11`` was accepted by ``tt_env.ui.play`` and refused by ``training.evaluate``;
a refusal printed argparse's usage block above its line; ms/move and games/s of slow agents
showed as ``0.0``.
"""

from __future__ import annotations

import argparse
import importlib

import pytest

from tt_env import cli_checks
from tt_env.cli_checks import CommandParser, invoked_as, rounds_arg, significant

# (module, argv, the start of the message): a bad value or a missing argument for each tool
REFUSALS = [
    ("training.evaluate", ["greedy-v0", "random-v0", "--games", "zero"], "argument --games: 'zero' is not an integer"),
    ("training.evaluate", [], "the following arguments are required: agents (--help shows the usage)"),
    ("training.evaluate", ["greedy-v0", "random-v0", "--rounds", "9-12"], "argument --rounds: '9-12' is not allowed"),
    ("training.evaluate", ["greedy-v0", "random-v0", "--colour"], "unrecognized arguments: --colour"),
    ("training.leaderboard", ["--deals", "0"], "argument --deals: 0 is not allowed"),
    ("training.ship", ["x.pt"], "the following arguments are required: name, --wall-time"),
    ("training.main_job", ["--seed", "-1"], "argument --seed: -1 is not allowed"),
    ("training.oracle_data", ["--games", "1"], "the following arguments are required: --out"),
    ("training.imitate", ["--out", "x.pt"], "the following arguments are required: --data"),
    ("training.selfplay", ["--resume", "--overwrite"], "argument --overwrite: not allowed with argument --resume"),
    ("training.train_sb3", ["--config", "nowhere/none.yaml"], "config file 'nowhere/none.yaml' does not exist"),
    ("training.train_rllib", ["--iterations", "x"], "argument --iterations: invalid int value: 'x'"),
    ("tt_env.ui.play", ["--rounds", "9-12"], "argument --rounds: '9-12' is not allowed"),
    ("tt_env.ui.replay", ["game.json", "--fps", "0"], "argument --fps: 0 is not allowed"),
    ("training.leaderboard", ["--players", "9"], "argument --players: 9 is not allowed: use a player count, 2..8"),
    ("training.belief_eval", ["--players", "1"], "argument --players: 1 is not allowed: use a player count, 2..8"),
    ("training.train_belief", ["--data", "a.npz", "--threads", "5000", "--out", "x.pt"],
     "argument --threads: 5000 is not allowed: use an integer 1..1024"),
    ("training.train_belief", ["--data", "a.npz", "--width", "100000", "--out", "x.pt"],
     "argument --width: 100000 is not allowed: use an integer 1..512"),
    ("training.imitate", ["--data", "a.npz", "--data", "a.npz", "--out", "x.pt"],
     "--data a.npz: given twice (as a.npz too): give each file once"),
    ("tt_env.ui.play", ["--opponents", *["random-v0"] * 8],
     "--opponents: 8 given, at most 7 (a table seats 8 players, you included)"),
]
NEEDS = {"training.leaderboard": "torch", "training.ship": "torch", "training.main_job": "torch",
         "training.oracle_data": "torch", "training.imitate": "torch", "training.selfplay": "torch",
         "training.train_sb3": "sb3_contrib", "training.train_rllib": "yaml", "training.belief_eval": "torch", "training.train_belief": "torch"}


def _refusal(module: str, argv: list[str], capsys, prog: str | None = None) -> str:
    if module in NEEDS:
        pytest.importorskip(NEEDS[module])
    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as exit_info:
        if prog is None:
            main(argv)
        else:
            with invoked_as(prog):
                main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"a refusal is one line, not the usage plus a line:\n{err}"
    return lines[0]


@pytest.mark.parametrize("module, argv, message", REFUSALS, ids=[f"{m}:{' '.join(a)}" for m, a, _ in REFUSALS])
def test_every_tool_refuses_in_one_line(module, argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = _refusal(module, argv, capsys)
    prog = {"training.selfplay": "python training/selfplay.py", "training.train_sb3": "python training/train_sb3.py"}
    assert line.startswith(f"{prog.get(module, f'python -m {module}')}: error: ") and message in line


@pytest.mark.parametrize("module", ["training.evaluate", "tt_env.ui.play"])
def test_a_refusal_names_the_command_as_it_was_typed(module, capsys):
    line = _refusal(module, ["--rounds", "0"], capsys, prog="three-thirteen x")
    assert line.startswith("three-thirteen x: error: argument --rounds: '0' is not allowed")


@pytest.mark.parametrize("text, rounds", [("1-11", tuple(range(1, 12))), ("11", (11,)), ("9-11", (9, 10, 11)),
                                          ("9,10,11", (9, 10, 11)), (" 1, 3-5 ", (1, 3, 4, 5)), ("4-4", (4,))])
def test_rounds_forms(text, rounds):
    assert rounds_arg(text) == rounds


@pytest.mark.parametrize("text", ["0", "12", "9-12", "11-9", "3,1", "9,9", "1-3,3", "", "a", "1-", "-3", "1.5", "1;2"])
def test_rounds_refused_with_the_forms_allowed(text):
    with pytest.raises(argparse.ArgumentTypeError, match=r"write rounds 1\.\.11 in increasing order, such as 1-11"):
        rounds_arg(text)


def test_play_and_evaluate_share_one_rounds_parser_and_evaluate_plays_9_11(capsys):
    from training import evaluate
    from tt_env.ui import play

    assert play.parse_rounds is rounds_arg
    for parser in (evaluate.build_parser(),):
        rounds = next(a for a in parser._actions if "--rounds" in a.option_strings)
        assert rounds.type is rounds_arg
    report = evaluate.main(["greedy-v0", "random-v0", "--rounds", "9-11", "--games", "1", "--quiet"])
    assert report["rules"]["rounds"] == [9, 10, 11]
    capsys.readouterr()


def test_the_parser_names_the_invoked_command_only_inside_the_block():
    with invoked_as("three-thirteen evaluate"):
        assert CommandParser(prog="python -m training.evaluate").prog == "three-thirteen evaluate"
        assert cli_checks.command_name("python -m training.evaluate") == "three-thirteen evaluate"
    assert CommandParser(prog="python -m training.evaluate").prog == "python -m training.evaluate"
    assert cli_checks.command_name("python -m training.evaluate") == "python -m training.evaluate"


@pytest.mark.parametrize("value, text", [
    (0.0, "0"), (0.004187, "0.00419"), (0.0123456, "0.0123"), (0.09996, "0.100"), (1.234, "1.23"),
    (12.34, "12.3"), (99.96, "100"), (123.4, "123"), (4567.8, "4568"), (-3.21, "-3.21"), (float("inf"), "inf"),
])
def test_significant_digits(value, text):
    assert significant(value) == text


def test_the_evaluation_table_shows_slow_and_fast_agents_legibly(capsys):
    from training.evaluate import print_report

    agents = [{"name": n, "mean_score": 1.0, "win_rate": 0.5, "win_rate_ci95": [0.1, 0.9], "ms_per_move": ms}
              for n, ms in (("fast-v0", 0.00417), ("slow-v0", 312.6))]
    print_report({"games": 1, "seatings": 2, "games_played": 2, "seed": 0, "agents": agents, "pairwise": [],
                  "games_per_second": 0.0312})
    out = capsys.readouterr().out
    assert "0.00417" in out and "313" in out and "0.0312 games/s" in out
