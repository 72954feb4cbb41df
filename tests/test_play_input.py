"""``tt_env.ui.play``: a failed save asks again, the end of input stops the game cleanly, every argument is
checked before the game starts, and the exit status says how the game ended."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

pytest.importorskip("rich")
from rich.console import Console  # noqa: E402

from tt_env.engine import Rules  # noqa: E402
from tt_env.engine.game import PHASE_DRAW  # noqa: E402
from tt_env.ui.play import EXIT_INPUT_ENDED, EXIT_OK, PlaySession, main  # noqa: E402
from tt_env.ui.records import load_record  # noqa: E402


class Script:
    """Scripted input: the replies in order, then ``EOFError`` (input closed) for every later prompt."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.prompts = 0

    def __call__(self, prompt: str) -> str:
        self.prompts += 1
        if not self.replies:
            raise EOFError
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


def make_session(replies: list[str], **kwargs) -> tuple[PlaySession, io.StringIO, Script]:
    out, script = io.StringIO(), Script(replies)
    rules = kwargs.pop("rules", Rules(rounds=(1,), max_turns_per_round=60))
    session = PlaySession(["random-v0"], rules=rules, seed=kwargs.pop("seed", 5), input_fn=script,
                          console=Console(file=out, width=1000, color_system=None), **kwargs)
    return session, out, script


def _blocker(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    return blocker


def test_a_failed_save_says_why_and_asks_for_another_file(tmp_path):
    blocker, good = _blocker(tmp_path), tmp_path / "saved" / "game.json"
    session, out, _ = make_session(["q", "y", str(blocker / "game.json"), str(tmp_path), str(good)])
    record = session.run()
    text = out.getvalue()
    assert f"Could not save to {blocker / 'game.json'}: {blocker} is a file, not a folder." in text
    assert f"Could not save to {tmp_path}: it is a folder" in text
    assert text.count("Another file name (Enter: give up, the game is not saved)") == 2
    assert session.saved_to == good and load_record(good).actions == record.actions
    assert session.outcome == "quit"


def test_giving_up_after_a_failed_save_says_not_saved(tmp_path):
    session, out, _ = make_session(["q", "y", str(_blocker(tmp_path) / "g.json"), ""])
    session.run()
    assert "Not saved." in out.getvalue() and session.saved_to is None


def test_a_failed_save_path_asks_again_too(tmp_path):
    """``save_path`` (``--save``) that has become unwritable: asked for another file, not dropped."""
    good = tmp_path / "second.json"
    session, out, _ = make_session(["q", str(good)], save_path=_blocker(tmp_path) / "g.json")
    session.run()
    assert "Could not save to" in out.getvalue() and load_record(good).seats == ("human", "random-v0")


def test_end_of_input_at_the_first_prompt_stops_cleanly():
    session, out, script = make_session([])
    record = session.run()
    text = out.getvalue()
    assert "Input ended: the game stops here." in text and "Not saved." in text and "Game stopped." in text
    assert session.outcome == "input-ended" and record.final_scores is None
    assert script.prompts == 2  # the move, then the offer to save: nothing keeps asking


def test_end_of_input_saves_where_save_path_says(tmp_path):
    path = tmp_path / "g.json"
    session, _, _ = make_session(["s"], save_path=path)
    record = session.run()
    assert session.outcome == "input-ended" and load_record(path).actions == record.actions


def _drawing_player(session_box: dict, close_when) -> callable:
    """Input that draws from the stock and discards the card drawn, until ``close_when(state)``."""
    from tt_env.ui.tui import card_label

    def reply(prompt: str) -> str:
        session = session_box["session"]
        state = session.env.game_state
        if close_when(state):
            raise EOFError
        if state.phase == PHASE_DRAW:
            return "s"
        return card_label(state.hands[session.seat][-1]).lower()

    return reply


def _session_with(reply_factory, rules: Rules) -> tuple[PlaySession, io.StringIO]:
    box: dict = {}
    out = io.StringIO()
    session = PlaySession(["random-v0"], rules=rules, seed=1, input_fn=reply_factory(box),
                          console=Console(file=out, width=1000, color_system=None))
    box["session"] = session
    return session, out


def test_end_of_input_between_rounds_stops_cleanly():
    """Round 1 played, then the input closes at "Press Enter for the next round"."""
    session, out = _session_with(lambda box: _drawing_player(box, lambda state: bool(state.round_results)),
                                 Rules(rounds=(1, 2), max_turns_per_round=4))
    session.run()
    text = out.getvalue()
    assert text.index("End of round 1") < text.index("Press Enter for the next round") < text.index("Input ended")
    assert session.outcome == "input-ended" and "Game stopped." in text


def test_end_of_input_after_the_game_is_over_keeps_outcome_over():
    session, out = _session_with(lambda box: _drawing_player(box, lambda state: state.game_over),
                                 Rules(rounds=(1,), max_turns_per_round=4))
    session.run()
    text = out.getvalue()
    assert session.outcome == "over" and "Game over" in text and "Not saved." in text  # "Save?" got no answer


def _refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m tt_env.ui.play: error: "), err  # no usage block
    return lines[0]


@pytest.mark.parametrize("argv, message", [
    (["--seed", "-4"], "argument --seed: -4 is not allowed: use a seed, an integer >= 0"),
    (["--seat", "2"], "--seat 2 is not a seat of this table: use 0..1 (1 opponent(s) and you)"),
    (["--seat", "-1"], "argument --seat: -1 is not allowed: use a seat >= 0"),
    (["--max-turns-per-round", "0"], "argument --max-turns-per-round: 0 is not allowed: use an integer >= 1"),
    (["--decks", "0"], "argument --decks: '0' is not allowed: use 'auto' or a number of decks from 1 to 64"),
    (["--rounds", "12"], "argument --rounds: '12' is not allowed: write rounds 1..11"),
    (["--opponents", "nobody-v9"], "unknown agent 'nobody-v9'"),
    (["--opponents", "gone.pt"], "checkpoint 'gone.pt' does not exist"),
    (["--hint-agent", "nobody-v9"], "unknown agent 'nobody-v9'"),
])
def test_bad_arguments_are_refused_before_the_game(argv, message, capsys):
    assert message in _refused(argv, capsys)
    assert "Three Thirteen" not in capsys.readouterr().out


def test_an_unwritable_save_path_is_refused_before_the_game(tmp_path, capsys):
    blocker = _blocker(tmp_path)
    assert f"--save {blocker / 'g.json'}: {blocker} is a file, not a folder" in _refused(
        ["--save", str(blocker / "g.json")], capsys)
    assert "it is a folder" in _refused(["--save", str(tmp_path)], capsys)


def test_main_exit_status_says_how_the_game_ended(monkeypatch, capsys):
    monkeypatch.setattr("builtins.input", Script(["q", "n"]))
    assert main(["--opponents", "random-v0", "--seed", "3", "--rounds", "1"]) == EXIT_OK
    monkeypatch.setattr("builtins.input", Script([]))
    assert main(["--opponents", "random-v0", "--seed", "3", "--rounds", "1"]) == EXIT_INPUT_ENDED == 3


def test_module_with_closed_stdin_ends_without_a_traceback():
    result = subprocess.run([sys.executable, "-m", "tt_env.ui.play", "--opponents", "random-v0", "--seed", "3",
                             "--rounds", "1"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "Input ended: the game stops here." in result.stdout and "Game stopped." in result.stdout


# ---------------------------------------------------------------------- nothing is replaced without --overwrite
def test_an_existing_save_file_is_refused_before_the_game(tmp_path, capsys, monkeypatch):
    """--save FILE that exists: refused by name before the game; with --overwrite, replaced."""
    path = tmp_path / "g.json"
    path.write_text("kept")
    line = _refused(["--opponents", "random-v0", "--seed", "3", "--rounds", "1", "--save", str(path)], capsys)
    assert line == (f"python -m tt_env.ui.play: error: --save {path}: the file exists: "
                    f"give --overwrite to replace it, or another name")
    assert path.read_text() == "kept" and "Three Thirteen" not in capsys.readouterr().out
    monkeypatch.setattr("builtins.input", Script(["q"]))
    assert main(["--opponents", "random-v0", "--seed", "3", "--rounds", "1", "--save", str(path),
                 "--overwrite"]) == EXIT_OK
    assert load_record(path).seed == 3


def test_a_name_typed_in_the_game_never_replaces_a_file(tmp_path):
    """The interactive save refuses an existing file, says so and asks for another name."""
    existing, good = tmp_path / "old.json", tmp_path / "new.json"
    existing.write_text("kept")
    session, out, _ = make_session(["q", "y", str(existing), str(good)])
    record = session.run()
    assert f"Could not save to {existing}: a file of that name exists (it is kept)." in out.getvalue()
    assert existing.read_text() == "kept"
    assert session.saved_to == good and load_record(good).actions == record.actions


def test_a_save_path_that_appeared_during_the_game_is_kept_unless_overwrite(tmp_path):
    path, other = tmp_path / "g.json", tmp_path / "other.json"
    path.write_text("kept")
    session, out, _ = make_session(["q", str(other)], save_path=path)  # the file appeared after the start
    session.run()
    assert "a file of that name exists (it is kept)" in out.getvalue() and path.read_text() == "kept"
    assert session.saved_to == other
    session, _, _ = make_session(["q"], save_path=path, overwrite=True)
    record = session.run()
    assert session.saved_to == path and load_record(path).actions == record.actions


def _player_then(after_round: list[str]):
    """Input that plays like ``_drawing_player`` until round 1 ends, then gives ``after_round`` in order."""
    def factory(box: dict):
        play = _drawing_player(box, lambda state: False)

        def reply(prompt: str) -> str:
            if box["session"].env.game_state.round_results:
                if not after_round:
                    raise EOFError
                return after_round.pop(0)
            return play(prompt)
        return reply
    return factory


def test_q_between_rounds_quits():
    """``q`` at "Press Enter for the next round" quits, as the help says (the reply was dropped and the
    game went on)."""
    session, out = _session_with(_player_then(["q", "n"]), Rules(rounds=(1, 2), max_turns_per_round=4))
    session.run()
    text = out.getvalue()
    assert "Press Enter for the next round (q: quit)" in text
    assert session.outcome == "quit" and len(session.env.game_state.round_results) == 1


def test_a_name_the_system_cannot_take_at_the_save_prompt_asks_again(tmp_path):
    """A NUL or a name too long, typed at the save prompt, is a failed save that asks again, not
    "The game cannot go on" (the agent-failure exit)."""
    good = tmp_path / "game.json"
    session, out, _ = make_session(["q", "y", "a\0b.json", "a" * 300 + ".json", str(good)])
    session.run()
    text = out.getvalue()
    assert "NUL character" in text and "too long for this system" in text
    assert session.outcome == "quit" and session.saved_to == good and good.is_file()


def test_a_name_typed_with_a_tilde_is_saved_in_the_home_folder(tmp_path, monkeypatch):
    """``~`` typed at the prompt is the home folder, as in a shell (no folder named ``~`` is made)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path)
    session, _, _ = make_session(["q", "y", "~/game.json"])
    session.run()
    assert session.saved_to == tmp_path / "home" / "game.json" and not (tmp_path / "~").exists()
