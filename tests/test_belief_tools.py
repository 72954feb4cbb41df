"""The belief's command lines end to end on tiny inputs: data, training, evaluation, the search study.

Each tool runs on a few games (seconds), and its output is checked for what it promises (the
labels are the opponents' unknown cards, the trained belief loads and obeys its invariants, the
evaluation scores the model against uniform worlds); bad input is one line, exit status 2.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("torch")

from models.belief import load_belief  # noqa: E402
from models.belief_net import unseen_and_unknown  # noqa: E402
from training import belief_data, belief_eval, search_study, train_belief  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402

AGENTS = ["--agents", "expert-v0", "greedy-v0"]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("belief") / "d.npz"
    belief_data.main(["--games", "3", "--keep", "0.3", "--seed", "4", "--quiet", "--out", str(out), *AGENTS])
    return out


@pytest.fixture(scope="module")
def belief_file(data_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("belief") / "b.pt"
    train_belief.main(["--data", str(data_file), "--out", str(out), "--epochs", "1", "--width", "8", "--blocks", "1",
                       "--no-history", "--val-share", "0.34"])
    return out


def _refused(capsys, main, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_the_data_labels_are_the_opponents_unknown_cards(data_file):
    arrays, meta = belief_data.load(data_file)
    assert meta["format"] == belief_data.FORMAT and meta["games"] == 3 and sorted(meta["agents"]) == meta["agents"]
    assert set(belief_data.ARRAYS) <= set(arrays) and len(arrays["obs"]) > 10
    rules = Rules.from_dict(meta["rules"])
    label = arrays["label"].reshape(len(arrays["obs"]), rules.num_players - 1, 52).astype(int)
    unseen, unknown = unseen_and_unknown(arrays["obs"], rules.num_players, rules.num_decks)
    # each opponent's label holds exactly its unknown-card count, and no card the observer has seen
    assert np.array_equal(label.sum(axis=2), unknown) and unknown.min() >= 0 and unknown.sum() > 0
    assert (label <= unseen[:, None, :]).all()
    assert set(np.unique(arrays["game"])) == {0, 1, 2}


def test_the_data_is_seeded(tmp_path):
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    for out in (a, b):
        belief_data.main(["--games", "1", "--keep", "0.5", "--seed", "9", "--quiet", "--out", str(out), *AGENTS])
    (x, _), (y, _) = belief_data.load(a), belief_data.load(b)
    assert all(np.array_equal(x[k], y[k]) for k in belief_data.ARRAYS)


def test_a_trained_belief_loads_and_keeps_its_invariants(data_file, belief_file):
    arrays, meta = belief_data.load(data_file)
    rules = Rules.from_dict(meta["rules"])
    belief = load_belief(belief_file, rules=rules)
    side = json.loads(belief_file.with_suffix(".json").read_text())
    assert side["extra"]["val_bits"] > 0 and len(side["extra"]["epochs"]) >= 1
    label = arrays["label"].reshape(len(arrays["obs"]), rules.num_players - 1, 52)
    for obs, lab in zip(arrays["obs"][:20], label[:20], strict=True):
        probs = belief.card_probs(obs)
        assert probs.shape == (rules.num_players - 1, 52)
        assert np.allclose(probs.sum(axis=1), lab.sum(axis=1), atol=1e-4)  # each row sums to the unknown count


def test_the_evaluation_scores_model_uniform_and_tilt(data_file, belief_file, tmp_path, capsys):
    out = tmp_path / "e.json"
    results = belief_eval.main(["--data", str(data_file), "--belief", str(belief_file), "--worlds", "2",
                                "--max-positions", "30", "--json", str(out), "--plot", str(tmp_path / "c.png")])
    printed = capsys.readouterr().out
    assert "| players | pairing |" in printed and "opponent's discards" in printed
    r = next(iter(results[2].values()))
    assert r["positions"] == 30 and r["model"] > 0 and r["uniform"] > 0 and r["tilt"] > 0
    saved = json.loads(out.read_text())["results"]["2"]
    assert next(iter(saved.values()))["model"] == pytest.approx(r["model"])
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_the_search_study_compares_estimates_with_the_oracle(tmp_path, capsys):
    from training import oracle_data

    data = tmp_path / "o.npz"
    oracle_data.main(["--games", "1", "--candidates", "2", "--rollouts", "1", "--keep", "0.1", "--seed", "1",
                      "--quiet", "--out", str(data)])
    result = search_study.main(["--data", str(data), "--agent", "ismcts-v1", "--option", "belief=0.04",
                                "--option", "worlds=2", "--option", "min_worlds=2", "--option", "z=100",
                                "--positions", "4", "--seed", "0", "--json", str(tmp_path / "s.json")])
    agent = result["agent"]
    assert agent["positions"] == 4 and agent["deviations"] == 0  # z=100: it never leaves expert-v0
    assert len(agent["pairs"]["estimate"]) == len(agent["pairs"]["oracle"]) == agent["estimates"] > 0
    assert json.loads((tmp_path / "s.json").read_text())["agent"]["estimates"] == agent["estimates"]
    # one position: no interval (null, said in words), not a false 0 or numpy's nan warnings; --json
    # into a folder not made yet is made, not a traceback after the study
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = search_study.main(["--data", str(data), "--agent", "expert-v0", "--positions", "1",
                                 "--json", str(tmp_path / "new" / "one.json")])
    assert one["agent"]["se"] is None and one["oracle"]["se"] is None and one["oracle"]["per_game_se"] is None
    assert capsys.readouterr().out.count("(no interval: one value)") == 3
    assert json.loads((tmp_path / "new" / "one.json").read_text())["oracle"]["per_game_se"] is None


def test_bad_input_is_one_line(data_file, belief_file, tmp_path, capsys):
    _refused(capsys, belief_data.main, ["--games", "1", "--seats", "expert-v0", "--out", str(tmp_path / "x.npz")],
             "--seats: give 2 agents")
    _refused(capsys, belief_data.main, ["--games", "1", "--agents", "nobody-v9", "--out", str(tmp_path / "x.npz")],
             "unknown agent 'nobody-v9'")
    _refused(capsys, belief_data.main, ["--keep", "0", "--out", str(tmp_path / "x.npz")], "--keep 0.0 is not allowed")
    _refused(capsys, train_belief.main, ["--data", str(tmp_path / "none.npz"), "--out", str(tmp_path / "b.pt")],
             "--data:")
    _refused(capsys, train_belief.main, ["--data", str(belief_file), "--out", str(tmp_path / "b.pt")], "--data:")
    _refused(capsys, train_belief.main, ["--data", str(data_file), "--out", str(tmp_path / "b.pt"), "--lr", "-1"],
             "is not allowed")
    _refused(capsys, train_belief.main, ["--data", str(data_file), "--out", str(tmp_path / "b.pt"),
                                          "--init", str(belief_file)], "--init")
    _refused(capsys, belief_eval.main, ["--data", str(data_file), "--belief", "belief-9p-v0"], "--belief belief-9p-v0")
    _refused(capsys, belief_eval.main, ["--players", "3", "--data", str(data_file)], "no file holds 3-player games")
    _refused(capsys, search_study.main, ["--data", str(data_file)], "not a file of python -m training.oracle_data")
    for bad in ("-5", "0", "nan"):  # a negative scale flipped the gains' sign; 0 was read as "measure it"
        _refused(capsys, search_study.main, ["--data", str(data_file), "--decisions-per-game", bad],
                 f"--decisions-per-game: {bad} is not allowed: use a number > 0")
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    _refused(capsys, search_study.main, ["--data", str(data_file), "--json", str(kept)],
             f"--json {kept}: the file exists: give --overwrite to replace it, or another name")
    assert kept.read_text() == "{}"
