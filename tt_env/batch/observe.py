"""The observation and the action mask of the seat to move, for every table at once.

``observe`` is :func:`tt_env.observation.encode` for a batch: the same layout (version 1), the
same float32 values (scaled pieces are divided in float64 and rounded once, as the scalar
encoder's Python floats are). ``legal_mask`` is :func:`tt_env.engine.game.action_mask`.
"""

from __future__ import annotations

import torch

from ..engine.game import DISCARD_BASE, DRAW_STOCK, NUM_ACTIONS, TAKE_DISCARD
from ..observation import HAND_SCALE, SCORE_SCALE, get_layout
from .state import BatchState


def seat_order(seat: torch.Tensor, num_players: int) -> torch.Tensor:
    """(B, N) seats from ``seat``'s point of view: itself, then the others from its left."""
    return (seat.unsqueeze(1) + torch.arange(num_players, device=seat.device)) % num_players


def pile_top(state: BatchState) -> torch.Tensor:
    """(B,) top card of the discard pile, -1 where the pile is empty."""
    top = state.pile.gather(1, (state.pile_len - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
    return torch.where(state.pile_len > 0, top, -1)


def observe(state: BatchState, round_number: torch.Tensor, num_cards: int, max_turns: int,
            seat: torch.Tensor | None = None) -> torch.Tensor:
    """(B, 107N+80) float32 observation of ``seat`` (default: the seat to move) at each table."""
    b, n = state.hands.shape[0], state.hands.shape[1]
    lay = get_layout(n)
    dev = state.hands.device
    rows = torch.arange(b, device=dev)
    seat = state.current if seat is None else seat
    order = seat_order(seat, n)
    obs = torch.zeros(b, lay.size, dtype=torch.float32, device=dev)
    obs[:, lay.hand:lay.hand + 52] = state.hands[rows, seat]
    top = pile_top(state)
    top_hot = torch.zeros(b, 52, dtype=torch.float32, device=dev)
    top_hot[rows, top.clamp(min=0)] = (top >= 0).float()
    obs[:, lay.discard_top:lay.discard_top + 52] = top_hot
    obs[:, lay.discard_below:lay.discard_below + 52] = state.pile_counts - top_hot
    if n > 1:
        others = order[:, 1:]
        width = 52 * (n - 1)
        obs[:, lay.opponent_taken:lay.opponent_taken + width] = state.known_taken[rows.unsqueeze(1), others].reshape(b, width)
        obs[:, lay.opponent_discards:lay.opponent_discards + width] = state.discards[rows.unsqueeze(1), others].reshape(b, width)
    obs[rows, lay.wild_rank + round_number + 1] = 1.0  # wild rank = round + 2, one-hot from rank 1
    obs[rows, lay.round + round_number - 1] = 1.0
    obs[rows, lay.phase + state.phase] = 1.0
    out = state.went_out
    obs[rows, lay.went_out + (out - seat) % n] = (out >= 0).float()
    sizes = state.hands.sum(dim=2, dtype=torch.int64)[rows.unsqueeze(1), order]
    scores = state.scores[rows.unsqueeze(1), order]
    obs[:, lay.hand_sizes:lay.hand_sizes + n] = (sizes.double() / HAND_SCALE).float()
    obs[:, lay.stock_size] = (state.stock_len.double() / num_cards).float()
    obs[:, lay.scores:lay.scores + n] = (scores.double() / SCORE_SCALE).float()
    obs[:, lay.turn] = (state.turn.double() / max_turns).float()
    return obs


def legal_mask(state: BatchState, discard_drawn_discard: bool) -> torch.Tensor:
    """(B, 54) bool: the legal actions of the seat to move (all False once a game is over)."""
    b = state.hands.shape[0]
    dev = state.hands.device
    rows = torch.arange(b, device=dev)
    live = ~state.game_over
    draw = (state.phase == 0) & live
    mask = torch.zeros(b, NUM_ACTIONS, dtype=torch.bool, device=dev)
    mask[:, DRAW_STOCK] = draw & ((state.stock_len > 0) | (state.pile_len > 1))
    mask[:, TAKE_DISCARD] = draw & (state.pile_len > 0)
    held = state.hands[rows, state.current] > 0
    if not discard_drawn_discard:
        taken = state.taken.clamp(min=0)
        banned = state.taken >= 0
        others = held.sum(dim=1) - held[rows, taken].long() > 0
        held[rows, taken] &= ~(banned & others)
    mask[:, DISCARD_BASE:] = held & ((state.phase == 1) & live).unsqueeze(1)
    return mask
