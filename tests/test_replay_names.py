"""``replay`` prints a record's seat names with their control characters escaped (issue 25): a name
from a file must not clear the screen, set the window title or be read as rich markup."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

pytest.importorskip("rich")

from tt_env import three_thirteen_v0  # noqa: E402
from tt_env.agents import RandomAgent  # noqa: E402
from tt_env.ui.records import GameRecorder  # noqa: E402
from tt_env.ui.replay import main  # noqa: E402
from tt_env.ui.tui import printable_name  # noqa: E402

HOSTILE = ["\x1b[2J\x1b]0;pwned\x07clear", "b\x9b31m\u202eevil[/][bold]x"]


@pytest.fixture(scope="module")
def record_file(tmp_path_factory):
    env = three_thirteen_v0.env(rounds=(1, 2), max_turns_per_round=12)
    recorder = GameRecorder(env, HOSTILE)
    recorder.reset(5)
    agent, rng = RandomAgent(), np.random.default_rng(5)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        recorder.step(None if term or trunc else agent.act(obs["observation"], obs["action_mask"], rng))
    path = tmp_path_factory.mktemp("replay") / "game.json"
    path.write_text(json.dumps(recorder.to_record().to_dict()))
    return path


def test_printable_name_escapes_control_and_format_characters():
    assert printable_name("expert-v0 ♠") == "expert-v0 ♠"
    assert printable_name("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable_name("\x07\x9b\u202e\t\n") == "\\x07\\x9b\\u202e\\x09\\x0a"


@pytest.mark.parametrize("step", [False, True])
def test_replay_never_writes_a_names_control_characters(record_file, capsys, monkeypatch, step):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n" * 5000))
    assert main([str(record_file), *(["--step"] if step else [])]) == 0
    out = capsys.readouterr().out
    for bad in ("\x1b[2J", "\x1b]0;", "\x07", "\x9b", "\u202e"):
        assert bad not in out, repr(bad)
    assert "\\x1b[2J\\x1b]0;pwned\\x07clear" in out  # shown, escaped
    assert "evil[/][bold]x" in out  # not read as markup
