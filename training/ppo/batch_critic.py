"""The privileged critic of ``training/batch_ppo.py`` (PerfectDou's "perfect-training-imperfect-execution").

An MLP on the global state (:func:`tt_env.batch.global_state.encode_states`: every hand, the
stock) and a one-hot of the seat whose value it gives. It exists only during training: the
policy network, and so every checkpoint, still acts from the observation alone. Its weights
travel in the resume state, never in a checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from models.networks import layer_init
from tt_env.observation.state import state_size


class PrivilegedCritic(nn.Module):
    """Value of ``seat`` from the global state: ``(state (B, S), seat (B,)) -> (B,)``."""

    def __init__(self, num_players: int, hidden_sizes: Sequence[int] = (256, 256)) -> None:
        super().__init__()
        self.num_players = num_players
        n_in = state_size(num_players) + num_players
        layers: list[nn.Module] = []
        for h in hidden_sizes:
            layers += [layer_init(nn.Linear(n_in, int(h))), nn.Tanh()]
            n_in = int(h)
        layers.append(layer_init(nn.Linear(n_in, 1), std=1.0))
        self.mlp = nn.Sequential(*layers)

    def inputs(self, states: torch.Tensor, seats: torch.Tensor) -> torch.Tensor:
        """(B, S + N) critic inputs: each state with its seat's one-hot."""
        hot = torch.nn.functional.one_hot(seats.long(), self.num_players).to(states.dtype)
        return torch.cat([states, hot], dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(x).squeeze(-1)
