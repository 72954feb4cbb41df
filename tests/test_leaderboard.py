"""``python -m training.leaderboard`` checks everything before the first game and saves as it goes (issue 19)."""

from __future__ import annotations

import json

import pytest

from training import leaderboard

from test_checkpoint import save


@pytest.fixture
def no_games(monkeypatch):
    monkeypatch.setattr(leaderboard, "versus_reference", lambda *a, **k: pytest.fail("a cell was played"))


def refused(capsys, argv) -> str:
    with pytest.raises(SystemExit) as info:
        leaderboard.main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_a_damaged_checkpoint_listed_after_other_agents_is_refused_before_any_game(tmp_path, capsys, no_games):
    _, path = save(tmp_path)
    path.write_bytes(path.read_bytes()[:100])  # its sidecar is fine: only loading the weights shows it
    line = refused(capsys, ["--agents", "greedy-v0", "random-v0", str(path), "--players", "2", "--deals", "1"])
    assert "cannot rank the agents" in line and "corrupt or truncated" in line


@pytest.mark.parametrize("agents,message", [
    (["greedy-v0", "nobody-v9"], "unknown agent 'nobody-v9'"),
    (["greedy-v0", "missing.pt"], "does not exist"),
])
def test_unknown_agents_and_missing_checkpoints_are_refused_first(tmp_path, capsys, no_games, agents, message):
    assert message in refused(capsys, ["--agents", *agents, "--players", "2"])


def test_a_checkpoint_of_other_scoring_is_refused_before_any_game(tmp_path, capsys, no_games, monkeypatch):
    from tt_env.engine.rules import Rules

    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["rules"] = {**Rules().to_dict(), "aces": "high_or_low"}
    side.write_text(json.dumps(meta))
    assert "rule mismatch" in refused(capsys, ["--agents", "greedy-v0", str(path), "--players", "2"])


def test_deals_for_an_agent_not_ranked_and_no_cell_to_play_are_refused(tmp_path, capsys, no_games):
    assert "'ismcts-v0' is not one of the agents ranked" in refused(
        capsys, ["--agents", "greedy-v0", "--deals-for", "ismcts-v0", "3"])
    assert "no cell to play" in refused(capsys, ["--agents", "ppo-2p-v0", "--players", "3", "4"])
    assert "no cell to play" in refused(capsys, ["--agents", "expert-v0"])


def test_json_into_a_folder_that_does_not_exist_is_written(tmp_path):
    out = tmp_path / "new" / "deeper" / "lb.json"
    rows = leaderboard.main(["--agents", "random-v0", "--players", "2", "--deals", "1", "--json", str(out)])
    assert json.loads(out.read_text())["rows"] == json.loads(json.dumps(rows))


def test_each_finished_cell_is_saved_so_a_crash_loses_at_most_one(tmp_path, monkeypatch):
    out = tmp_path / "lb.json"
    real = leaderboard.versus_reference
    calls = []

    def crash_on_third(*args, **kwargs):
        calls.append(args[:2])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(leaderboard, "versus_reference", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        leaderboard.main(["--agents", "random-v0", "greedy-v0", "--players", "2", "3", "--deals", "1",
                          "--json", str(out)])
    saved = json.loads(out.read_text())
    assert [(r["agent"], r["players"]) for r in saved["rows"]] == [("random-v0", 2), ("greedy-v0", 2)]


def test_duplicate_agents_and_player_counts_are_played_once(monkeypatch):
    played = []
    monkeypatch.setattr(leaderboard, "versus_reference", lambda a, n, *rest: played.append((a, n)) or {
        "agent": a, "players": n, "score_diff": 0.0, "ci95": None, "win_rate": 0.5, "ms_per_move": 1.0,
        "seconds": 0.0})
    leaderboard.main(["--agents", "random-v0", "random-v0", "--players", "2", "2", "3"])
    assert played == [("random-v0", 2), ("random-v0", 3)]


def test_an_existing_json_is_kept_without_overwrite(tmp_path, capsys, monkeypatch):
    """A --json there before the run is replaced only with --overwrite (the run itself rewrites it per cell)."""
    out = tmp_path / "lb.json"
    out.write_text('{"rows": "kept"}')
    argv = ["--agents", "random-v0", "greedy-v0", "--players", "2", "--deals", "1", "--json", str(out)]
    with monkeypatch.context() as patched:
        patched.setattr(leaderboard, "versus_reference", lambda *a, **k: pytest.fail("a cell was played"))
        line = refused(capsys, argv)
    assert line == (f"python -m training.leaderboard: error: --json {out}: the file exists: "
                    f"give --overwrite to replace it, or another name")
    assert out.read_text() == '{"rows": "kept"}'
    rows = leaderboard.main([*argv, "--overwrite"])
    assert len(rows) == 2 and json.loads(out.read_text())["rows"] == json.loads(json.dumps(rows))


def test_the_workers_note_goes_to_stderr_as_evaluate_s_does(monkeypatch, capsys):
    """stdout holds the table (and may be piped); the note about more workers than cores is stderr's."""
    from tt_env import cli_checks

    monkeypatch.setattr(cli_checks, "available_cpus", lambda: 1)
    leaderboard.main(["--agents", "random-v0", "--players", "2", "--deals", "2", "--workers", "2"])
    out, err = capsys.readouterr()
    assert "is more than the 1 CPU core(s) here" in err and "CPU core" not in out
