"""The full state of every table as one float32 vector: ``env.state()`` for a batch.

:func:`encode_states` is :func:`tt_env.observation.state.encode_state` for a :class:`BatchState`: the same
layout (state layout version 1) and float32 values, seats in absolute order. It is what a
centralized ("privileged") critic reads during training; it holds every hidden card, so a
policy that acts must never see it.
"""

from __future__ import annotations

import torch

from ..observation.state import SCORE_SCALE, get_state_layout
from .observe import pile_top
from .state import BatchState


def encode_states(state: BatchState, round_number: torch.Tensor, max_turns: int) -> torch.Tensor:
    """(B, state_size(N)) float32 state vectors of every table (``round_number``: (B,) 1..11)."""
    b, n = state.hands.shape[0], state.hands.shape[1]
    dev = state.hands.device
    dtype = state.hands.dtype
    lay = get_state_layout(n)
    positions = torch.arange(state.stock.shape[1], device=dev)
    in_stock = (positions.unsqueeze(0) < state.stock_len.unsqueeze(1)).to(dtype)
    stock = torch.zeros(b, 52, dtype=dtype, device=dev).scatter_add_(1, state.stock.clamp(0, 51), in_stock)
    top = pile_top(state)
    top_hot = torch.nn.functional.one_hot(top.clamp(min=0), 52).to(dtype) * (top >= 0).unsqueeze(1).to(dtype)
    below = state.pile_counts - top_hot
    taken_hot = torch.nn.functional.one_hot(state.taken.clamp(min=0), 52).to(dtype) * (state.taken >= 0).unsqueeze(1)
    rows = torch.arange(b, device=dev)
    hots = torch.zeros(b, 13 + 11 + 2 + 3 * n, dtype=dtype, device=dev)
    hots[rows, round_number + 1] = 1.0                     # wild rank = round + 2, one-hot from rank 1
    hots[rows, 13 + round_number - 1] = 1.0
    hots[rows, 24 + state.phase] = 1.0
    hots[rows, 26 + state.current] = 1.0
    hots[rows, 26 + n + state.dealer] = 1.0
    hots[rows, 26 + 2 * n + state.went_out.clamp(min=0)] = (state.went_out >= 0).to(dtype)
    scaled = torch.cat([state.scores.double() / SCORE_SCALE, (state.turn.double() / max_turns).unsqueeze(1),
                        state.game_over.double().unsqueeze(1)], dim=1).to(dtype)
    out = torch.cat([state.hands.reshape(b, -1), stock, top_hot, below, state.known_taken.reshape(b, -1),
                     state.discards.reshape(b, -1), taken_hot, hots, scaled], dim=1)
    if out.shape[1] != lay.size:
        raise AssertionError(f"state vector of {out.shape[1]} floats, the layout has {lay.size}")
    return out
