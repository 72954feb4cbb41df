"""``python -m training.evaluate`` checks every argument and output path before the first game."""

from __future__ import annotations

import json
import os

import pytest

from tt_env import cli_checks
from training import evaluate as ev

FAST = ["greedy-v0", "random-v0", "--rounds", "1,2", "--quiet", "--seed", "3"]
needs_non_root = pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                                    reason="root may write anywhere: permission checks mean nothing")


@pytest.fixture
def no_games(monkeypatch):
    """Fail the test if a single game is started."""
    def refuse(*args, **kwargs):
        raise AssertionError("a game was played before the arguments were checked")

    monkeypatch.setattr(ev, "run_deals", refuse)


def _refused(argv: list[str], capsys) -> str:
    """The one-line error of a refused command line (exit status 2)."""
    with pytest.raises(SystemExit) as exit_info:
        ev.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m training.evaluate: error: "), err  # no usage block
    return lines[0]


@pytest.mark.parametrize("extra, message", [
    (["--games", "0"], "argument --games: 0 is not allowed: use an integer >= 1"),
    (["--games", "-5"], "argument --games: -5 is not allowed: use an integer >= 1"),
    (["--workers", "0"], "argument --workers: 0 is not allowed: use an integer >= 1"),
    (["--seed", "-1"], "argument --seed: -1 is not allowed: use a seed, an integer >= 0"),
    (["--seed", "x"], "argument --seed: 'x' is not an integer"),
    (["--max-turns-per-round", "0"], "argument --max-turns-per-round: 0 is not allowed: use an integer >= 1"),
    (["--decks", "0"], "argument --decks: '0' is not allowed: use 'auto' or a number of decks from 1 to 64"),
    (["--decks", "many"], "argument --decks: 'many' is not allowed"),
    (["--rounds", "0"], "argument --rounds: '0' is not allowed: write rounds 1..11"),
    (["--rounds", "9-12"], "argument --rounds: '9-12' is not allowed: write rounds 1..11"),
    (["--rounds", "3,1"], "strictly increasing"),
    (["--aces", "sometimes"], "argument --aces: invalid choice: 'sometimes'"),
    (["--append-games"], "--append-games goes with --save-games DIR"),
])
def test_bad_numbers_are_refused_in_one_line(extra, message, capsys, no_games):
    assert message in _refused(FAST + extra, capsys)


def test_unknown_agents_and_missing_checkpoints_are_reported_before_any_game(tmp_path, capsys, monkeypatch):
    played = []
    real_play_deal = ev.run_deals.__globals__["play_deal"]
    monkeypatch.setitem(ev.run_deals.__globals__, "play_deal", lambda *a: played.append(a) or real_play_deal(*a))
    assert "unknown agent 'nobody-v3'" in _refused(["greedy-v0", "nobody-v3", "--quiet"], capsys)
    missing = tmp_path / "gone.pt"
    assert f"checkpoint {str(missing)!r} does not exist" in _refused(["greedy-v0", str(missing), "--quiet"], capsys)
    assert played == []


def test_plot_into_an_existing_folder_is_refused_and_writes_no_png_beside_it(tmp_path, capsys, no_games):
    folder = tmp_path / "plots"
    folder.mkdir()
    line = _refused(FAST + ["--plot", str(folder)], capsys)
    assert f"--plot {folder}: it is a folder: give a file name, such as {folder}/out.png" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plots"]  # no plots.png


def test_plot_needs_a_picture_suffix(tmp_path, capsys, no_games):
    assert "does not end in .png or .svg or .pdf" in _refused(FAST + ["--plot", str(tmp_path / "scores")], capsys)


def test_json_into_a_folder_or_below_a_file_is_refused(tmp_path, capsys, no_games):
    assert f"--json {tmp_path}: it is a folder" in _refused(FAST + ["--json", str(tmp_path)], capsys)
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    target = blocker / "out" / "r.json"
    assert f"--json {target}: {blocker} is a file, not a folder" in _refused(FAST + ["--json", str(target)], capsys)
    assert not (blocker.parent / "out").exists()


def test_json_and_plot_cannot_share_a_file(tmp_path, capsys, no_games):
    path = str(tmp_path / "x.png")
    assert "--json and --plot both name" in _refused(FAST + ["--json", path, "--plot", path], capsys)


@needs_non_root
def test_an_unwritable_json_folder_is_refused(tmp_path, capsys, no_games):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert f"no permission to write in {locked}" in _refused(FAST + ["--json", str(locked / "r.json")], capsys)
    finally:
        locked.chmod(0o755)


def test_save_games_below_a_file_is_refused(tmp_path, capsys, no_games):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    line = _refused(FAST + ["--save-games", str(blocker)], capsys)
    assert f"--save-games {blocker}: it is a file, not a folder" in line
    line = _refused(FAST + ["--save-games", str(blocker / "games")], capsys)
    assert f"{blocker} is a file, not a folder" in line


def test_a_report_that_a_saved_game_would_replace_is_refused(tmp_path, capsys, no_games):
    """``--json`` named as one of the run's own records: the report was written,
    then replaced by that game's record without a word. Names the run does not write are fine."""
    games = tmp_path / "games"
    for flag, name in (("--json", "seed3-deal00000-rot1.json"), ("--json", "seed3-deal00000-rot0.json")):
        line = _refused(FAST + ["--save-games", str(games), flag, str(games / name)], capsys)
        assert line.endswith(f"{flag} {games / name}: --save-games {games} writes a game record of that name: "
                             f"give another file name")
    assert not games.exists()
    for name in ("seed0-deal00000-rot2.json", "seed1-deal00000-rot0.json", "seed0-deal0000-rot0.json", "report.json"):
        assert not ev.is_record_of_run(str(games / name), str(games), 2, 1, 0), name  # (2 agents, 1 deal, seed 0)
    assert ev.is_record_of_run(str(games / "seed0-deal00000-rot1.json"), str(games), 2, 1, 0)
    assert not ev.is_record_of_run(str(tmp_path / "seed0-deal00000-rot1.json"), str(games), 2, 1, 0)
    assert not ev.is_record_of_run(str(games / "seed0-deal00001-rot0.json"), str(games), 2, 1, 0)


def test_a_report_never_replaces_an_earlier_runs_record_even_with_overwrite(tmp_path, capsys, no_games):
    """With ``--append-games`` the folder keeps earlier runs' records; ``--json`` naming one of them
    (another seed's, so not this run's) replaced it with the report under ``--overwrite``."""
    games = tmp_path / "games"
    games.mkdir()
    record = games / "seed0-deal00000-rot0.json"
    record.write_text('{"a record": true}')
    line = _refused(FAST + ["--save-games", str(games), "--append-games", "--json", str(record), "--overwrite"],
                    capsys)
    assert line.endswith(f"--json {record}: it is a game record that --save-games {games} keeps (of an earlier "
                         f"run): give another file name; --overwrite never replaces a record")
    assert record.read_text() == '{"a record": true}'
    assert not ev.is_kept_record(str(games / "report.json"), str(games))
    assert not ev.is_kept_record(str(games / "seed0-deal00000-rot1.json"), str(games))  # no such file


def test_save_games_refuses_a_folder_with_records_unless_appending(tmp_path, capsys):
    games = tmp_path / "games"
    ev.main(FAST + ["--games", "2", "--save-games", str(games)])
    first = sorted(p.name for p in games.glob("*.json"))
    assert first == [f"seed3-deal{d:05d}-rot{r}.json" for d in range(2) for r in range(2)]
    capsys.readouterr()
    line = _refused(FAST + ["--games", "2", "--seed", "4", "--save-games", str(games)], capsys)
    assert f"--save-games {games} already holds 4 .json file(s)" in line and "give --append-games" in line
    # the same seed again would overwrite: refused even with --append-games
    line = _refused(FAST + ["--games", "3", "--save-games", str(games), "--append-games"], capsys)
    assert "already holds seed3-deal00000-rot0.json and 3 more record(s) that this run would overwrite" in line
    assert sorted(p.name for p in games.glob("*.json")) == first
    ev.main(FAST + ["--games", "2", "--seed", "4", "--save-games", str(games), "--append-games"])
    assert len(list(games.glob("*.json"))) == 8 and "saved 4 game records" in capsys.readouterr().out


def test_more_workers_than_cores_are_allowed_with_a_note(monkeypatch, capsys):
    monkeypatch.setattr(cli_checks, "available_cpus", lambda: 1)
    report = ev.main(FAST + ["--games", "2", "--workers", "2"])
    assert report["games"] == 2
    assert "note: --workers 2 is more than the 1 CPU core(s) here" in capsys.readouterr().err


def test_json_and_plot_go_into_folders_created_after_the_games(tmp_path):
    out, png = tmp_path / "new" / "r.json", tmp_path / "pics" / "s.png"
    ev.main(FAST + ["--games", "2", "--json", str(out), "--plot", str(png)])
    assert json.loads(out.read_text())["games"] == 2 and png.stat().st_size > 1000


def test_a_folder_without_write_permission_is_refused_even_as_root(tmp_path, capsys, monkeypatch, no_games):
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(cli_checks.os, "access",
                        lambda path, mode: False if os.fspath(path) == str(locked) else real_access(path, mode))
    line = _refused(FAST + ["--save-games", str(locked / "games")], capsys)
    assert f"--save-games {locked / 'games'}: no permission to write in {locked}" in line


@pytest.mark.parametrize("flag, name", [("--json", "r.json"), ("--plot", "s.png")])
def test_an_existing_output_file_is_kept_without_overwrite(flag, name, tmp_path, capsys, monkeypatch):
    """Nothing is replaced without --overwrite: refused by name before any game; with it, replaced."""
    target = tmp_path / name
    target.write_bytes(b"kept")
    with monkeypatch.context() as patched:
        patched.setattr(ev, "run_deals", lambda *a, **k: pytest.fail("a game was played before the check"))
        line = _refused(FAST + ["--games", "1", flag, str(target)], capsys)
    assert line == (f"python -m training.evaluate: error: {flag} {target}: the file exists: "
                    f"give --overwrite to replace it, or another name")
    assert target.read_bytes() == b"kept"
    ev.main(FAST + ["--games", "1", flag, str(target), "--overwrite"])
    assert target.read_bytes() != b"kept"
    if flag == "--json":
        assert json.loads(target.read_text())["games"] == 1
