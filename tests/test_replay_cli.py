"""``python -m tt_env.ui.replay``: exit status 1 for a record that does not replay, 2 for a bad command line,
with a one-line message, and nothing written or shown before the whole record is checked."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("rich")

from tt_env import three_thirteen_v0  # noqa: E402
from tt_env.agents import RandomAgent  # noqa: E402
from tt_env.ui.records import GameRecord, GameRecorder, save_record  # noqa: E402
from tt_env.ui.replay import frames, main, print_replay  # noqa: E402


@pytest.fixture(scope="module")
def record_data() -> dict:
    """A short finished game of random agents, as the JSON object of its record."""
    env = three_thirteen_v0.env(rounds=(1,), max_turns_per_round=12)
    recorder = GameRecorder(env, ["random-v0", "random-v0"])
    recorder.reset(5)
    agent, rng = RandomAgent(), np.random.default_rng(5)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        recorder.step(None if term or trunc else agent.act(obs["observation"], obs["action_mask"], rng))
    data = recorder.to_record().to_dict()
    assert data["final_scores"] is not None
    return data


def _write(tmp_path, data, name="game.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def _status(argv, capsys) -> tuple[int, str]:
    """Exit status and the last line of stderr; a refused command line exits via SystemExit(2)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, (err.strip().splitlines() or [""])[-1]


def test_a_good_record_replays_with_status_0(record_data, tmp_path, capsys):
    assert _status([str(_write(tmp_path, record_data))], capsys) == (0, "")


def test_final_scores_that_differ_exit_1_naming_the_scores(record_data, tmp_path, capsys):
    data = dict(record_data, final_scores=[s + 1 for s in record_data["final_scores"]])
    code, line = _status([str(_write(tmp_path, data))], capsys)
    assert code == 1
    assert f"the scores are {record_data['final_scores']}, but the record has final_scores " \
           f"{data['final_scores']}" in line


def test_actions_after_the_end_exit_1_naming_the_step(record_data, tmp_path, capsys):
    data = dict(record_data, actions=record_data["actions"] + [0, 0])
    steps = len(data["actions"])
    code, line = _status([str(_write(tmp_path, data))], capsys)
    assert code == 1 and f"step {steps - 1} of {steps}: the game is already over" in line


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not valid JSON"),
    ('{"format_version": 1}', "missing the key(s)"),
    ("[1, 2]", "expected a JSON object"),
])
def test_malformed_records_exit_1(content, message, tmp_path, capsys):
    code, line = _status([str(_write(tmp_path, content))], capsys)
    assert code == 1 and message in line and line.startswith("python -m tt_env.ui.replay: error:")


def test_a_record_that_cannot_be_read_is_a_command_line_error(tmp_path, capsys):
    code, line = _status([str(tmp_path / "nowhere.json")], capsys)
    assert code == 2 and "does not exist" in line
    code, line = _status([str(tmp_path)], capsys)  # a folder
    assert code == 2 and f"cannot read {tmp_path}" in line


@pytest.mark.parametrize("fps", ["0", "-1", "nan", "inf", "101", "0.001", "0.0019"])
def test_fps_must_be_a_finite_number_in_range(fps, record_data, tmp_path, capsys):
    """Down to 0.002: a GIF frame shows for 655.35 s at most (an fps of 0.001 crashed Pillow's writer)."""
    code, line = _status([str(_write(tmp_path, record_data)), "--gif", str(tmp_path / "g.gif"), "--fps", fps], capsys)
    assert code == 2 and f"argument --fps: {fps} is not allowed: use a number >= 0.002 and <= 100" in line
    assert not (tmp_path / "g.gif").exists()


def test_the_slowest_fps_writes_a_gif(record_data, tmp_path, capsys):
    code, _ = _status([str(_write(tmp_path, record_data)), "--gif", str(tmp_path / "g.gif"), "--fps", "0.002"],
                      capsys)
    assert code == 0 and (tmp_path / "g.gif").read_bytes()[:6] == b"GIF89a"


def test_a_gif_that_fails_to_write_leaves_the_old_one_as_it_was(record_data, tmp_path, capsys, monkeypatch):
    """``--overwrite`` replaces a GIF only once the new one is whole: a writer that fails halfway
    (Pillow's, a full disk) left a broken file where the old GIF was."""
    from PIL import Image

    path = _write(tmp_path, record_data)
    assert _status([str(path), "--gif", str(tmp_path / "g.gif")], capsys)[0] == 0
    old = (tmp_path / "g.gif").read_bytes()

    def broken_save(self, fp, *args, **kwargs):
        open(fp, "wb").write(b"GIF89a half")
        raise OverflowError("int too big to convert")

    monkeypatch.setattr(Image.Image, "save", broken_save)
    with pytest.raises(OverflowError):
        main([str(path), "--gif", str(tmp_path / "g.gif"), "--overwrite"])
    assert (tmp_path / "g.gif").read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.gif", "game.json"]  # no temporary file left


def test_save_gif_checks_fps_itself(record_data, tmp_path):
    from tt_env.ui.records import GameRecord
    from tt_env.ui.replay import save_gif

    with pytest.raises(ValueError, match=r"fps=0.001 is not allowed: use 0.002 to 100"):
        save_gif(GameRecord.from_dict(record_data), tmp_path / "g.gif", fps=0.001)
    assert not (tmp_path / "g.gif").exists()


def test_gif_needs_a_gif_file_name(record_data, tmp_path, capsys):
    path = str(_write(tmp_path, record_data))
    code, line = _status([path, "--gif", str(tmp_path / "game.png")], capsys)
    assert code == 2 and "--gif" in line and "does not end in .gif" in line
    code, line = _status([path, "--gif", str(tmp_path)], capsys)
    assert code == 2 and "it is a folder" in line
    blocker = _write(tmp_path, "x", "notes.txt")
    code, line = _status([path, "--gif", str(blocker / "g.gif")], capsys)
    assert code == 2 and f"{blocker} is a file, not a folder" in line


def test_frames_need_a_folder(record_data, tmp_path, capsys):
    path = str(_write(tmp_path, record_data))
    blocker = _write(tmp_path, "x", "notes.txt")
    code, line = _status([path, "--frames", str(blocker)], capsys)
    assert code == 2 and f"--frames {blocker}: it is a file, not a folder" in line


def test_frames_are_replaced_only_with_overwrite_and_none_of_a_longer_game_is_left(record_data, tmp_path, capsys):
    path = str(_write(tmp_path, record_data))
    folder = tmp_path / "frames"
    folder.mkdir()
    (folder / "frame_99999.png").write_bytes(b"an earlier, longer game's")
    code, line = _status([path, "--frames", str(folder)], capsys)
    assert code == 2 and f"--frames {folder}: it already holds 1 frame_*.png file(s) (such as frame_99999.png): " \
                         f"give --overwrite to replace them, or another folder" in line
    assert (folder / "frame_99999.png").read_bytes() == b"an earlier, longer game's"
    assert _status([path, "--frames", str(folder), "--overwrite"], capsys)[0] == 0
    written = sorted(p.name for p in folder.glob("frame_*.png"))
    assert written[0] == "frame_00000.png" and "frame_99999.png" not in written


def test_a_gif_whose_frames_would_not_fit_in_memory_is_refused_before_any(record_data, tmp_path, capsys,
                                                                         monkeypatch):
    """Pillow holds every frame of a GIF until it writes it: a game too long for the memory bound is
    refused by name (--frames writes one picture at a time instead), and nothing is written."""
    import tt_env.ui.replay as replay

    pytest.importorskip("PIL")
    path, gif = str(_write(tmp_path, record_data)), tmp_path / "g.gif"
    frames_at_most = len(record_data["actions"]) + 2
    monkeypatch.setattr(replay, "MAX_GIF_BYTES", 454 * 1000 * frames_at_most - 1)  # a 2-player frame: 1000x454
    code, line = _status([path, "--gif", str(gif)], capsys)
    assert code == 2 and f"--gif {gif}: a GIF of this game holds up to {frames_at_most:,} frames of 1000x454 " \
                         "pixels in memory" in line and "use --frames DIR" in line
    assert not gif.exists()
    monkeypatch.setattr(replay, "MAX_GIF_BYTES", 454 * 1000 * frames_at_most)
    assert _status([path, "--gif", str(gif)], capsys)[0] == 0 and gif.stat().st_size > 0


@pytest.mark.parametrize("seat", ["2", "-1"])
def test_seat_must_be_a_seat_of_the_game(seat, record_data, tmp_path, capsys):
    code, line = _status([str(_write(tmp_path, record_data)), "--seat", seat], capsys)
    assert code == 2 and f"--seat {seat} is not a seat of this game: use 0..1" in line


def test_a_bad_record_writes_no_frames_and_shows_no_moves(record_data, tmp_path, capsys):
    pytest.importorskip("PIL")
    data = dict(record_data, final_scores=[0, 0])
    path = str(_write(tmp_path, data))
    assert _status([path, "--frames", str(tmp_path / "frames")], capsys)[0] == 1
    assert not (tmp_path / "frames").exists()
    assert _status([path], capsys)[0] == 1
    assert "discarded" not in capsys.readouterr().out


def test_the_library_views_check_the_end_of_the_record_too(record_data):
    """``print_replay`` and ``frames`` used to stop at the game's end without checking what followed."""
    from rich.console import Console

    console = Console(file=io.StringIO())
    extra = GameRecord.from_dict(dict(record_data, actions=record_data["actions"] + [0]))
    with pytest.raises(ValueError, match="already over"):
        print_replay(extra, console)
    wrong = GameRecord.from_dict(dict(record_data, final_scores=[999, 999]))
    with pytest.raises(ValueError, match="final_scores"):
        print_replay(wrong, console)
    pytest.importorskip("PIL")
    with pytest.raises(ValueError, match="already over"):
        list(frames(extra))


def test_module_exit_status_on_a_mismatched_record(record_data, tmp_path):
    data = dict(record_data, final_scores=[s + 1 for s in record_data["final_scores"]])
    result = subprocess.run([sys.executable, "-m", "tt_env.ui.replay", str(_write(tmp_path, data))],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "final_scores" in result.stderr


def test_good_records_still_save(record_data, tmp_path, capsys):
    pytest.importorskip("PIL")
    path = save_record(GameRecord.from_dict(record_data), tmp_path / "g.json")
    assert _status([str(path), "--gif", str(tmp_path / "out" / "g.gif")], capsys)[0] == 0
    assert (tmp_path / "out" / "g.gif").stat().st_size > 0


def test_an_existing_gif_is_kept_without_overwrite(record_data, tmp_path, capsys):
    """Nothing is replaced without --overwrite: refused by name before the record is read; with it, replaced."""
    pytest.importorskip("PIL")
    path, gif = str(_write(tmp_path, record_data)), tmp_path / "g.gif"
    gif.write_bytes(b"kept")
    assert _status([path, "--gif", str(gif)], capsys) == (
        2, f"python -m tt_env.ui.replay: error: --gif {gif}: the file exists: give --overwrite to replace it, "
           f"or another name")
    assert gif.read_bytes() == b"kept"
    assert _status([path, "--gif", str(gif), "--overwrite"], capsys)[0] == 0
    assert gif.read_bytes().startswith(b"GIF8")
