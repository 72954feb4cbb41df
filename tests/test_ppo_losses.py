"""training.ppo.losses: CleanRL's clipped PPO losses, checked against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest
import torch

from training.ppo.losses import clipped_ppo_losses


def test_clipped_losses_on_a_worked_example():
    """Two rows whose ratios (1.5 and 0.5) fall outside the 0.2 clip range on the side where the
    clip binds, and one value outside its clip range: each figure as worked out on paper."""
    old = torch.zeros(2)
    logprob = torch.tensor([math.log(1.5), math.log(0.5)], requires_grad=True)
    advantage = torch.tensor([1.0, -1.0])  # normalised: +-1/sqrt(2) (sample std sqrt(2))
    value = torch.tensor([0.5, -0.1], requires_grad=True)
    losses = clipped_ppo_losses(logprob, old, advantage, torch.tensor([0.3, 0.5]), value, torch.zeros(2),
                                torch.ones(2), clip_coef=0.2)
    h = 1 / math.sqrt(2)
    assert losses.policy.item() == pytest.approx((-h * 1.2 + h * 0.8) / 2, abs=1e-6)
    # value 0.5 clips to 0.2: (0.2 - 1)^2 is the larger; -0.1 is inside: (-1.1)^2
    assert losses.value.item() == pytest.approx(0.5 * (0.64 + 1.21) / 2, abs=1e-6)
    assert float(losses.entropy) == pytest.approx(0.4)
    assert float(losses.approx_kl) == pytest.approx(((0.5 - math.log(1.5)) + (-0.5 - math.log(0.5))) / 2, abs=1e-6)
    assert float(losses.clipfrac) == 1.0
    assert not losses.approx_kl.requires_grad and not losses.clipfrac.requires_grad
    (losses.policy + losses.value).backward()
    assert torch.equal(logprob.grad, torch.zeros(2))  # both ratios are clipped where the clip binds
    assert value.grad[0] == 0 and value.grad[1] == pytest.approx(0.5 * 2 * (-1.1) / 2)  # only the unclipped one


def test_inside_the_clip_range_the_policy_gradient_follows_the_advantage():
    """At ratio 1 the gradient of the policy loss on each log-probability is minus its normalised
    advantage over the batch size: a better-than-average action is made more likely."""
    logprob = torch.zeros(3, requires_grad=True)
    advantage = torch.tensor([3.0, 0.0, -3.0])  # normalised: 1, 0, -1
    losses = clipped_ppo_losses(logprob, torch.zeros(3), advantage, torch.zeros(3), torch.zeros(3),
                                torch.zeros(3), torch.zeros(3), clip_coef=0.2)
    assert losses.policy.item() == pytest.approx(0.0, abs=1e-7)
    assert float(losses.approx_kl) == 0 and float(losses.clipfrac) == 0
    losses.policy.backward()
    assert torch.allclose(logprob.grad, torch.tensor([-1 / 3, 0.0, 1 / 3]), atol=1e-6)


def test_a_minibatch_of_one_keeps_its_raw_advantage():
    losses = clipped_ppo_losses(torch.zeros(1), torch.zeros(1), torch.tensor([2.0]), torch.zeros(1),
                                torch.zeros(1), torch.zeros(1), torch.zeros(1), clip_coef=0.2)
    assert losses.policy.item() == -2.0


def test_the_value_clip_is_around_the_old_value_on_both_sides():
    """Old values 1 and -1, clip 0.2. Row 0 moved up to 1.5 (clipped to 1.2) and row 1 down to
    -1.5 (clipped to -1.2); each loss term is the larger squared error, clipped or not."""
    value = torch.tensor([1.5, -1.5, 0.0], requires_grad=True)
    old_value = torch.tensor([1.0, -1.0, 0.1])
    returns = torch.tensor([3.0, -3.0, -2.0])
    losses = clipped_ppo_losses(torch.zeros(3), torch.zeros(3), torch.zeros(3), torch.zeros(3), value, old_value,
                                returns, clip_coef=0.2)
    # row 0: (1.5 - 3)^2 = 2.25 < (1.2 - 3)^2 = 3.24; row 1 the same mirrored; row 2 inside: (0 + 2)^2 = 4
    assert losses.value.item() == pytest.approx(0.5 * (3.24 + 3.24 + 4.0) / 3, abs=1e-5)
    far = clipped_ppo_losses(torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.tensor([0.5]),
                             torch.zeros(1), torch.tensor([-1.0]), clip_coef=0.2)
    assert far.value.item() == pytest.approx(0.5 * 2.25)  # the unclipped error (1.5^2) is the larger


def test_advantages_are_centred_before_they_are_scaled():
    """Advantages 3 and 1 (mean 2, sample std sqrt 2) become +-1/sqrt 2, as 1 and -1 do."""
    logprob = torch.zeros(2, requires_grad=True)
    losses = clipped_ppo_losses(logprob, torch.zeros(2), torch.tensor([3.0, 1.0]), torch.zeros(2), torch.zeros(2),
                                torch.zeros(2), torch.zeros(2), clip_coef=0.2)
    losses.policy.backward()
    h = 1 / math.sqrt(2)
    assert torch.allclose(logprob.grad, torch.tensor([-h / 2, h / 2]), atol=1e-6)


def test_a_ratio_on_the_clip_boundary_is_not_counted_as_clipped():
    losses = clipped_ppo_losses(torch.zeros(2), torch.zeros(2), torch.tensor([1.0, -1.0]), torch.zeros(2),
                                torch.zeros(2), torch.zeros(2), torch.zeros(2), clip_coef=0.0)
    assert float(losses.clipfrac) == 0.0  # ratio exactly 1 = 1 + 0: on the range's edge, not outside
