"""Checkpoints: round trips, mismatch and corruption errors, agents from checkpoints (issue 4)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from models import build_network
from models.agent_loader import CHECKPOINT_DIR, SHIPPED, CheckpointAgent, load_agent
from models.checkpoint import CheckpointError, load_checkpoint, read_metadata, save_checkpoint
from tt_env.agents import make_agent
from tt_env.engine.rules import Rules
from tt_env.observation import OBS_VERSION

from test_models import sample_positions


def save(tmp_path, name="net", num_players=2, network="cardnet", **kwargs):
    torch.manual_seed(0)
    net = build_network(network, num_players=num_players, **(kwargs or {"channels": 8, "hidden": 16}))
    path = save_checkpoint(tmp_path / f"{name}.pt", net, obs_version=OBS_VERSION,
                           rules=Rules(num_players=num_players).to_dict(), training_steps=123,
                           evaluation={"greedy-v0": {"score_diff": -1.0}})
    return net, path


@pytest.mark.parametrize("network,kwargs", [("cardnet", {"channels": 8, "hidden": 16}),
                                            ("mlp", {"hidden_sizes": [16]})])
def test_round_trip(tmp_path, network, kwargs):
    net, path = save(tmp_path, network=network, **kwargs)
    loaded, meta = load_checkpoint(path, num_players=2, obs_version=OBS_VERSION, obs_size=294)
    obs, masks = sample_positions(2, 10)
    with torch.no_grad():
        a, b = net(obs, masks)[0].probs, loaded(obs, masks)[0].probs
    assert torch.equal(a, b)
    assert meta["network"]["class"] == type(net).__name__
    assert meta["obs_version"] == OBS_VERSION and meta["num_players"] == 2 and meta["training_steps"] == 123
    assert meta["rules"]["num_players"] == 2 and meta["evaluation"]["greedy-v0"]["score_diff"] == -1.0
    assert json.loads(path.with_suffix(".json").read_text()) == read_metadata(path)


def test_player_count_mismatch(tmp_path):
    _, path = save(tmp_path)
    with pytest.raises(CheckpointError, match="trained for 2 players, but the environment has 3 players"):
        load_checkpoint(path, num_players=3)
    with pytest.raises(ValueError, match="player count mismatch"):
        make_agent(str(path), Rules(num_players=3))


def test_observation_layout_mismatch(tmp_path):
    _, path = save(tmp_path)
    with pytest.raises(CheckpointError, match="observation layout version 1, but the environment uses version 2"):
        load_checkpoint(path, obs_version=2)
    with pytest.raises(CheckpointError, match="observation layout mismatch"):
        load_checkpoint(path, obs_size=401)


def test_truncated_weights(tmp_path):
    _, path = save(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_checkpoint(path)


def test_corrupt_weights_without_hash(tmp_path):
    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    del meta["weights_sha256"]
    side.write_text(json.dumps(meta))
    path.write_bytes(b"not a zip file at all")
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_checkpoint(path)


def test_corrupt_or_missing_sidecar(tmp_path):
    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    side.write_text(side.read_text()[:40])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_checkpoint(path)
    side.unlink()
    with pytest.raises(CheckpointError, match="has no JSON sidecar"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nothing.pt")


def test_weights_that_do_not_fit_the_description(tmp_path):
    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["network"]["kwargs"]["channels"] = 16
    side.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="does not fit its network description"):
        load_checkpoint(path)


def test_checkpoint_agent_plays_legal_moves(tmp_path):
    _, path = save(tmp_path)
    agent = make_agent(str(path), Rules())
    assert isinstance(agent, CheckpointAgent) and agent.greedy
    obs, masks = sample_positions(2, 30)
    rng = np.random.default_rng(0)
    for o, m in zip(obs, masks, strict=True):
        assert m[agent.act(o, m, rng)] == 1
        assert agent.act(o, m, rng) == agent.act(o, m, rng)  # argmax: deterministic
    sampler = load_agent(path, Rules(), greedy=False)
    picks = [sampler.act(obs[0], masks[0], np.random.default_rng(5)) for _ in range(3)]
    assert len(set(picks)) == 1 and masks[0][picks[0]] == 1  # same rng, same draw


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_agent(name):
    path = CHECKPOINT_DIR / SHIPPED[name]
    if not path.exists():
        pytest.skip("no shipped checkpoint in this checkout")
    assert path.stat().st_size < 5_000_000
    players = int(name.split("-")[1][0])  # ppo-<N>p-v<K>
    meta = read_metadata(path)
    assert meta["num_players"] == players and meta["evaluation"]
    agent = make_agent(name, Rules(num_players=players))
    obs, masks = sample_positions(players, 5)
    assert all(m[agent.act(o, m, np.random.default_rng(0))] for o, m in zip(obs, masks, strict=True))
    other = 3 if players == 2 else 2
    with pytest.raises(ValueError, match="player count mismatch"):
        make_agent(name, Rules(num_players=other))


def test_agent_fast_path_matches_the_network(tmp_path):
    net, path = save(tmp_path)
    agent = load_agent(path, Rules())
    obs, masks = sample_positions(2, 40, seed=2)
    with torch.no_grad():
        expected = net(obs, masks)[0].mode().numpy()
    rng = np.random.default_rng(0)
    assert [agent.act(o, m, rng) for o, m in zip(obs, masks, strict=True)] == expected.tolist()


# ---------------------------------------------------------------- issue 9: tests that can fail
def rewrite_weights(path, state) -> None:
    """Replace the weights of ``path`` with ``state`` and record their sha256, as a forger would."""
    import hashlib

    torch.save(state, path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["weights_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    side.write_text(json.dumps(meta))


def test_weights_that_load_but_do_not_match_the_sha256(tmp_path):
    net, path = save(tmp_path)
    state = {k: v.clone() for k, v in net.state_dict().items()}
    state["card_head.weight"] += 1.0  # a valid state_dict of the right shapes, silently different
    torch.save(state, path)
    with pytest.raises(CheckpointError, match="do not match the sha256 recorded in its sidecar"):
        load_checkpoint(path)


def test_loading_never_unpickles_code(tmp_path):
    import pathlib

    marker = tmp_path / "code-ran"

    class Payload:
        def __reduce__(self):
            return pathlib.Path.touch, (marker,)

    net, path = save(tmp_path)
    rewrite_weights(path, {**net.state_dict(), "x": Payload()})
    with pytest.raises(CheckpointError, match="corrupt or truncated, or not plain tensor data"):
        load_checkpoint(path)
    assert not marker.exists(), "loading a checkpoint ran code from it (weights_only=False?)"


def test_sidecar_observation_size_must_match_the_network(tmp_path):
    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["obs_size"] = 400
    side.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="sidecar says obs_size 400 but the network takes 294"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="sidecar says obs_size 400"):
        load_checkpoint(path, obs_size=400, num_players=2)  # even when the caller expects that size


def test_sampling_agent_draws_from_the_policy(tmp_path):
    _, path = save(tmp_path)
    sampler = load_agent(path, Rules(), greedy=False)
    obs, masks = sample_positions(2, 30, seed=4)
    i = next(i for i in range(len(obs)) if masks[i].sum() >= 4)  # a discard: several legal actions
    with torch.no_grad():
        probs = sampler.net(obs[i:i + 1], masks[i:i + 1])[0].probs[0].double().numpy()
    rng = np.random.default_rng(0)
    draws = np.bincount([sampler.act(obs[i], masks[i], rng) for _ in range(3000)], minlength=54) / 3000
    assert (draws[masks[i] == 0] == 0).all()
    assert (draws > 0).sum() >= 3, "a sampling agent played (nearly) one action: argmax instead of sampling?"
    assert np.abs(draws - probs).max() < 0.04  # 3000 draws: sd of each frequency <= 0.01


def test_non_finite_weights_are_refused_at_save_and_at_load(tmp_path):
    net, path = save(tmp_path)
    bad = build_network("cardnet", num_players=2, channels=8, hidden=16)
    with torch.no_grad():
        bad.glob.weight[0, 0] = float("nan")
    with pytest.raises(CheckpointError, match="refusing to save .*tensor 'glob.weight' has non-finite values"):
        save_checkpoint(tmp_path / "bad.pt", bad, obs_version=OBS_VERSION, rules=Rules().to_dict(), training_steps=1)
    assert not (tmp_path / "bad.pt").exists() and not (tmp_path / "bad.json").exists()
    state = {k: v.clone() for k, v in net.state_dict().items()}
    state["value_head.0.bias"][3] = float("inf")
    rewrite_weights(path, state)
    with pytest.raises(CheckpointError, match="tensor 'value_head.0.bias' has non-finite values"):
        load_checkpoint(path)


@pytest.mark.parametrize("network,kwargs,match", [
    ("CardNet", {"num_players": 2, "channels": 10 ** 9}, r"channels=1000000000 is out of bounds"),
    ("MLPPolicy", {"num_players": 2, "hidden_sizes": [10 ** 8]}, r"hidden_sizes=\[100000000\] is out of bounds"),
    ("MLPPolicy", {"num_players": 2, "hidden_sizes": [16] * 1000}, r"hidden_sizes has 1000 entries"),
    ("MLPPolicy", {"num_players": 2, "hidden_sizes": [4096] * 8}, r"parameters, over the 50000000 allowed"),
    ("CardNet", {"num_players": 2, "channels": {"a": 1}}, r"channels=\{'a': 1\} is not allowed"),
])
def test_sidecar_sizes_are_bounded_before_building(tmp_path, monkeypatch, network, kwargs, match):
    from models import checkpoint as ckpt

    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["network"] = {"class": network, "kwargs": kwargs}
    side.write_text(json.dumps(meta))
    real = ckpt.build_network

    def build_only_on_meta(*args, **kw):  # building real tensors of that size would be the bug
        assert torch.empty(0).device.type == "meta", "built the network for real"
        return real(*args, **kw)

    monkeypatch.setattr(ckpt, "build_network", build_only_on_meta)
    with pytest.raises(CheckpointError, match=match):
        load_checkpoint(path)


def test_oversized_sidecar_is_refused_before_reading(tmp_path, monkeypatch):
    from pathlib import Path

    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    side.write_text(side.read_text()[:-2] + ', "pad": "' + "x" * (1 << 20) + '"}')
    reads = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self) or real(self))
    with pytest.raises(CheckpointError, match=r"is \d+ bytes, over the 1048576 bytes allowed"):
        load_checkpoint(path)
    assert side not in reads


# ---------------------------------------------------------------- issue 9.3: checkpoints fit the game's scoring
def save_with_rules(tmp_path, **rules):
    torch.manual_seed(0)
    net = build_network("mlp", num_players=2, hidden_sizes=[8])
    return save_checkpoint(tmp_path / "r.pt", net, obs_version=OBS_VERSION, rules=Rules(**rules).to_dict(),
                           training_steps=1)


@pytest.mark.parametrize("trained,game,key,was,now", [
    ({"aces": "high_or_low"}, {}, "aces", "'high_or_low'", "'low'"),
    ({}, {"aces": "high_or_low"}, "aces", "'low'", "'high_or_low'"),
    ({"meld_needs_natural": True}, {}, "meld_needs_natural", "True", "False"),
])
def test_checkpoint_refuses_other_scoring_rules(tmp_path, trained, game, key, was, now):
    path = save_with_rules(tmp_path, **trained)
    rules = Rules(**game)
    message = rf"trained with {key}={was}, but the game has {key}={now} \(rule mismatch"
    with pytest.raises(CheckpointError, match=message):
        load_agent(path, rules)
    with pytest.raises(ValueError, match=message):
        make_agent(str(path), rules)
    assert isinstance(load_agent(path, rules, allow_rule_mismatch=True), CheckpointAgent)
    assert isinstance(make_agent(str(path), rules, allow_rule_mismatch=True), CheckpointAgent)


def test_rounds_turn_limits_and_decks_may_differ(tmp_path):
    path = save_with_rules(tmp_path, rounds=(9, 10, 11), max_turns_per_round=50)
    agent = load_agent(path, Rules(rounds=(1, 2), max_turns_per_round=300, decks=2, discard_drawn_discard=True))
    assert isinstance(agent, CheckpointAgent)


def test_shipped_agent_refuses_other_scoring_unless_allowed():
    if not (CHECKPOINT_DIR / "ppo-2p-v0.pt").exists():
        pytest.skip("no shipped checkpoint in this checkout")
    with pytest.raises(ValueError, match="trained with aces='low', but the game has aces='high_or_low'"):
        make_agent("ppo-2p-v0", Rules(aces="high_or_low"))
    assert make_agent("ppo-2p-v0", Rules(aces="high_or_low"), allow_rule_mismatch=True).name == "ppo-2p-v0"


def test_evaluator_flag_allows_rule_mismatch_in_workers_too(tmp_path, capsys):
    from training import evaluate as ev

    path = save_with_rules(tmp_path)
    argv = [str(path), "greedy-v0", "--games", "2", "--rounds", "1", "--aces", "high_or_low", "--quiet"]
    with pytest.raises(SystemExit) as info:
        ev.main(argv)
    assert info.value.code == 2
    assert "trained with aces='low', but the game has aces='high_or_low'" in capsys.readouterr().err
    one = ev.main(argv + ["--allow-rule-mismatch"])
    two = ev.main(argv + ["--allow-rule-mismatch", "--workers", "2"])  # spawned workers build the agents
    assert one["rules"]["aces"] == "high_or_low" and one["games_played"] == two["games_played"] == 4
    assert [a["mean_score"] for a in one["agents"]] == [a["mean_score"] for a in two["agents"]]


# ---------------------------------------------------------------- issue 19: hostile sidecars
@pytest.mark.parametrize("text,message", [
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ('{"format": "three-thirteen-checkpoint", "extra": ' + "[" * 50000 + "]" * 50000 + "}", "nested too deeply"),
    ('{"format": "three-thirteen-checkpoint", "n": ' + "9" * 5000 + "}", "is not valid JSON"),
])
def test_a_sidecar_nested_too_deeply_or_with_huge_numbers_is_a_checkpoint_error(tmp_path, text, message):
    _, path = save(tmp_path)
    path.with_suffix(".json").write_text(text)
    for load in (load_checkpoint, read_metadata):
        with pytest.raises(CheckpointError, match=message):
            load(path)
    with pytest.raises(ValueError, match=message):
        make_agent(str(path), Rules())


@pytest.mark.parametrize("key,value", [("num_players", "2"), ("num_players", True), ("num_players", 1),
                                       ("num_players", 99), ("obs_size", -1), ("obs_version", 1.0),
                                       ("training_steps", -5), ("training_steps", True), ("obs_version", True),
                                       ("rules", []), ("extra", "x"), ("attachments", [])])
def test_sidecar_fields_of_the_wrong_type_are_refused(tmp_path, key, value):
    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta[key] = value
    side.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=rf"{key}"):
        read_metadata(path)


@pytest.mark.parametrize("damaged", [["not", "a", "mapping"], {"state.json": {"file": "x.state.json"}},
                                     {"state.json": "x"}, {"../up": {"sha256": "0" * 64}}])
def test_a_damaged_attachments_entry_does_not_stop_the_next_save(tmp_path, damaged):
    net, path = save(tmp_path)
    side = path.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["attachments"] = damaged
    side.write_text(json.dumps(meta))
    save_checkpoint(path, net, obs_version=OBS_VERSION, rules=Rules().to_dict(), training_steps=1)
    assert read_metadata(path)["training_steps"] == 1


def test_a_sidecar_or_weights_that_are_not_regular_files_are_refused_without_blocking(tmp_path):
    import os

    _, path = save(tmp_path)
    side = path.with_suffix(".json")
    side.unlink()
    os.mkfifo(side)  # reading a FIFO with no writer would wait forever
    with pytest.raises(CheckpointError, match="is not a regular file"):
        read_metadata(path)
    side.unlink()
    side.mkdir()
    with pytest.raises(CheckpointError, match="is not a regular file"):
        load_checkpoint(path)


@pytest.mark.parametrize("state,message", [
    ({1: torch.zeros(1)}, r"its key 1 \(of type int\) is not a parameter name \(a string\)"),
    ({("a", "b"): torch.zeros(1)}, r"its key \('a', 'b'\) \(of type tuple\) is not a parameter name"),
    ({"card_head.weight": 1.0}, r"its 'card_head.weight' is of type float, not a tensor"),
    ([torch.zeros(1)], "but something of type list"),
])
def test_weights_that_are_not_a_state_dict_of_tensors_are_refused_before_loading(tmp_path, state, message):
    net, path = save(tmp_path)
    if isinstance(state, dict):  # beside the real weights, so that only the bad entry is wrong
        state = {**net.state_dict(), **state}
    rewrite_weights(path, state)
    with pytest.raises(CheckpointError, match=rf"checkpoint '{path}' does not hold a state_dict of tensors.*{message}"):
        load_checkpoint(path)
    with pytest.raises(ValueError, match=f"cannot load checkpoint '{path}'.*{message}") as info:
        make_agent(str(path), Rules())
    assert "\n" not in str(info.value)


def test_a_sidecar_given_as_the_checkpoint_is_named_as_one(tmp_path):
    """Its own sidecar, read as the weights, failed the sha256 check as "corrupt or truncated"."""
    _, path = save(tmp_path)
    with pytest.raises(CheckpointError, match=r"is a sidecar \(the JSON beside the weights\): give the weights file, "
                                              r"'.*\.pt'$"):
        load_checkpoint(path.with_suffix(".json"))
