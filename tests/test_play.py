"""The terminal game driven by scripted input: legal moves, typos, illegal moves, whole rounds, quitting."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest

pytest.importorskip("rich")
from rich.console import Console  # noqa: E402

from tt_env.engine import Rules  # noqa: E402
from tt_env.engine.game import PHASE_DRAW, legal_actions  # noqa: E402
from tt_env.ui.play import PlaySession, main, parse_rounds  # noqa: E402
from tt_env.ui.records import load_record, replay_final  # noqa: E402
from tt_env.ui.tui import card_label  # noqa: E402


class Player:
    """Scripted input: queued replies first, else a legal move from the position (seeded)."""

    def __init__(self, replies: list[str] | None = None, seed: int = 0,
                 hook: Callable[[PlaySession], str | None] | None = None) -> None:
        self.replies = list(replies or [])
        self.rng = np.random.default_rng(seed)
        self.session: PlaySession | None = None
        self.hook = hook
        self.asked = 0

    def __call__(self, prompt: str) -> str:
        self.asked += 1
        if self.asked > 2000:
            raise AssertionError("the session keeps asking: a reply is being refused forever")
        if self.hook is not None:
            reply = self.hook(self.session)
            if reply is not None:
                return reply
        if self.replies:
            reply = self.replies.pop(0)
            if isinstance(reply, BaseException):
                raise reply
            return reply
        state = self.session.env.game_state
        if state.game_over or state.current_player != self.session.seat:
            return ""  # "Press Enter", or "no" to saving
        action = int(self.rng.choice(legal_actions(state)))
        return "s" if action == 0 else "d" if action == 1 else card_label(action - 2).lower()


def make_session(player: Player, opponents=("random-v0",), **kwargs) -> tuple[PlaySession, io.StringIO]:
    out = io.StringIO()
    rules = kwargs.pop("rules", Rules(num_players=len(opponents) + 1, rounds=(1,), max_turns_per_round=60))
    session = PlaySession(list(opponents), rules=rules, seed=kwargs.pop("seed", 5), input_fn=player,
                          console=Console(file=out, width=120, color_system=None), **kwargs)
    player.session = session
    return session, out


def test_whole_round_of_legal_moves_ends_with_scores_and_winner():
    session, out = make_session(Player(seed=1))
    record = session.run()
    text = out.getvalue()
    state = session.env.game_state
    assert state.game_over and record.final_scores == tuple(state.scores)
    assert "End of round 1" in text and "Game over" in text
    assert "points" in text and ("wins" in text or "win" in text)


def test_two_rounds_against_two_scripted_opponents_replay_to_the_same_scores():
    rules = Rules(num_players=3, rounds=(1, 2))
    session, out = make_session(Player(seed=2), opponents=("greedy-v0", "random-v0"), rules=rules, seat=1)
    record = session.run()
    assert record.seats == ("greedy-v0", "human", "random-v0")
    assert replay_final(record).game_state.scores == list(record.final_scores)
    assert out.getvalue().count("End of round") == 2


def _draw_phase_hook(replies: list[str]) -> Callable[[PlaySession], str | None]:
    """Give ``replies`` at the human's first draw phase."""
    def hook(session: PlaySession) -> str | None:
        state = session.env.game_state
        if replies and state.current_player == session.seat and state.phase == PHASE_DRAW and not state.game_over:
            return replies.pop(0)
        return None
    return hook


def test_typos_are_refused_with_the_reason_and_the_game_goes_on():
    replies = ["zz", "", "7h", "hint", "?", "[bold]x"]
    session, out = make_session(Player(seed=3, hook=_draw_phase_hook(replies)))
    session.run()
    text = out.getvalue()
    assert "'zz' is not a move here" in text
    assert "Type a move" in text
    assert "Draw first" in text
    assert "would" in text and "Least penalty of your hand now" in text
    assert "On your turn" in text
    assert "[bold]x" in text  # shown as typed, not read as markup
    assert session.env.game_state.game_over


def test_discard_typos_cards_not_held_and_the_card_just_taken_are_refused():
    stage = {"n": 0, "bad": []}

    def hook(session: PlaySession) -> str | None:
        state = session.env.game_state
        if state.game_over or state.current_player != session.seat:
            return None
        if stage["n"] == 0 and state.phase == PHASE_DRAW:
            stage["n"] = 1
            return "d"
        if stage["n"] == 1 and state.phase != PHASE_DRAW:
            stage["n"] = 2
            hand = state.hands[session.seat]
            missing = next(c for c in range(52) if c not in hand)
            stage["bad"] = ["xx", "1z", card_label(missing).lower(), "s", card_label(state.taken_this_turn)]
        if stage["bad"]:
            return stage["bad"].pop(0)
        return None

    session, out = make_session(Player(seed=4, hook=hook))
    session.run()
    text = out.getvalue()
    assert "'xx' is not a card" in text
    assert "'1z' is not a card" in text
    assert "You do not hold" in text
    assert "You have drawn already" in text
    assert "forbid discarding it again" in text
    assert session.env.game_state.game_over


def test_discard_accepts_ten_as_10_or_t_in_any_case():
    session, _ = make_session(Player(seed=0))
    session.recorder.reset(7)
    state = session.env.game_state
    hand = state.hands[session.seat]
    state.phase = 1  # look at the parser alone: pretend the player has drawn
    state.current_player = session.seat
    ten = next((c for c in range(52) if c % 13 == 9), 9)
    hand.append(ten)
    suit = "CDHS"[ten // 13]
    for text in (f"10{suit}", f"10{suit.lower()}", f"T{suit}", f"t{suit.lower()}", f" 10{suit} "):
        action, message = session._parse(text)
        assert action == 2 + ten, (text, message)


def test_hint_in_the_discard_phase_lists_every_legal_discard():
    def hook(session: PlaySession) -> str | None:
        state = session.env.game_state
        if not state.game_over and state.current_player == session.seat and state.phase != PHASE_DRAW:
            if not getattr(session, "_hinted", False):
                session._hinted = True
                return "h"
        return None

    session, out = make_session(Player(seed=6, hook=hook))
    session.run()
    text = out.getvalue()
    assert "Least penalty after each discard" in text and "→" in text


def test_quit_offers_to_save_and_the_saved_game_replays(tmp_path):
    path = tmp_path / "quit.json"
    session, out = make_session(Player(["s", "q", "y", str(path)]))
    record = session.run()
    assert "Game stopped" in out.getvalue() and path.exists()
    loaded = load_record(path)
    assert loaded.final_scores is None and loaded.actions == record.actions
    env = replay_final(loaded)
    assert len(env.game_state.hands[0]) + len(env.game_state.hands[1]) == 7  # 3 + 3, plus one drawn


def test_ctrl_c_asks_whether_to_save_and_never_raises(tmp_path):
    session, out = make_session(Player([KeyboardInterrupt(), "n"]))
    record = session.run()
    assert "Save the game before quitting? [y/N]" in out.getvalue()
    assert record.actions == () and session.saved_to is None
    session, out = make_session(Player([EOFError(), EOFError()]))  # end of input: asked, then not saved
    session.run()
    assert "Not saved" in out.getvalue()


def test_save_path_saves_at_the_end_without_asking(tmp_path):
    path = tmp_path / "game.json"
    session, _ = make_session(Player(seed=8), save_path=path)
    record = session.run()
    assert load_record(path) == record


def test_bad_session_arguments_are_refused():
    with pytest.raises(ValueError, match="num_players must be 3"):
        PlaySession(["random-v0", "random-v0"], rules=Rules(num_players=2))
    with pytest.raises(ValueError, match="seat=5"):
        PlaySession(["random-v0"], seat=5)
    with pytest.raises(ValueError, match="unknown agent"):
        PlaySession(["nobody-v9"])
    with pytest.raises(SystemExit):
        main(["--opponents", "nobody-v9"])
    with pytest.raises(SystemExit):
        main(["--rounds", "x-y"])


def test_parse_rounds():
    assert parse_rounds("1-11") == tuple(range(1, 12))
    assert parse_rounds("11") == (11,)
    assert parse_rounds("1,9-11") == (1, 9, 10, 11)


@pytest.mark.slow
def test_module_entry_point_runs_and_quits():
    result = subprocess.run([sys.executable, "-m", "tt_env.ui.play", "--opponents", "random-v0", "--seed", "3",
                             "--rounds", "1"], input="q\nn\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Three Thirteen" in result.stdout and "Game stopped" in result.stdout
