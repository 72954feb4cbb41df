"""Shipping a trained checkpoint under an agent's name (training/ship.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from models.checkpoint import read_metadata
from tt_env.agents import make_agent
from tt_env.engine.rules import Rules
from training import ship
from training.evaluate import evaluate

from test_checkpoint import save as save_cardnet
from test_models import sample_positions

FAST = (1, 2)
"""Rounds of the evaluations here: what ship records does not depend on the rules played."""


def save(tmp_path, name="net", num_players=2, network="mlp", **kwargs):
    """A small checkpoint (an MLP unless asked: quick to evaluate)."""
    if network == "mlp" and not kwargs:
        kwargs = {"hidden_sizes": [16]}
    return save_cardnet(tmp_path, name=name, num_players=num_players, network=network, **kwargs)


def quick_evaluate(specs, games, seed):
    return evaluate(specs, games=games, seed=seed, rules=Rules(num_players=len(specs), rounds=FAST))


def test_ship_records_the_evaluations_and_loads_as_the_same_agent(tmp_path):
    _, path = save(tmp_path / "run" / "checkpoints", name="final", num_players=3)
    (tmp_path / "run" / "learning_curve.png").write_bytes(b"png")
    report, _ = quick_evaluate([str(path), "greedy-v0", "random-v0"], games=2, seed=3)
    report_path = tmp_path / "eval.json"
    report_path.write_text(json.dumps(report))
    out = tmp_path / "shipped"
    shipped = ship.main([str(path), "ppo-3p-test-v0", "--evaluation", str(report_path), "--wall-time", "1m",
                         "--out-dir", str(out), "--algorithm", "PPO (training/selfplay.py)",
                         "--inputs", "the observation and the meld solver's penalties"])
    meta = read_metadata(shipped)
    results = meta["evaluation"]["results"]
    assert [r["opponent"] for r in results] == ["greedy-v0", "random-v0"]
    pair = {p["b"]: p for p in report["pairwise"] if p["a"] == report["agents"][0]["name"]}
    assert results[0]["score_diff"] == pair["greedy-v0"]["mean_score_diff"] and results[0]["players"] == 3
    assert meta["extra"]["training_wall_time"] == "1m" and meta["training_steps"] == 123
    assert meta["extra"]["algorithm"] == "PPO (training/selfplay.py)"
    assert meta["extra"]["inputs"] == "the observation and the meld solver's penalties"
    assert (out / "ppo-3p-test-v0.learning_curve.png").read_bytes() == b"png"
    rules = Rules(num_players=3)
    a, b = make_agent(str(path), rules), make_agent(str(shipped), rules)
    obs, masks = sample_positions(3, 20)
    rng = np.random.default_rng(0)
    assert [a.act(o, m, rng) for o, m in zip(obs, masks, strict=True)] == [b.act(o, m, rng) for o, m in zip(obs, masks, strict=True)]


def test_ship_refuses_what_is_not_an_evaluation_report(tmp_path, capsys):
    _, path = save(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(SystemExit) as exc:
        ship.main([str(path), "x-v0", "--evaluation", str(bad), "--wall-time", "1m", "--out-dir", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert "is not a report of python -m training.evaluate --json" in capsys.readouterr().err


# ---------------------------------------------------------------- issue 19: names, overwrite, reports, win rate
def _report(tmp_path, path, *opponents, games=2):
    report, _ = quick_evaluate([str(path), *opponents], games=games, seed=3)
    report_path = tmp_path / f"eval_{len(list(tmp_path.glob('eval_*.json')))}.json"
    report_path.write_text(json.dumps(report))
    return report, report_path


def _ship(path, name, out, *extra):
    return ship.main([str(path), name, "--wall-time", "1m", "--out-dir", str(out), *extra])


def _refused(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as exc:
        ship.main(list(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    return err.strip()


@pytest.mark.parametrize("name", ["../../x-v0", "/tmp/abs-v0", "a/b-v0", "a\\b-v0", "PPO-2p-v1", "ppo-2p", "ppo_2p-v1",
                                  "ppo--2p-v1", "ppo-2p-v1.pt", "", "ppo-2p-v1 ", "x" * 70 + "-v0", ".", ".."])
def test_names_that_are_not_agent_names_are_refused_and_nothing_is_written(tmp_path, capsys, name):
    _, path = save(tmp_path / "src")
    out = tmp_path / "sub" / "out"
    before = sorted(p for p in tmp_path.rglob("*"))
    err = _refused(capsys, str(path), name, "--wall-time", "1m", "--out-dir", str(out))
    assert "is not allowed: use lower-case letters and digits" in err
    assert sorted(p for p in tmp_path.rglob("*")) == before


def test_check_name_refuses_what_is_not_name_dash_version():
    for name in ("-v1", "v1", "ppo-v", "ppo-2p-v1-", "ppo-2p-V1", "ppo-2p-v1\n", "ppo 2p-v1", None):
        with pytest.raises(ship.ShipError, match="is not allowed"):
            ship.check_name(name)
    assert ship.check_name("ppo-2p-v1") == "ppo-2p-v1"


@pytest.mark.parametrize("name", ["greedy-v0", "random-v0", "expert-v0", "ismcts-v0"])
def test_the_name_of_an_agent_that_is_not_a_checkpoint_is_refused(tmp_path, capsys, name):
    """A checkpoint shipped as ``greedy-v0`` could never be loaded by name: that name builds greedy-v0."""
    _, path = save(tmp_path / "src")
    err = _refused(capsys, str(path), name, "--wall-time", "1m", "--out-dir", str(tmp_path / "out"))
    assert f"agent name {name!r} is taken by an agent that is not a checkpoint" in err
    assert not (tmp_path / "out").exists()


def test_good_names_are_written_inside_out_dir_only(tmp_path):
    _, path = save(tmp_path / "src")
    out = tmp_path / "out"
    for name in ("ppo-2p-v1", "x-v0", "cardnet-exact-last-turn-2p-v12"):
        assert _ship(path, name, out) == out / f"{name}.pt"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]


def test_a_symlink_planted_as_the_target_is_refused(tmp_path, capsys):
    _, path = save(tmp_path / "src")
    out = tmp_path / "out"
    out.mkdir()
    (out / "evil-v0.pt").symlink_to(tmp_path / "elsewhere.pt")
    assert "would be written outside --out-dir" in _refused(capsys, str(path), "evil-v0", "--wall-time", "1m",
                                                             "--out-dir", str(out))
    assert not (tmp_path / "elsewhere.pt").exists()


def test_a_shipped_agent_is_replaced_only_with_overwrite(tmp_path, capsys):
    _, first = save(tmp_path / "a", name="final", network="cardnet", channels=8, hidden=16)
    (tmp_path / "learning_curve.png").write_bytes(b"old curve")
    out = tmp_path / "out"
    _ship(first, "ppo-2p-v9", out)
    assert (out / "ppo-2p-v9.learning_curve.png").read_bytes() == b"old curve"
    sidecar = (out / "ppo-2p-v9.json").read_text()
    _, second = save(tmp_path / "b" / "c", name="final", network="mlp", hidden_sizes=[8])
    err = _refused(capsys, str(second), "ppo-2p-v9", "--wall-time", "2m", "--out-dir", str(out))
    assert "already shipped as 'ppo-2p-v9'" in err and "--overwrite" in err
    assert (out / "ppo-2p-v9.json").read_text() == sidecar
    _ship(second, "ppo-2p-v9", out, "--overwrite")
    meta = read_metadata(out / "ppo-2p-v9.pt")
    assert meta["network"]["class"] == "MLPPolicy"
    assert meta["extra"]["source_checkpoint"] == str(second)
    assert not (out / "ppo-2p-v9.learning_curve.png").exists(), "the replaced agent's curve was left behind"


@pytest.mark.parametrize("content,message", [
    ("[1, 2]", "holds a JSON list, not an object"),
    ('{"format": "three-thirteen-evaluation/1", "agents": []}', "'agents' must list two or more agents"),
    ('{"format": "three-thirteen-evaluation/1"}', "'agents' must list two or more agents"),
    ('{"format": "three-thirteen-evaluation/1", "agents": [1, 2]}', "agents[0] is not an agent's summary"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ("{not json", "is not valid JSON"),
    ("", "is not valid JSON"),
    ('"just a string"', "holds a JSON str, not an object"),
])
def test_reports_that_are_not_evaluations_are_refused_in_one_line(tmp_path, capsys, content, message):
    _, path = save(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    err = _refused(capsys, str(path), "x-v0", "--evaluation", str(bad), "--wall-time", "1m",
                   "--out-dir", str(tmp_path / "o"))
    assert message in err
    assert not (tmp_path / "o").exists()


def test_malformed_parts_of_a_report_are_named(tmp_path, capsys):
    _, path = save(tmp_path)
    report, _ = _report(tmp_path, path, "greedy-v0")
    cases = {"pairwise[0] is not a pair": lambda r: r["pairwise"][0].update(b="nobody"),
             "'pairwise' must be a list": lambda r: r.update(pairwise={"a": 1}),
             "'rules' must hold the game's rules": lambda r: r.update(rules=[]),
             "'games' must be an integer >= 1": lambda r: r.update(games=0),
             "'games_played' must be an integer >= 1": lambda r: r.update(games_played=True),
             "'seed' must be an integer >= 0": lambda r: r.update(seed="0"),
             "agents[1] is not an agent's summary": lambda r: r["agents"][1].pop("win_rate"),
             "agents[0] is not an agent's summary (name": lambda r: r["agents"][0].update(win_rate_ci95=[0.1]),
             "agents[1] is not an agent's summary (": lambda r: r["agents"][1].update(win_rate_ci95=["a", "b"]),
             "pairwise[1] is not a pair": lambda r: r["pairwise"][1].update(ci95="wide"),
             "pairwise[0] is not a pair of its agents": lambda r: r["pairwise"][0].update(mean_score_diff="1"),
             "no pair has the first agent": lambda r: r.update(pairwise=[p for p in r["pairwise"]
                                                                         if p["a"] != r["agents"][0]["name"]])}
    for message, damage in cases.items():
        tampered = json.loads(json.dumps(report))
        damage(tampered)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(tampered))
        err = _refused(capsys, str(path), "x-v0", "--evaluation", str(bad), "--wall-time", "1m",
                       "--out-dir", str(tmp_path / "o"))
        assert message in err and err.startswith(f"python -m training.ship: error: {bad}: "), (message, err)
    seed0 = json.loads(json.dumps(report))
    seed0["seed"] = 0
    (tmp_path / "seed0.json").write_text(json.dumps(seed0))
    _ship(path, "x-v0", tmp_path / "o", "--evaluation", str(tmp_path / "seed0.json"))


def test_a_report_of_another_format_names_its_format(tmp_path, capsys):
    _, path = save(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "three-thirteen-leaderboard/1"}))
    assert ("(its format is 'three-thirteen-leaderboard/1', not 'three-thirteen-evaluation/1')"
            in _refused(capsys, str(path), "x-v0", "--evaluation", str(bad), "--wall-time", "1m"))


def test_every_result_recorded_is_the_reports_in_any_pair_order(tmp_path):
    _, path = save(tmp_path, num_players=3)
    report, _ = _report(tmp_path, path, "greedy-v0", "random-v0", games=2)
    report["pairwise"].reverse()  # the shipped agent's pairs last
    reordered = tmp_path / "reordered.json"
    reordered.write_text(json.dumps(report))
    meta = read_metadata(_ship(path, "x-v0", tmp_path / "out", "--evaluation", str(reordered)))
    first = report["agents"][0]
    pairs = {p["b"]: p for p in report["pairwise"] if p["a"] == first["name"]}
    expected = [{"opponent": name, "players": 3, "games": 2, "games_played": 12, "seed": 3,  # 2 deals x 3! orders
                 "score_diff": pairs[name]["mean_score_diff"], "ci95": pairs[name]["ci95"],
                 "win_rate": first["win_rate"], "win_rate_ci95": first["win_rate_ci95"],
                 "rules": report["rules"]}  # (rounds FAST: a variant, named)
                for name in ("random-v0", "greedy-v0")]
    assert meta["evaluation"] == {"format": ship.SUMMARY_FORMAT, "agent": "x-v0 (argmax)", "results": expected}


def test_a_report_whose_first_agent_is_another_shipped_agent_is_refused(tmp_path, capsys):
    _, path = save(tmp_path)
    report, _ = _report(tmp_path, "ppo-2p-v0", "greedy-v0")
    bad = tmp_path / "shipped_first.json"
    bad.write_text(json.dumps(report))
    assert (f"its first agent 'ppo-2p-v0' has other weights than {path}" in
            _refused(capsys, str(path), "x-v0", "--evaluation", str(bad), "--wall-time", "1m",
                     "--out-dir", str(tmp_path / "o")))


def test_the_library_call_refuses_an_existing_agent_by_default(tmp_path):
    _, path = save(tmp_path)
    ship.ship(str(path), "x-v0", [], "1m", tmp_path / "out")
    with pytest.raises(ship.ShipError, match="already shipped"):
        ship.ship(str(path), "x-v0", [], "1m", tmp_path / "out")


def test_a_report_of_another_agent_or_player_count_is_refused(tmp_path, capsys):
    _, path = save(tmp_path / "mine", name="final")
    _, other = save(tmp_path / "other", name="final", network="mlp", hidden_sizes=[8])
    _, of_other = _report(tmp_path, other, "greedy-v0")
    _, second = _report(tmp_path, "greedy-v0", str(path))
    _, path3 = save(tmp_path / "three", name="final", num_players=3)
    _, three = _report(tmp_path, path3, "greedy-v0", "random-v0")
    base = [str(path), "x-v0", "--wall-time", "1m", "--out-dir", str(tmp_path / "o"), "--evaluation"]
    assert "has other weights than" in _refused(capsys, *base, str(of_other))
    assert "its first agent is 'greedy-v0', not the checkpoint shipped" in _refused(capsys, *base, str(second))
    assert "is a 3-player evaluation, but" in _refused(capsys, *base, str(three))
    assert "cannot be read" in _refused(capsys, *base, str(tmp_path / "missing.json"))


def test_ship_records_the_agents_own_win_rate_not_the_opponents(tmp_path):
    """The recorded win rate is the first agent's, whichever opponent seat the result is for."""
    _, path = save(tmp_path, num_players=3)
    report, report_path = _report(tmp_path, path, "greedy-v0", "random-v0", games=3)
    mine = report["agents"][0]
    assert {a["win_rate"] for a in report["agents"][1:]} != {mine["win_rate"]}, "need rates that differ"
    meta = read_metadata(_ship(path, "x-v0", tmp_path / "out", "--evaluation", str(report_path)))
    for result in meta["evaluation"]["results"]:
        assert result["win_rate"] == mine["win_rate"] and result["win_rate_ci95"] == mine["win_rate_ci95"]


def test_wall_time_must_be_a_short_line(tmp_path, capsys):
    _, path = save(tmp_path)
    for text in ("", "   ", "a\nb", "x" * 101):
        assert "--wall-time" in _refused(capsys, str(path), "x-v0", "--wall-time", text, "--out-dir",
                                         str(tmp_path / "o"))


def test_results_of_every_report_are_recorded_and_the_sources_extra_is_kept(tmp_path):
    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["extra"] = {"trainer": "training/selfplay.py", "config": {"seed": 7}}
    side.write_text(json.dumps(meta))
    _, first = _report(tmp_path, path, "greedy-v0")
    _, second = _report(tmp_path, path, "random-v0")
    shipped = read_metadata(_ship(path, "x-v0", tmp_path / "out", "--evaluation", str(first), str(second)))
    assert [r["opponent"] for r in shipped["evaluation"]["results"]] == ["greedy-v0", "random-v0"]
    assert shipped["extra"] == {"trainer": "training/selfplay.py", "config": {"seed": 7},
                                "source_checkpoint": str(path), "training_wall_time": "1m"}


def test_an_out_dir_that_cannot_be_written_is_refused_before_anything(tmp_path, capsys):
    _, path = save(tmp_path)
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    err = _refused(capsys, str(path), "x-v0", "--wall-time", "1m", "--out-dir", str(blocker / "out"))
    assert f"--out-dir {blocker / 'out'}: {blocker} is a file, not a folder" in err


def test_a_wall_time_of_the_longest_allowed_length_is_kept(tmp_path):
    _, path = save(tmp_path)
    text = "x" * ship.MAX_WALL_TIME
    meta = read_metadata(ship.main([str(path), "x-v0", "--wall-time", text, "--out-dir", str(tmp_path / "o")]))
    assert meta["extra"]["training_wall_time"] == text


def test_the_command_names_itself_in_help_and_errors(capsys):
    with pytest.raises(SystemExit):
        ship.main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m training.ship")
    assert " ".join(ship.__doc__.split("\n\n")[0].split()) in " ".join(out.split())
    with pytest.raises(SystemExit) as info:
        ship.main(["a.pt", "x-v0"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "python -m training.ship: error:" in err and "--wall-time" in err


def test_by_default_it_ships_into_models_checkpoints_and_says_where(tmp_path, monkeypatch, capsys):
    _, path = save(tmp_path)
    monkeypatch.setattr(ship, "CHECKPOINT_DIR", tmp_path / "checkpoints")
    shipped = ship.main([str(path), "x-v0", "--wall-time", "1m"])
    assert shipped == tmp_path / "checkpoints" / "x-v0.pt" and shipped.exists()
    assert capsys.readouterr().out == f"shipped {shipped}\n"


def test_names_up_to_the_length_limit_are_accepted():
    longest = "a" * (ship.MAX_NAME - 3) + "-v1"
    assert ship.check_name(longest) == longest
    with pytest.raises(ship.ShipError):
        ship.check_name("a" + longest)
def test_ship_refuses_an_empty_description(tmp_path, capsys):
    _, path = save(tmp_path)
    with pytest.raises(SystemExit) as exc:
        ship.main([str(path), "x-v0", "--wall-time", "1m", "--out-dir", str(tmp_path / "o"), "--algorithm", " "])
    assert exc.value.code == 2
    assert "--algorithm is empty: describe it in words" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_curve_left_under_the_name_is_not_deleted_without_overwrite(tmp_path, capsys):
    """A ``<name>.learning_curve.png`` alone in ``--out-dir`` is an agent's file too: refused, kept."""
    _, path = save(tmp_path / "run" / "checkpoints", name="final")
    out = tmp_path / "out"
    out.mkdir()
    (out / "x-v2.learning_curve.png").write_bytes(b"someone's curve")
    err = _refused(capsys, str(path), "x-v2", "--wall-time", "1m", "--out-dir", str(out))
    assert "already shipped as 'x-v2'" in err
    assert (out / "x-v2.learning_curve.png").read_bytes() == b"someone's curve"


def test_re_shipping_a_shipped_agent_keeps_or_copies_its_own_curve(tmp_path):
    _, path = save(tmp_path / "run" / "checkpoints", name="final")
    (tmp_path / "run" / "learning_curve.png").write_bytes(b"curve")
    out = tmp_path / "out"
    shipped = _ship(path, "x-v1", out)
    assert _ship(shipped, "x-v1", out, "--overwrite") == shipped  # in place: its curve stays
    assert (out / "x-v1.learning_curve.png").read_bytes() == b"curve"
    _ship(shipped, "x-v2", out)  # under a new name: the curve goes with it
    assert (out / "x-v2.learning_curve.png").read_bytes() == b"curve"


def test_a_report_scored_otherwise_is_refused_and_a_variant_s_rules_are_kept(tmp_path, capsys):
    """An evaluation played with ``--allow-rule-mismatch`` (other scoring than the checkpoint
    learned) is not the agent's result; one of other rounds is, and its sidecar result says so."""
    _, path = save(tmp_path)
    mismatch, _ = evaluate([str(path), "greedy-v0"], games=1, seed=3, allow_rule_mismatch=True,
                           rules=Rules(num_players=2, rounds=FAST, aces="high_or_low"))
    bad = tmp_path / "aces.json"
    bad.write_text(json.dumps(mismatch))
    err = _refused(capsys, str(path), "x-v1", "--evaluation", str(bad), "--wall-time", "1m",
                   "--out-dir", str(tmp_path / "o"))
    assert "it was played with aces='high_or_low', but the checkpoint learned aces='low'" in err
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
    report, report_path = _report(tmp_path, path, "greedy-v0")
    results = read_metadata(_ship(path, "x-v1", tmp_path / "o", "--evaluation", str(report_path)))["evaluation"]
    assert results["results"][0]["rules"] == report["rules"] and report["rules"]["rounds"] == list(FAST)
