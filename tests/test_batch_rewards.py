"""tt_env.batch.timestep's rewards against the scalar engine's, row by row, in every reward mode.

The differential games (tests/test_batch_engine.py) reach the reward modes at 2 players on a
CPU's path. Here: 2 to 8 players, shared wins and losses, and the every-row path a GPU takes,
on rows built to hold every case (a round not ended, ended, the game over)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tt_env.batch.timestep import step_rewards, win_rewards
from tt_env.engine import scoring

MODES = ["relative", "penalty", "win"]


def random_rows(num_players: int, rows: int, seed: int) -> tuple[torch.Tensor, ...]:
    """Round points, ends, game-over flags and totals, with many ties among the totals."""
    rng = np.random.default_rng(seed)
    points = torch.as_tensor(rng.integers(0, 60, (rows, num_players)))
    scores = torch.as_tensor(rng.integers(0, 4, (rows, num_players)) * 10)  # few values: ties
    ends = torch.as_tensor(rng.random(rows) < 0.6)
    over = ends & torch.as_tensor(rng.random(rows) < 0.5)
    return points, ends, over, scores


@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 8])
def test_win_rewards_share_the_win_and_the_loss_as_the_scalar_engine(num_players: int) -> None:
    _, _, _, scores = random_rows(num_players, 400, seed=num_players)
    got = win_rewards(scores)
    expected = torch.tensor([scoring.win_rewards(row) for row in scores.tolist()], dtype=torch.float64)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-12)
    if num_players >= 3:  # the rows hold shared wins and several losers, not only 2-player cases
        won = scores == scores.min(dim=1, keepdim=True).values
        assert ((won.sum(1) > 1) & (won.sum(1) < num_players)).any() and (won.sum(1) == 1).any()


@pytest.mark.parametrize("sparse", [True, False], ids=["rows that ended (CPU)", "every row (GPU)"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("num_players", [2, 3, 6])
def test_step_rewards_are_the_scalar_round_rewards(num_players: int, mode: str, sparse: bool) -> None:
    points, ends, over, scores = random_rows(num_players, 300, seed=10 * num_players + MODES.index(mode))
    got = step_rewards(mode, points, ends, over, scores, sparse=sparse)
    assert got.dtype == torch.float32 and got.shape == (300, num_players)
    expected = [scoring.round_rewards(mode, p, s, o) if e else [0.0] * num_players
                for p, e, o, s in zip(points.tolist(), ends.tolist(), over.tolist(), scores.tolist(), strict=True)]
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float32), rtol=0, atol=0)
    if mode == "win":  # rounds that ended without ending the game give nothing, the others do
        assert (got[ends & ~over] == 0).all() and (got[over] != 0).any()
