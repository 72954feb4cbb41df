"""Networks and the masked distribution: masks are absolute, shapes and interfaces hold (issue 4)."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from models import MaskedCategorical, build_network
from models.networks import NUM_ACTIONS, observation_size
from tt_env import three_thirteen_v0
from tt_env.observation import get_layout

NETS = [("mlp", {"hidden_sizes": [32, 32]}), ("cardnet", {"channels": 8, "hidden": 16}),
        ("cardnet", {"channels": 8, "blocks": 1, "hidden": 16, "solver_features": False})]


def sample_positions(num_players: int, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to move, from random legal play."""
    env = three_thirteen_v0.raw_env(num_players=num_players, rounds=(1, 5, 11))
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    while len(obs) < count:
        if env.game_state.game_over:
            env.reset()
        o = env.observe(env.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.stack(obs), np.stack(masks)


@pytest.mark.parametrize("name,kwargs", NETS)
@pytest.mark.parametrize("num_players", [2, 3])
def test_no_mass_on_illegal_actions(name, kwargs, num_players):
    torch.manual_seed(0)
    net = build_network(name, num_players=num_players, **kwargs)
    obs, masks = sample_positions(num_players, 120)
    # push the logits of illegal actions up: masking must still give them exactly zero
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    dist, value = net(obs, masks)
    legal = torch.as_tensor(masks).bool()
    assert value.shape == (len(obs),)
    assert torch.all(dist.probs[~legal] == 0)
    assert torch.allclose(dist.probs.sum(-1), torch.ones(len(obs)), atol=1e-5)
    gen = torch.Generator().manual_seed(1)
    for _ in range(20):
        a = dist.sample(gen)
        assert legal[torch.arange(len(obs)), a].all()
    assert legal[torch.arange(len(obs)), dist.mode()].all()
    assert torch.isfinite(dist.entropy()).all()


def test_entropy_ignores_masked_actions():
    logits = torch.tensor([[5.0, 0.0, 0.0, 100.0], [0.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[0, 1, 1, 0], [1, 1, 1, 1]])
    dist = MaskedCategorical(logits, mask)
    assert torch.allclose(dist.entropy(), torch.tensor([np.log(2), np.log(4)], dtype=torch.float32))
    assert dist.probs[0, 0] == 0 and dist.probs[0, 3] == 0
    assert torch.allclose(dist.log_prob(torch.tensor([1, 2])), torch.tensor([-np.log(2), -np.log(4)]).float())


def test_empty_mask_row_is_an_error():
    with pytest.raises(ValueError, match="no legal action"):
        MaskedCategorical(torch.zeros(2, 4), torch.tensor([[1, 0, 0, 0], [0, 0, 0, 0]]))


@pytest.mark.parametrize("name,kwargs", NETS)
def test_get_action_and_value_interface(name, kwargs):
    net = build_network(name, num_players=2, **kwargs)
    obs, masks = sample_positions(2, 16)
    action, logprob, entropy, value = net.get_action_and_value(obs, masks)
    assert action.shape == logprob.shape == entropy.shape == value.shape == (16,)
    # a given action is scored, not resampled; raw and preprocessed inputs agree
    again = net.get_action_and_value(net.preprocess(obs), masks, action)
    assert torch.equal(again[0], action)
    assert torch.allclose(again[1], logprob, atol=1e-6)
    single = net.get_action_and_value(obs[0], masks[0], deterministic=True)
    assert single[0].shape == (1,)
    assert net.obs_size == observation_size(2) == get_layout(2).size


@torch.no_grad()
def test_head_initialisation():
    """Output layers: orthogonal with gain 0.01 for the policy (near-uniform start), 1.0 for the value."""
    mlp = build_network("mlp", num_players=2)
    actor, critic = mlp.actor[-1], mlp.critic[-1]
    assert actor.out_features == NUM_ACTIONS and critic.out_features == 1
    # orthogonal (54, 256) with gain g: orthonormal rows times g, so each row has norm g
    assert torch.allclose(actor.weight.norm(dim=1), torch.full((NUM_ACTIONS,), 0.01), atol=1e-5)
    assert torch.allclose(actor.weight @ actor.weight.T, 1e-4 * torch.eye(NUM_ACTIONS), atol=1e-7)
    assert float(critic.weight.norm()) == pytest.approx(1.0, abs=1e-5)
    assert not actor.bias.any() and not critic.bias.any()
    for layer in (mlp.actor[0], mlp.critic[0]):  # hidden layers: gain sqrt(2)
        assert torch.allclose(layer.weight.norm(dim=1), torch.full((layer.out_features,), 2 ** 0.5), atol=1e-4)
    card = build_network("cardnet", num_players=2)
    assert float(card.card_head.weight.norm()) == pytest.approx(0.01, abs=1e-6)
    assert torch.allclose(card.draw_head[-1].weight.norm(dim=1), torch.full((2,), 0.01), atol=1e-6)
    assert float(card.value_head[-1].weight.norm()) == pytest.approx(1.0, abs=1e-5)
    assert not card.value_head[-1].bias.any() and not card.card_head.bias.any()


def test_wrong_observation_length_is_an_error():
    net = build_network("mlp", num_players=2, hidden_sizes=[8])
    obs, masks = sample_positions(3, 2)
    with pytest.raises(ValueError, match="2-player observations of length 294"):
        net(obs, np.zeros((2, NUM_ACTIONS)))


def test_bad_network_options():
    with pytest.raises(ValueError, match="unknown network 'cnn'"):
        build_network("cnn", num_players=2)
    with pytest.raises(ValueError, match="unknown option"):
        build_network("mlp", num_players=2, width=3)
    with pytest.raises(ValueError, match="num_players=9"):
        build_network("mlp", num_players=9)


@pytest.mark.parametrize("network, option, value, allowed", [
    ("mlp", "hidden_sizes", 8, "a non-empty list of positive ints"),
    ("mlp", "hidden_sizes", [True], "a non-empty list of positive ints"),
    ("mlp", "hidden_sizes", "64", "a non-empty list of positive ints"),
    ("mlp", "hidden_sizes", [0], "a non-empty list of positive ints"),
    ("cardnet", "channels", True, "a positive int"),
    ("cardnet", "hidden", 2.5, "a positive int"),
    ("cardnet", "blocks", False, "an int from 0"),
    ("cardnet", "solver_features", "yes", "true or false"),
    ("cardnet", "lookahead_features", 1, "true or false"),
    ("cardnet", "solver_shortcuts", None, "true or false"),
])
def test_network_option_of_the_wrong_type_is_named(network, option, value, allowed):
    """A bool where a size belongs (width 1) or a string where a flag belongs (always on) is refused
    by name, not built or failed deep inside torch."""
    with pytest.raises(ValueError, match=f"{option}={re.escape(repr(value))} is not allowed: use {allowed}"):
        build_network(network, num_players=2, **{option: value})


def test_numpy_sizes_and_flags_are_accepted():
    net = build_network("cardnet", num_players=2, channels=np.int64(8), hidden=np.int32(16),
                        solver_features=np.bool_(False))
    assert net.channels == 8 and net.solver_features is False
    assert build_network("mlp", num_players=2, hidden_sizes=(np.int64(4),)).hidden_sizes == [4]


def test_models_import_no_env_or_training_code():
    code = ("import sys, models, models.checkpoint; "
            "bad = [m for m in sys.modules if m.startswith(('training', 'tt_env.three_thirteen_v0', "
            "'tt_env.gym_env', 'stable_baselines3', 'sb3_contrib', 'ray'))]; print(bad); assert not bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_solver_features_match_the_greedy_arithmetic():
    from models.features import PENALTY_SCALE, solver_features
    from tt_env.engine.melds import least_penalty

    obs, masks = sample_positions(2, 60, seed=3)
    planes, scalars = solver_features(obs, 2)
    lay = get_layout(2)
    for i in range(len(obs)):
        if obs[i, lay.phase] > 0.5:
            continue  # discard phase: the plane is the penalty left by each discard
        hand = np.flatnonzero(obs[i, :52]).tolist()
        wild = int(obs[i, lay.wild_rank:lay.wild_rank + 13].argmax()) + 1
        for c in hand:
            rest = [x for x in hand if x != c]
            assert planes[i, 1, c] * PENALTY_SCALE == pytest.approx(least_penalty(rest, wild))
        assert scalars[i, 0] * PENALTY_SCALE == pytest.approx(least_penalty(hand, wild))


@pytest.mark.parametrize("name,kwargs", [("mlp", {"hidden_sizes": [16]}), ("cardnet", {"channels": 4, "hidden": 8})])
def test_critic_warmup_trains_the_value_head_only(name, kwargs):
    """A PPO update with train_policy=False changes the value head and nothing the policy reads."""
    from training.common.config import SelfPlayConfig
    from training.ppo.update import Buffer, ppo_update

    torch.manual_seed(0)
    net = build_network(name, num_players=2, **kwargs)
    obs, masks = sample_positions(2, 64)
    x = net.preprocess(obs, masks)
    with torch.no_grad():
        actions, logprob, _, value = net.get_action_and_value(x, masks)
    buf = Buffer()
    for i in range(len(obs)):
        idx = buf.add(x[i], masks[i], int(actions[i]), float(logprob[i]), float(value[i]))
        buf.close(idx, float(i % 3) - 1.0, 0.0, done=True)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    value_names = {n for n, p in net.named_parameters() if any(p is q for q in net.value_head_parameters())}
    assert value_names
    ppo_update(net, torch.optim.Adam(net.parameters(), lr=1e-2), buf, SelfPlayConfig(), torch.Generator().manual_seed(0),
               train_policy=False)
    after = net.state_dict()
    for k in before:
        if k in value_names:
            continue
        assert torch.equal(before[k], after[k]), k
    assert any(not torch.equal(before[k], after[k]) for k in value_names)


@pytest.mark.parametrize("channels_in, channels_out", [(8, 8), (11, 1)])
def test_pointwise_conv_is_a_1x1_convolution(channels_in, channels_out):
    """CardNet's per-card layers: the einsum gives a 1x1 Conv2d's output from the same state_dict
    (old checkpoints load unchanged), for the grid and the suit-mean row alike."""
    from models.networks import PointwiseConv2d

    torch.manual_seed(0)
    layer = PointwiseConv2d(channels_in, channels_out)
    plain = torch.nn.Conv2d(channels_in, channels_out, kernel_size=1)
    plain.load_state_dict(layer.state_dict())
    for shape in ((5, channels_in, 4, 13), (5, channels_in, 1, 13)):
        x = torch.randn(shape)
        assert layer(x).shape == plain(x).shape
        assert torch.allclose(layer(x), plain(x), atol=1e-5)
    assert set(layer.state_dict()) == {"weight", "bias"}
    assert layer.weight.shape == (channels_out, channels_in, 1, 1)
