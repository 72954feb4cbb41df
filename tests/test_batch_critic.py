"""``training.ppo.batch_critic.PrivilegedCritic``: the batched trainer's centralized critic, its
layers, its inputs (every seat's one-hot, whichever seats a batch holds) and its start."""

from __future__ import annotations

import pytest
import torch

from training.ppo.batch_critic import PrivilegedCritic
from tt_env.observation.state import state_size


def linears(critic: PrivilegedCritic) -> list[torch.nn.Linear]:
    return [m for m in critic.mlp if isinstance(m, torch.nn.Linear)]


def test_every_hidden_layer_is_built_in_order() -> None:
    critic = PrivilegedCritic(3, hidden_sizes=(32, 16))
    sizes = [(layer.in_features, layer.out_features) for layer in linears(critic)]
    assert sizes == [(state_size(3) + 3, 32), (32, 16), (16, 1)]
    assert sum(isinstance(m, torch.nn.Tanh) for m in critic.mlp) == 2


@pytest.mark.parametrize("players", [2, 5])
def test_the_inputs_hold_every_seat_s_one_hot_even_when_a_batch_has_one_seat(players: int) -> None:
    critic = PrivilegedCritic(players, hidden_sizes=(8,))
    states = torch.rand(4, state_size(players))
    x = critic.inputs(states, torch.zeros(4, dtype=torch.int64))
    assert x.shape == (4, state_size(players) + players) and x.dtype == states.dtype
    assert torch.equal(x[:, :-players], states) and x[:, -players:].tolist() == [[1.0] + [0.0] * (players - 1)] * 4
    assert critic(x).shape == (4,)


def test_the_value_layer_starts_with_unit_gain() -> None:
    """CleanRL's critic start: the last layer orthogonal with gain 1 (one output row of norm 1),
    the hidden ones with gain sqrt 2, every bias 0."""
    critic = PrivilegedCritic(2, hidden_sizes=(16,))
    hidden, value = linears(critic)
    assert float(value.weight.detach().norm()) == pytest.approx(1.0, abs=1e-5)
    gram = hidden.weight.detach() @ hidden.weight.detach().T  # 16 orthogonal rows of norm sqrt 2
    assert torch.allclose(gram, 2 * torch.eye(16), atol=1e-4)
    assert all(not layer.bias.detach().any() for layer in (hidden, value))
