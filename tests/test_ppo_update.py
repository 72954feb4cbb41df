"""``training.ppo.update``, the self-play trainer's learning half: GAE along the buffer's linked
trajectories, on a hand-computed case, and the update's loss, minibatches and gradient clip
against the same update written out by hand."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from models import build_network
from training.common.config import SelfPlayConfig
from training.ppo.losses import clipped_ppo_losses
from training.ppo.update import Buffer, ppo_update


def test_gae_follows_each_trajectory_through_an_interleaved_buffer():
    """Two trajectories interleaved: A at 0 and 2 (cut at 2, bootstrapped), B at 1 (its game
    over). A done transition takes nothing from a transition linked after it."""
    buf = Buffer()
    a0 = buf.add("x", "m", 0, -1.0, 0.1)
    b1 = buf.add("x", "m", 1, -1.0, 0.2)
    a2 = buf.add("x", "m", 2, -1.0, 0.5, prev=a0)
    b3 = buf.add("x", "m", 3, -1.0, 0.7, prev=b1)    # linked after a terminal transition
    assert (buf.next_idx[a0], buf.next_idx[b1], len(buf)) == (a2, b3, 4)
    assert buf.done[a2] == 1.0                       # open transitions count as done until closed
    buf.close(a0, 3.0, 0.5, done=False)
    buf.close(b1, 4.0, 7.0, done=True)               # its next value is ignored: the game is over
    buf.close(a2, 4.0, 9.0, done=False)              # a rollout cut: bootstrapped from 9
    buf.close(b3, 1.0, 0.0, done=True)
    adv, ret = buf.advantages(0.5, 0.8)
    # delta = r + gamma (1 - done) next_value - value; adv = delta + gamma lam adv[next] unless done
    assert adv[a2] == pytest.approx(4 + 0.5 * 9 - 0.5)                  # 8.0
    assert adv[a0] == pytest.approx(3 + 0.5 * 0.5 - 0.1 + 0.5 * 0.8 * 8.0)
    assert adv[b1] == pytest.approx(4 - 0.2)
    assert adv[b3] == pytest.approx(1 - 0.7)
    assert ret == pytest.approx(adv + np.array([0.1, 0.2, 0.5, 0.7]))
    assert adv.dtype == ret.dtype == np.float32


def small_rollout(rows: int = 32, seed: int = 0):
    """A tiny MLP and a closed buffer of ``rows`` terminal decisions with rewards +-1."""
    torch.manual_seed(seed)
    net = build_network("mlp", num_players=2, hidden_sizes=[16])
    x = torch.rand(rows, net.input_size)
    masks = torch.ones(rows, 54, dtype=torch.bool)
    masks[:, ::3] = False
    with torch.no_grad():
        actions, logprob, _, value = net.get_action_and_value(x, masks)
    buf = Buffer()
    for i in range(rows):
        idx = buf.add(x[i], masks[i], int(actions[i]), float(logprob[i]), float(value[i]))
        buf.close(idx, 1.0 if i % 2 == 0 else -1.0, 0.0, done=True)
    return net, buf


def config(**overrides) -> SelfPlayConfig:
    return SelfPlayConfig(**{"update_epochs": 1, "num_minibatches": 1, "max_grad_norm": 1e6, **overrides})


def test_one_minibatch_update_is_the_written_out_loss_step():
    """One epoch, one minibatch, plain SGD: the update moves every weight by -lr times the gradient
    of vf_coef * value loss + policy loss - ent_coef * entropy (the coefficients and signs)."""
    net, buf = small_rollout()
    cfg = config(vf_coef=0.7, ent_coef=0.3)
    expected_net = copy.deepcopy(net)
    adv, ret = buf.advantages(cfg.gamma, cfg.gae_lambda)
    x, masks = torch.stack(buf.x), torch.stack(buf.mask)
    _, logprob, entropy, value = expected_net.get_action_and_value(x, masks, torch.tensor(buf.action))
    losses = clipped_ppo_losses(logprob, torch.tensor(buf.logprob), torch.as_tensor(adv), entropy, value,
                                torch.tensor(buf.value), torch.as_tensor(ret), cfg.clip_coef)
    (cfg.vf_coef * losses.value + losses.policy - cfg.ent_coef * losses.entropy).backward()
    losses = [float(loss.detach()) for loss in (losses.policy, losses.value, losses.entropy)]
    stats = ppo_update(net, torch.optim.SGD(net.parameters(), lr=0.5), buf, cfg, torch.Generator().manual_seed(0))
    for (name, got), want in zip(net.named_parameters(), expected_net.parameters(), strict=True):
        assert torch.allclose(got, want.detach() - 0.5 * want.grad, atol=1e-6), name
    assert [stats[k] for k in ("policy_loss", "value_loss", "entropy")] == pytest.approx(losses, abs=1e-6)
    var_ret = float(torch.as_tensor(ret).var())
    assert stats["explained_variance"] == pytest.approx(1 - float(torch.as_tensor(adv).var()) / var_ret, abs=1e-6)


def test_every_minibatch_of_every_epoch_takes_one_step():
    """32 rows in 4 minibatches for 3 epochs: 12 optimizer steps, each on 8 distinct rows, and
    every row once per epoch."""
    net, buf = small_rollout()
    seen: list[int] = []
    real = net.get_action_and_value

    def recording(x, mask, action=None):
        seen.append(x.shape[0])
        return real(x, mask, action)

    net.get_action_and_value = recording
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    steps = []
    optimizer.register_step_post_hook(lambda *_: steps.append(1))
    ppo_update(net, optimizer, buf, config(update_epochs=3, num_minibatches=4), torch.Generator().manual_seed(0))
    assert len(steps) == 12 and seen == [8] * 12


def test_the_gradient_is_clipped_to_max_grad_norm():
    """With max_grad_norm 1e-3 and SGD at lr 1, one step moves the weights by exactly that norm."""
    net, buf = small_rollout()
    before = torch.cat([p.detach().flatten().clone() for p in net.parameters()])
    ppo_update(net, torch.optim.SGD(net.parameters(), lr=1.0), buf, config(max_grad_norm=1e-3),
               torch.Generator().manual_seed(0))
    after = torch.cat([p.detach().flatten() for p in net.parameters()])
    assert float((after - before).norm()) == pytest.approx(1e-3, rel=1e-3)


def test_explained_variance_is_nan_when_the_returns_do_not_vary():
    net, buf = small_rollout(rows=4)
    for i in range(len(buf)):
        buf.value[i] = 0.25
        buf.close(i, 0.75, 0.0, done=True)   # every return is exactly 1
    stats = ppo_update(net, torch.optim.SGD(net.parameters(), lr=0.0), buf, config(),
                       torch.Generator().manual_seed(0))
    assert np.isnan(stats["explained_variance"])
    assert set(stats) == {"policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance"}


def test_the_minibatch_order_comes_from_the_generator_given():
    """Two updates from the same weights with equal generators end equal, whatever the global seed
    (a resumed run restores that generator, not torch's global one)."""
    results = []
    for global_seed in (1, 2):
        net, buf = small_rollout()
        torch.manual_seed(global_seed)
        ppo_update(net, torch.optim.SGD(net.parameters(), lr=0.5), buf, config(num_minibatches=4),
                   torch.Generator().manual_seed(3))
        results.append(torch.cat([p.detach().flatten() for p in net.parameters()]))
    assert torch.equal(results[0], results[1])
    net, buf = small_rollout()
    ppo_update(net, torch.optim.SGD(net.parameters(), lr=0.5), buf, config(num_minibatches=4),
               torch.Generator().manual_seed(4))
    assert not torch.equal(torch.cat([p.detach().flatten() for p in net.parameters()]), results[0])
