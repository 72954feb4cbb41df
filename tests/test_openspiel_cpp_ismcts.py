"""What docs/openspiel.md says of OpenSpiel's C++ ``ISMCTSBot``: it crashes the process on any Python game.

Run in subprocesses, as the crash is a segmentation fault. If a new OpenSpiel fixes it, the
first test fails: then that page's note ("Bots") is out of date.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pyspiel")

PROGRAM = textwrap.dedent("""
    import sys
    import pyspiel
    from open_spiel.python.games import kuhn_poker  # noqa: F401  (registers python_kuhn_poker)
    import tt_env.openspiel  # noqa: F401  (registers python_three_thirteen)
    game = pyspiel.load_game(sys.argv[1])
    bot = pyspiel.ISMCTSBot(0, pyspiel.RandomRolloutEvaluator(1, 0), 2.0, 20)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    print("stepping", flush=True)
    print("action", bot.step(state), flush=True)
""")


def _step(game: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROGRAM, game], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("game", ["python_kuhn_poker", "python_three_thirteen(rounds=[1])"])
def test_the_cpp_ismcts_bot_crashes_on_python_games(game):
    proc = _step(game)
    assert proc.stdout == "stepping\n" and proc.returncode == -signal.SIGSEGV, (proc.returncode, proc.stderr)


def test_the_cpp_ismcts_bot_runs_on_a_cpp_game():
    proc = _step("kuhn_poker")
    assert proc.returncode == 0 and proc.stdout.startswith("stepping\naction"), proc.stderr
