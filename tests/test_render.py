"""The picture of the table: PettingZoo's render_test, shape and type for 2 to 6 players, lazy imports."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tt_env import three_thirteen_v0
from tt_env.engine import Rules
from tt_env.engine.game import apply, legal_actions, new_game

pytest.importorskip("PIL")
from pettingzoo.test import render_test  # noqa: E402

from tt_env.ui.render_image import image_size, render_round_end, render_table  # noqa: E402
from tt_env.ui.render_window import show_human  # noqa: E402


@pytest.fixture(autouse=True)
def no_display(monkeypatch):
    """Tests never open windows: without a display, "human" prints the text view."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")


def played(num_players: int, steps: int, seed: int = 0, rounds=(1, 11)):
    state = new_game(Rules(num_players=num_players, rounds=rounds), np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    for _ in range(steps):
        if state.game_over:
            break
        apply(state, int(rng.choice(legal_actions(state))))
    return state


@pytest.mark.parametrize("num_players", [2, 3, 6])
def test_pettingzoo_render_test(num_players, capsys):
    render_test(lambda render_mode: three_thirteen_v0.env(num_players=num_players, render_mode=render_mode))
    assert "player_0" in capsys.readouterr().out  # "human" fell back to the text view


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6])
def test_picture_shape_and_type_are_fixed_per_player_count(num_players):
    env = three_thirteen_v0.env(num_players=num_players, render_mode="rgb_array", rounds=(10, 11))
    env.reset(seed=num_players)
    rng = np.random.default_rng(0)
    shapes = set()
    for k, agent in enumerate(env.agent_iter(40)):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if k % 13 == 0:
            image = env.render()
            assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3
            shapes.add(image.shape)
    assert shapes == {(*image_size(num_players), 3)}
    assert image.std() > 10  # a picture, not a blank


def test_round_end_and_game_over_pictures_have_the_same_size():
    state = played(3, 10_000, rounds=(1,))
    assert state.game_over
    table = render_table(state, 0)
    end = render_round_end(state.round_results[-1], state.rules, state.scores)
    assert table.shape == end.shape == (*image_size(3), 3)


def test_hidden_view_differs_from_the_open_view_and_shows_only_the_own_hand():
    state = played(2, 3)
    hidden, opened = render_table(state, 0), render_table(state, 0, reveal_all=True)
    assert not np.array_equal(hidden, opened)
    other = state.clone()
    i = next(i for i, c in enumerate(other.hands[1]) if c not in other.known_taken[1])
    other.hands[1][i], other.stock[0] = other.stock[0], other.hands[1][i]  # a hidden card changes
    assert np.array_equal(render_table(other, 0), hidden)
    assert not np.array_equal(render_table(other, 0, reveal_all=True), opened)


def test_env_option_reveal_all_and_bad_values():
    env = three_thirteen_v0.env(render_mode="rgb_array", reveal_all=True)
    env.reset(seed=1)
    seat = env.unwrapped.game_state.current_player
    assert np.array_equal(env.render(), render_table(env.unwrapped.game_state, seat, reveal_all=True))
    with pytest.raises(ValueError, match="reveal_all"):
        three_thirteen_v0.env(reveal_all="yes")
    with pytest.raises(ValueError, match="seat=7"):
        render_table(played(2, 0), 7)


def test_human_mode_without_display_prints_the_text_view(capsys):
    env = three_thirteen_v0.env(render_mode="human", rounds=(1,))
    env.reset(seed=2)
    assert env.render() is None
    assert "Round 1" in capsys.readouterr().out
    assert show_human(None, played(2, 1), 0) is None
    env.close()


def test_human_mode_uses_a_window_when_one_opens(monkeypatch, capsys):
    import tt_env.ui.render_window as ri

    shown = []

    class FakeWindow:
        closed = False

        def __init__(self, fps: float) -> None:
            pass

        def show(self, image):
            shown.append(image.shape)

        def close(self):
            self.closed = True

    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(ri, "TableWindow", FakeWindow)
    env = three_thirteen_v0.env(render_mode="human", rounds=(1,))
    env.reset(seed=2)
    env.render()
    window = env.unwrapped._table_renderer
    assert isinstance(window, FakeWindow) and shown == [(*image_size(2), 3)]
    assert capsys.readouterr().out == ""
    env.close()
    assert window.closed and env.unwrapped._table_renderer is None


def test_importing_the_env_does_not_import_pillow_or_rich():
    code = ("import sys, tt_env; from tt_env import three_thirteen_v0; e = three_thirteen_v0.env(render_mode='ansi'); "
            "e.reset(seed=0); e.render(); import tt_env.ui.records; "
            "print(sorted(m for m in ('PIL', 'rich', 'tkinter') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
