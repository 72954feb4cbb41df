"""Belief checkpoints: saved and loaded safely, refused clearly when corrupt or for another game."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from models.belief import SHIPPED, Belief, load_belief, save_belief  # noqa: E402
from models.belief_net import BeliefNet  # noqa: E402
from models.checkpoint import CheckpointError  # noqa: E402
from tt_env.engine import Rules, game  # noqa: E402
from tt_env.observation import encode  # noqa: E402


@pytest.fixture
def saved(tmp_path):
    torch.manual_seed(0)
    net = BeliefNet(2, width=8, blocks=1)
    torch.nn.init.normal_(net.head.weight)
    path = save_belief(tmp_path / "b.pt", Belief(net, Rules()), extra={"note": "test"})
    return path


def _obs(rules: Rules, seed: int = 0) -> np.ndarray:
    state = game.new_game(rules, np.random.default_rng(seed))
    return encode(state, state.current_player)


def test_a_saved_belief_loads_and_gives_the_same_answers(saved):
    loaded = load_belief(saved, rules=Rules())
    torch.manual_seed(0)
    obs = _obs(Rules())
    original = load_belief(saved)
    np.testing.assert_array_equal(loaded.card_probs(obs), original.card_probs(obs))
    meta = json.loads(saved.with_suffix(".json").read_text())
    assert meta["format"] == "three-thirteen-belief" and meta["num_players"] == 2 and meta["extra"] == {"note": "test"}


@pytest.mark.parametrize("tamper, message", [
    (lambda p: p.write_bytes(p.read_bytes()[:-10]), "corrupt or truncated"),
    (lambda p: p.with_suffix(".json").write_text("{not json"), "not valid JSON"),
    (lambda p: p.with_suffix(".json").write_text("[" * 100_000), "not valid JSON"),
    (lambda p: p.with_suffix(".json").unlink(), "does not exist"),
])
def test_corrupt_files_are_refused(saved, tamper, message):
    tamper(saved)
    with pytest.raises(CheckpointError, match=message):
        load_belief(saved)


def _edit_sidecar(path, **changes):
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(meta.get(key), dict):
            meta[key].update(value)
        else:
            meta[key] = value
    side.write_text(json.dumps(meta))


@pytest.mark.parametrize("changes, message", [
    ({"format": "three-thirteen-checkpoint"}, "not a three-thirteen-belief file"),
    ({"format_version": 2}, "format_version 2"),
    ({"network": {"kwargs": {"num_players": 2, "width": 5000, "blocks": 1}}}, "out of bounds"),
    ({"network": {"class": "CardNet"}}, "BeliefNet"),
    ({"obs_version": 99}, "observation layout mismatch"),
    ({"rules": {"num_players": "two"}}, "rules are not valid"),
])
def test_sidecars_that_do_not_fit_are_refused(saved, changes, message):
    _edit_sidecar(saved, **changes)
    with pytest.raises(CheckpointError, match=message):
        load_belief(saved)


def test_a_belief_for_another_game_is_refused(saved):
    with pytest.raises(CheckpointError, match="player count mismatch"):
        load_belief(saved, rules=Rules(num_players=3))
    with pytest.raises(CheckpointError, match="aces"):
        load_belief(saved, rules=Rules(aces="high_or_low"))
    with pytest.raises(CheckpointError, match="deck count mismatch"):
        load_belief(saved, rules=Rules(decks=2))


def test_non_finite_weights_are_refused_at_save_and_load(tmp_path, saved):
    net = BeliefNet(2, width=8, blocks=1)
    with torch.no_grad():
        net.head.bias.fill_(float("nan"))
    with pytest.raises(CheckpointError, match="non-finite"):
        save_belief(tmp_path / "nan.pt", Belief(net, Rules()))


def test_unknown_names_and_wrong_observations_are_refused(saved):
    with pytest.raises(CheckpointError, match="unknown belief 'belief-9p-v0'"):
        load_belief("belief-9p-v0")
    belief = load_belief(saved)
    with pytest.raises(ValueError, match="2-player observations"):
        belief.card_probs(_obs(Rules(num_players=3)))


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_the_shipped_beliefs_load_and_keep_their_contract(name):
    n = int(name.split("-")[1][0])
    rules = Rules(num_players=n)
    belief = load_belief(name, rules=rules)
    rng = np.random.default_rng(n)
    state = game.new_game(rules, rng)
    for _ in range(60):
        game.apply(state, int(rng.choice(game.legal_actions(state))))
    seat = state.current_player
    probs = belief.card_probs(encode(state, seat))
    unknown = [len(state.hands[(seat + k) % n]) - len(state.known_taken[(seat + k) % n]) for k in range(1, n)]
    np.testing.assert_allclose(probs.sum(axis=1), unknown, atol=1e-6)


@pytest.mark.parametrize("state, message", [
    ({1: torch.zeros(2)}, r"its key 1 \(of type int\) is not a parameter name"),
    ({"head.weight": [1.0, 2.0]}, r"its 'head.weight' is of type list, not a tensor"),
    ([torch.zeros(2)], r"but something of type list"),
])
def test_weights_that_are_not_a_state_dict_of_tensors_are_refused(saved, state, message):
    """Checked before ``load_state_dict``, which failed on a non-string key with torch's own
    ``AttributeError`` (the weights' hash in the sidecar is made to match, as a crafted file's would)."""
    import hashlib

    from models.checkpoint import serialize_state

    data = serialize_state(state)
    saved.write_bytes(data)
    _edit_sidecar(saved, weights_sha256=hashlib.sha256(data).hexdigest())
    with pytest.raises(CheckpointError, match=rf"does not hold a state_dict of tensors.*{message}"):
        load_belief(saved)
