"""models.batch_features: the solver features on torch tensors, bitwise those of models.features."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from models.batch_features import MAX_CANDIDATES, solver_features_torch
from models.features import solver_features
from models.networks import build_network
from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchRandom
from tt_env.engine.rules import Rules
from tt_env.observation import get_layout
from tt_env.observation.sizes import observation_size

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
VARIANTS = [(n, aces_high, natural) for n in (2, 3, 4) for aces_high in (False, True) for natural in (False, True)]


def _play(rules: Rules, tables: int, steps: int, seed: int) -> list[torch.Tensor]:
    """Observations of random play on the batched engine: both phases, every seat."""
    game = BatchGame(rules, tables, seed=seed)
    agent = BatchRandom(rules, seed=seed)
    ts = game.reset()
    seen = [ts.observation]
    for _ in range(steps):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
        seen.append(ts.observation)
    return seen


@functools.lru_cache(maxsize=None)
def _observations(n: int, aces_high: bool, natural: bool, tables: int = 12, steps: int = 40) -> torch.Tensor:
    """Observations of a small round and of the largest one (hands of 13 and 14 in view)."""
    seen = []
    for rounds in ((3,), (11,)):
        rules = Rules(num_players=n, aces="high_or_low" if aces_high else "low", meld_needs_natural=natural,
                      rounds=rounds)
        seen += _play(rules, tables, steps, seed=n)
    return torch.cat(seen)


def _assert_same(obs: torch.Tensor, n: int, aces_high: bool, natural: bool, **kwargs) -> None:
    planes, scalars = solver_features(obs.cpu().numpy(), n, aces_high, natural)
    t_planes, t_scalars = solver_features_torch(obs, n, aces_high, natural, **kwargs)
    assert t_planes.dtype == t_scalars.dtype == torch.float32 and t_planes.device == obs.device
    np.testing.assert_array_equal(t_planes.cpu().numpy(), planes)
    np.testing.assert_array_equal(t_scalars.cpu().numpy(), scalars)


@pytest.mark.parametrize("n,aces_high,natural", VARIANTS)
def test_equal_to_the_numpy_features_in_real_play(n, aces_high, natural):
    obs = _observations(n, aces_high, natural)
    lay = get_layout(n)
    draw = obs[:, lay.phase] > 0.5
    assert draw.any() and (~draw).any()  # both phases
    assert obs[:, :52].sum(1).max() == 14  # the largest hands
    _assert_same(obs, n, aces_high, natural)


def test_edge_rows_and_the_top_discard_held_twice():
    """Empty rows, a draw phase with no top discard, and (two decks) a top discard also held:
    that card type may not be discarded at all, as in the numpy features."""
    n = 3
    lay = get_layout(n)
    obs = _observations(n, False, False)[:6].clone()
    obs[0] = 0.0                                                   # nothing at all
    obs[1, lay.discard_top:lay.discard_top + 52] = 0.0             # no top discard
    row = obs[2]
    row[lay.phase], row[lay.phase + 1] = 1.0, 0.0                  # draw phase
    held = int(row[:52].argmax())
    row[lay.discard_top:lay.discard_top + 52] = 0.0
    row[lay.discard_top + held] = 1.0                              # the top discard is a card held
    _assert_same(obs, n, False, False)
    _assert_same(obs, n, False, False, sync_free=True)


@pytest.mark.parametrize("n,aces_high,natural", VARIANTS)
def test_the_fixed_shape_path_is_equal_too(n, aces_high, natural):
    """The path used off the CPU (fixed width, every slot solved), run on the CPU."""
    _assert_same(_observations(n, aces_high, natural), n, aces_high, natural, sync_free=True)


@pytest.mark.parametrize("sync_free", [False, True])
def test_the_torch_solver_gives_the_same_features(sync_free):
    """The batched solver's torch program (the CUDA path without Triton) on a few rows."""
    obs = _observations(2, False, False)[-2:]  # round 11
    _assert_same(obs, 2, False, False, backend="torch", sync_free=sync_free)


def test_bad_input_is_refused_with_the_expected_shape():
    size = observation_size(2)
    with pytest.raises(ValueError, match=rf"\(B, {size}\)"):
        solver_features_torch(torch.zeros(3, size + 1), 2)
    with pytest.raises(TypeError, match="numpy"):
        solver_features_torch(np.zeros((3, size), dtype=np.float32), 2)
    with pytest.raises(TypeError, match="float"):
        solver_features_torch(torch.zeros(3, size, dtype=torch.long), 2)
    too_many = torch.zeros(1, size)
    too_many[0, :MAX_CANDIDATES + 1] = 1.0
    with pytest.raises(ValueError, match="distinct cards"):
        solver_features_torch(too_many, 2)


def test_an_empty_batch():
    planes, scalars = solver_features_torch(torch.zeros(0, observation_size(2)), 2)
    assert planes.shape == (0, 3, 52) and scalars.shape == (0, 3)
    planes, scalars = solver_features_torch(torch.zeros(0, observation_size(2)), 2, sync_free=True)
    assert planes.shape == (0, 3, 52) and scalars.shape == (0, 3)


@pytest.mark.parametrize("n,aces_high,natural", [(2, False, False), (3, True, True), (4, True, False)])
def test_cardnet_logits_are_the_same_from_tensors_and_arrays(n, aces_high, natural):
    torch.manual_seed(0)
    net = build_network("cardnet", num_players=n, channels=8, hidden=16, aces_high=aces_high,
                        meld_needs_natural=natural).eval()
    obs = _observations(n, aces_high, natural)
    x_torch = net.as_input(obs)
    x_numpy = net.as_input(obs.numpy())
    assert torch.equal(x_torch, x_numpy)
    with torch.no_grad():
        logits_t, value_t = net.logits_and_value(x_torch)
        logits_n, value_n = net.logits_and_value(x_numpy)
    assert torch.equal(logits_t, logits_n) and torch.equal(value_t, value_n)


@pytest.mark.parametrize("n,aces_high,natural", [(2, False, False), (3, True, True), (4, True, False)])
def test_cardnet_torch_features_give_the_same_logits(n, aces_high, natural):
    """The torch features (what CardNet computes off the CPU) in CardNet's input on the CPU."""
    torch.manual_seed(0)
    net = build_network("cardnet", num_players=n, channels=8, hidden=16, aces_high=aces_high,
                        meld_needs_natural=natural).eval()
    obs = _observations(n, aces_high, natural)
    planes, scalars = solver_features_torch(obs, n, aces_high, natural, sync_free=True)
    x_torch = torch.cat([obs, planes.reshape(len(obs), -1), scalars], dim=1)
    x_numpy = net.as_input(obs.numpy())
    with torch.no_grad():
        assert torch.equal(net.logits_and_value(x_torch)[0], net.logits_and_value(x_numpy)[0])


def test_cardnet_keeps_numpy_for_expert_and_lookahead_features():
    obs = _observations(2, False, False)[:8]
    for kwargs in ({"expert_features": True}, {"lookahead_features": True}):
        net = build_network("cardnet", num_players=2, channels=8, hidden=16, **kwargs)
        assert net.preprocess_tensor(obs) is None
        mask = torch.ones(len(obs), 54, dtype=torch.bool)
        assert torch.equal(net.as_input(obs, mask), net.as_input(obs.numpy(), mask.numpy()))


@CUDA
@pytest.mark.parametrize("n,aces_high,natural", [(2, False, False), (3, True, False), (4, False, True)])
def test_equal_on_cuda_without_host_synchronisation(n, aces_high, natural, monkeypatch):
    """Bitwise equal on CUDA, and nothing around the solver waits for the device (the solver's own
    internals are tt_env.batch's business: the check is off while it runs)."""
    import models.batch_features as batch_features

    solve = batch_features.least_penalty

    def unchecked_solve(*args, **kwargs):
        torch.cuda.set_sync_debug_mode("default")
        try:
            return solve(*args, **kwargs)
        finally:
            torch.cuda.set_sync_debug_mode("error")

    obs = _observations(n, aces_high, natural).cuda()
    solver_features_torch(obs, n, aces_high, natural)  # compile the kernels first
    monkeypatch.setattr(batch_features, "least_penalty", unchecked_solve)
    torch.cuda.set_sync_debug_mode("error")
    try:
        planes, scalars = solver_features_torch(obs, n, aces_high, natural)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    ref_planes, ref_scalars = solver_features(obs.cpu().numpy(), n, aces_high, natural)
    np.testing.assert_array_equal(planes.cpu().numpy(), ref_planes)
    np.testing.assert_array_equal(scalars.cpu().numpy(), ref_scalars)


@CUDA
def test_cardnet_on_cuda_same_logits_as_numpy(monkeypatch):
    torch.manual_seed(0)
    net = build_network("cardnet", num_players=2, channels=8, hidden=16).cuda().eval()
    obs = _observations(2, False, False)
    with torch.no_grad():
        x_numpy = net.as_input(obs.numpy())
        monkeypatch.setattr("models.networks.solver_features", None)  # CUDA tensors do not go through numpy
        x_torch = net.as_input(obs.cuda())
        assert torch.equal(x_torch, x_numpy)
        assert torch.equal(net.logits_and_value(x_torch)[0], net.logits_and_value(x_numpy)[0])
