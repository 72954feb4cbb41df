"""Checkpoints: round trips, mismatch and corruption errors, agents from checkpoints (issue 4)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from models import build_network
from models.agent_loader import CHECKPOINT_DIR, CheckpointAgent, load_agent
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
    for o, m in zip(obs, masks):
        assert m[agent.act(o, m, rng)] == 1
        assert agent.act(o, m, rng) == agent.act(o, m, rng)  # argmax: deterministic
    sampler = load_agent(path, Rules(), greedy=False)
    picks = [sampler.act(obs[0], masks[0], np.random.default_rng(5)) for _ in range(3)]
    assert len(set(picks)) == 1 and masks[0][picks[0]] == 1  # same rng, same draw


def test_shipped_agent():
    path = CHECKPOINT_DIR / "ppo-2p-v0.pt"
    if not path.exists():
        pytest.skip("no shipped checkpoint in this checkout")
    assert path.stat().st_size < 5_000_000
    meta = read_metadata(path)
    assert meta["num_players"] == 2 and meta["evaluation"]
    agent = make_agent("ppo-2p-v0", Rules())
    obs, masks = sample_positions(2, 5)
    assert all(m[agent.act(o, m, np.random.default_rng(0))] for o, m in zip(obs, masks))
    with pytest.raises(ValueError, match="player count mismatch"):
        make_agent("ppo-2p-v0", Rules(num_players=3))


def test_agent_fast_path_matches_the_network(tmp_path):
    net, path = save(tmp_path)
    agent = load_agent(path, Rules())
    obs, masks = sample_positions(2, 40, seed=2)
    with torch.no_grad():
        expected = net(obs, masks)[0].mode().numpy()
    rng = np.random.default_rng(0)
    assert [agent.act(o, m, rng) for o, m in zip(obs, masks)] == expected.tolist()
