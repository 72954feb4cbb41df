"""What a step of :class:`tt_env.batch.BatchGame` returns, and the rewards it gives, as tensors."""

from __future__ import annotations

from typing import NamedTuple

import torch

from ..engine.scoring import penalty_rewards, relative_rewards


class TimeStep(NamedTuple):
    """What a call of :meth:`BatchGame.reset` or :meth:`BatchGame.step` returns (tensors on the device).

    Attributes:
        observation: (B, 107N+80) float32, the seat to move's observation (after an auto-reset,
            of the new game).
        action_mask: (B, 54) bool, that seat's legal actions.
        seat: (B,) int64, the seat to move.
        rewards: (B, N) float32, every seat's reward from this step (``three_thirteen_v0``'s).
        round_over: (B,) bool, a round ended at this step.
        game_over: (B,) bool, the game ended at this step.
        scores: (B, N) int64, the totals after this step (a finished game's final totals).
        round_points: (B, N) int64, the points of the round that ended at this step (else 0).
        final_observation: (B, 107N+80) float32, where ``game_over``: the last observation of
            the finished game (of the seat that made the last move), else ``observation`` (the
            same tensor when no game ended).
        went_out: (B,) int64, the seat whose discard went out at this step, -1 if none.
        ended_round: (B,) int64, the number (1..11) of the round that ended at this step, 0 if none.
    """

    observation: torch.Tensor
    action_mask: torch.Tensor
    seat: torch.Tensor
    rewards: torch.Tensor
    round_over: torch.Tensor
    game_over: torch.Tensor
    scores: torch.Tensor
    round_points: torch.Tensor
    final_observation: torch.Tensor
    went_out: torch.Tensor
    ended_round: torch.Tensor


def win_rewards(scores: torch.Tensor) -> torch.Tensor:
    """(B, N) float64: ``tt_env.engine.scoring.win_rewards`` of each row (+1 shared among the lowest
    totals, -1 among the rest; 0 for all on an all-way tie), as tensor selects."""
    n = scores.shape[1]
    won = scores == scores.min(dim=1, keepdim=True).values
    k = won.sum(dim=1, keepdim=True).double()
    values = torch.where(won, 1.0 / k, -1.0 / (n - k).clamp(min=1))
    return torch.where(k == n, 0.0, values)


def step_rewards(reward_mode: str, points: torch.Tensor, ends: torch.Tensor, over: torch.Tensor,
                 scores: torch.Tensor, sparse: bool) -> torch.Tensor:
    """(B, N) float32 rewards of a step, as ``three_thirteen_v0`` gives them in ``reward_mode``: 0
    where no round ``ends``, else from the round's ``points`` (``over``: the game ended too, with
    totals ``scores``). ``sparse``: computed on just the rows where a round ended (a CPU's way;
    it reads which on the host), else on every row with a select."""
    if sparse:
        rewards = torch.zeros(points.shape, dtype=torch.float32, device=points.device)
        rows = ends.nonzero().squeeze(1)  # host: CPU only (sparse), no device to wait for
        if rows.numel():
            rewards[rows] = reward_values(reward_mode, points[rows], over[rows], scores[rows]).float()
        return rewards
    values = reward_values(reward_mode, points, over, scores)
    return torch.where(ends.unsqueeze(1), values, 0.0).float()


def reward_values(reward_mode: str, points: torch.Tensor, over: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """(K, N) float64 rewards of rows whose round ended with ``points`` (``over``: the game too)."""
    p = points.double()  # float64, then float32 once: the scalar env's Python floats, rounded
    if reward_mode == "relative":
        return relative_rewards(p)
    if reward_mode == "penalty":
        return penalty_rewards(p)
    return torch.where(over.unsqueeze(1), win_rewards(scores).double(), 0.0)
