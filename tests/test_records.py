"""Game records: save, load, replay to the same scores, and the documented errors for bad records."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tt_env import three_thirteen_v0
from tt_env.agents import RandomAgent
from tt_env.engine import Rules
from tt_env.engine import game
from tt_env.ui.records import (FORMAT_VERSION, GameRecord, GameRecorder, load_record, record_from_game, replay,
                            replay_final, save_record)


def play_recorded(seed: int = 3, num_players: int = 2, rounds=(1, 2, 3), max_turns: int = 200) -> GameRecorder:
    """A game of random agents through the wrapped AEC env, recorded."""
    env = three_thirteen_v0.env(num_players=num_players, rounds=rounds, max_turns_per_round=max_turns)
    recorder = GameRecorder(env, ["random-v0"] * num_players)
    recorder.reset(seed)
    agent, rng = RandomAgent(), np.random.default_rng(seed)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        recorder.step(None if term or trunc else agent.act(obs["observation"], obs["action_mask"], rng))
    return recorder


@pytest.fixture(scope="module")
def recorded() -> GameRecorder:
    return play_recorded()


def test_saved_record_replays_to_the_same_final_scores(recorded, tmp_path):
    record = recorded.to_record()
    assert record.final_scores is not None and len(record.actions) > 10
    path = save_record(record, tmp_path / "game.json")
    loaded = load_record(path)
    assert loaded == record
    env = replay_final(loaded)
    assert env.game_state.game_over and env.game_state.scores == list(record.final_scores)
    steps = [i for i, _ in replay(loaded)]
    assert steps == list(range(len(record.actions) + 1))


def test_record_file_is_small_json_with_the_documented_keys(recorded, tmp_path):
    path = save_record(recorded.to_record(), tmp_path / "game.json")
    data = json.loads(path.read_text())
    for key in ("format_version", "rules", "reward_mode", "seed", "seats", "actions", "final_scores"):
        assert key in data
    assert data["format_version"] == FORMAT_VERSION and data["seed"] == 3
    assert path.stat().st_size < 4000


@pytest.mark.parametrize("num_players", [3, 5])
def test_replay_matches_for_more_players_and_several_decks(num_players):
    recorder = play_recorded(seed=11, num_players=num_players, rounds=(1, 11))
    record = recorder.to_record()
    assert replay_final(record).game_state.scores == list(record.final_scores)


def test_record_from_an_engine_loop_with_a_generator_state():
    rules = Rules(rounds=(2, 3))
    rng = np.random.default_rng(np.random.SeedSequence(99).spawn(2)[1])  # no int seed reproduces it
    start = rng.bit_generator.state
    state = game.new_game(rules, rng)
    actions, pick = [], np.random.default_rng(0)
    while not state.game_over:
        action = int(pick.choice(game.legal_actions(state)))
        game.apply(state, action)
        actions.append(action)
    record = record_from_game(rules, None, ["random-v0", "random-v0"], actions, state.scores, rng_state=start)
    round_trip = GameRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert replay_final(round_trip).game_state.scores == state.scores


def test_record_of_a_duplicate_game_with_a_separate_reshuffle_stream():
    """The evaluator's scheme: deals from SeedSequence([s, d, 0]), reshuffles from [s, d, 1]."""
    rules = Rules(rounds=(11,), max_turns_per_round=120)
    deal_rng, shuffle_rng = np.random.default_rng([4, 2, 0]), np.random.default_rng([4, 2, 1])
    state = game.new_game(rules, deal_rng)
    actions, pick, reshuffles = [], np.random.default_rng(1), 0
    while not state.game_over:  # always from the stock, so that it runs out
        legal = game.legal_actions(state)
        action = game.DRAW_STOCK if game.DRAW_STOCK in legal else int(pick.choice(legal))
        if action == game.DRAW_STOCK and not state.stock:
            state.rng = shuffle_rng
            reshuffles += game.apply(state, action).reshuffled
            state.rng = deal_rng
        else:
            game.apply(state, action)
        actions.append(action)
    assert reshuffles > 0
    record = record_from_game(rules, [4, 2, 0], ["a", "b"], actions, state.scores, reshuffle_seed=[4, 2, 1])
    loaded = GameRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert loaded.seed == (4, 2, 0) and replay_final(loaded).game_state.scores == state.scores
    without = record_from_game(rules, [4, 2, 0], ["a", "b"], actions)  # the stream is needed
    with pytest.raises(ValueError, match="step"):
        replay_final(without)


def test_unfinished_game_replays_up_to_its_last_action(recorded):
    record = recorded.to_record()
    partial = record_from_game(record.rules, record.seed, record.seats, record.actions[:7])
    env = replay_final(partial)
    assert not env.game_state.game_over and partial.final_scores is None


def _data(recorded) -> dict:
    return recorded.to_record().to_dict()


def test_another_format_version_is_refused(recorded, tmp_path):
    data = _data(recorded)
    data["format_version"] = FORMAT_VERSION + 1
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=f"format_version {FORMAT_VERSION + 1}.*reads format_version {FORMAT_VERSION}"):
        load_record(path)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("actions"), r"missing the key\(s\) \['actions'\]"),
    (lambda d: d.pop("seed"), r"missing the key\(s\) \['seed'\]"),
    (lambda d: d.update(seats=["a"]), "list of 2 agent names"),
    (lambda d: d.update(actions=[0, 99]), "action ids 0..53"),
    (lambda d: d.update(rules={"num_players": 2, "jokers": True}), "unknown rule option"),
    (lambda d: d.update(seed=-1), "non-negative integer"),
    (lambda d: d.update(seed=[1, "x"]), "non-negative integer or a list"),
    (lambda d: d.update(reshuffle_seed=2.5), "reshuffle_seed 2.5"),
    (lambda d: d.update(reward_mode="money"), "reward_mode 'money'"),
    (lambda d: d.update(colour="blue"), r"unknown key\(s\) \['colour'\]"),
    (lambda d: d.update(format="chess-game"), "not 'three-thirteen-game'"),
    (lambda d: d.update(seed="7"), r"has seed '7': use a non-negative integer"),  # (a string, quoted as one)
    (lambda d: d.update(final_scores=[True, 0]), r"has final_scores '\[True, 0\]': use a list of 2 integers >= 0"),
    (lambda d: d.update(final_scores=[-1, 0]), r"has final_scores '\[-1, 0\]': use a list of 2 integers >= 0"),
    (lambda d: d.update(format_version=True), r"has format_version True; this version of tt_env reads"),
    (lambda d: d.update(format_version=1.0), r"has format_version 1\.0; this version of tt_env reads"),
    (lambda d: d.update(seed=None, rng_state={"bit_generator": "PCG64"}),
     r"^the record: the record's rng_state is not a state of numpy's default generator \(no key 'state'\): use "),
    (lambda d: d.update(seed=None, rng_state={"bit_generator": "PCG64", "state": {"state": "x", "inc": 1},
                                              "has_uint32": 0, "uinteger": 0}),
     r"^the record: the record's rng_state is not a state of numpy's default generator \(.+\): use the object "
     r"np\.random\.default_rng\(seed\)\.bit_generator\.state gives"),
])
def test_malformed_records_name_the_problem(recorded, change, message):
    data = _data(recorded)
    change(data)
    with pytest.raises(ValueError, match=message):
        GameRecord.from_dict(data)


@pytest.mark.parametrize("key", ["seats", "format", "reward_mode", "format_version"])
def test_a_huge_value_is_quoted_short(recorded, key):
    """A record's bad value is named, not repeated whole (a hostile file's megabyte field)."""
    data = _data(recorded)
    data[key] = ["z" * 200_000] if key == "seats" else "z" * 200_000
    with pytest.raises(ValueError) as error:
        GameRecord.from_dict(data)
    assert len(str(error.value)) < 500 and "characters)" in str(error.value)


def test_an_illegal_action_names_its_step(recorded):
    data = _data(recorded)
    first_discard = next(i for i, a in enumerate(data["actions"]) if a >= game.DISCARD_BASE)
    state_hand = set(game.new_game(Rules.from_dict(data["rules"]), np.random.default_rng(3)).hands[0])
    not_held = next(c for c in range(52) if c not in state_hand and c + 2 != data["actions"][first_discard])
    data["actions"][first_discard] = game.DISCARD_BASE + not_held
    data.pop("final_scores")
    with pytest.raises(ValueError, match=rf"step {first_discard + 1} of \d+: action {not_held + 2} .* is illegal"):
        replay_final(data)


def test_actions_after_the_end_and_wrong_final_scores_are_reported(recorded):
    data = _data(recorded)
    data["actions"].append(0)
    with pytest.raises(ValueError, match=rf"step {len(data['actions'])} of .*already over"):
        replay_final(data)
    data = _data(recorded)
    data["final_scores"] = [s + 1 for s in data["final_scores"]]
    with pytest.raises(ValueError, match="final_scores"):
        replay_final(data)


def test_not_json_and_missing_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_record(bad)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_record(tmp_path / "nowhere.json")
    with pytest.raises(ValueError, match="expected a JSON object"):
        GameRecord.from_dict([1, 2])


def test_recorder_checks_seats_and_needs_a_reset():
    env = three_thirteen_v0.env()
    with pytest.raises(ValueError, match="names 1 agents"):
        GameRecorder(env, ["x"])
    recorder = GameRecorder(env, ["a", "b"])
    with pytest.raises(ValueError, match="reset"):
        recorder.step(0)
    recorder.reset()  # a fresh seed is drawn so that the game stays replayable
    assert isinstance(recorder.seed, int)


def test_replay_cli_prints_the_game_and_reports_bad_records(recorded, tmp_path, capsys):
    pytest.importorskip("rich")
    from tt_env.ui.replay import main

    path = save_record(recorded.to_record(), tmp_path / "game.json")
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "End of round 3" in out and "Game over" in out and "discarded" in out
    data = _data(recorded)
    data["actions"][0] = 40  # a discard while the first player must draw
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main([str(bad)]) == 1  # 1: the record does not replay
    assert "step 1 of" in capsys.readouterr().err
    data["format_version"] = 7
    bad.write_text(json.dumps(data))
    assert main([str(bad)]) == 1
    assert "format_version 7" in capsys.readouterr().err


def test_replay_cli_step_mode_stops_on_q(recorded, capsys):
    pytest.importorskip("rich")
    from rich.console import Console

    from tt_env.ui.replay import print_replay

    console = Console(width=120, color_system=None)
    answers = iter(["", "", "q"])
    print_replay(recorded.to_record(), console, step=True, input_fn=lambda prompt: next(answers))
    out = capsys.readouterr().out
    assert out.count("Enter: next move") == 3 and "    2  player_" in out and "    3  player_" not in out


def test_replay_renders_frames_and_a_gif(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    from tt_env.ui.replay import main

    recorder = play_recorded(seed=5, rounds=(1,), max_turns=12)
    record = recorder.to_record()
    path = save_record(record, tmp_path / "short.json")
    assert main([str(path), "--frames", str(tmp_path / "frames"), "--seat", "1", "--private"]) == 0
    pngs = sorted((tmp_path / "frames").glob("frame_*.png"))
    assert len(pngs) == len(record.actions) + 1  # every position, with the round's end in place of the last
    assert main([str(path), "--gif", str(tmp_path / "game.gif")]) == 0
    with Image.open(tmp_path / "game.gif") as gif:
        assert gif.n_frames == len(pngs) and gif.size == Image.open(pngs[0]).size
    with pytest.raises(SystemExit) as exit_info:  # 2: a bad command line
        main([str(path), "--gif", str(tmp_path / "x.gif"), "--seat", "9"])
    assert exit_info.value.code == 2 and not (tmp_path / "x.gif").exists()


def test_a_failed_save_leaves_nothing_behind(recorded, tmp_path):
    target = tmp_path / "taken"
    target.mkdir()  # a folder where the file should go: os.replace fails after the temporary is written
    with pytest.raises(OSError):
        save_record(recorded.to_record(), target)
    assert [p.name for p in tmp_path.iterdir()] == ["taken"] and list(target.iterdir()) == []
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    with pytest.raises(OSError):
        save_record(recorded.to_record(), blocker / "game.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "taken"]


def test_a_write_that_fails_midway_keeps_the_old_file(recorded, tmp_path, monkeypatch):
    """A full disk while writing: the record already there stays whole, no temporary is left."""
    import errno
    from pathlib import Path

    path = save_record(recorded.to_record(), tmp_path / "game.json")
    before = path.read_text()

    def half_then_full(self, text, encoding=None):
        with open(self, "w", encoding=encoding) as f:
            f.write(text[: len(text) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_full)
    with pytest.raises(OSError, match="No space left"):
        save_record(recorded.to_record(), path)
    monkeypatch.undo()
    assert path.read_text() == before and [p.name for p in tmp_path.iterdir()] == ["game.json"]


def test_a_record_is_replayed_from_its_path_and_a_game_keeps_its_seat_names(recorded, tmp_path):
    """``replay`` and ``replay_final`` take a file's path (a str or a Path) as well as a record, and
    ``record_from_game`` keeps the seats' names as given."""
    from tt_env.ui.records import replay_final

    path = recorded.save(tmp_path / "g.json")
    want = replay_final(recorded.to_record()).game_state.scores
    assert replay_final(str(path)).game_state.scores == want == replay_final(path).game_state.scores
    record = recorded.to_record()
    again = record_from_game(record.rules, record.seed, ["me", "you"], record.actions, record.final_scores)
    assert again.seats == ("me", "you")
