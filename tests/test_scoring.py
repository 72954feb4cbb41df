"""tt_env.engine.scoring: the one owner of the reward formulas."""

import numpy as np
import pytest

from tt_env.engine import scoring


def test_relative_rewards_zero_sum_and_exact_formula():
    points = [10, 0, 25]
    got = scoring.relative_rewards(points)
    assert got == [((35 - p) / 2 - p) / scoring.REWARD_SCALE for p in points]
    assert sum(got) == pytest.approx(0.0)
    assert scoring.relative_rewards([10, 0], scale=1.0) == [-10.0, 10.0]


def test_array_forms_match_the_list_forms():
    rng = np.random.default_rng(0)
    points = rng.integers(0, 60, size=(5, 3))
    arr = scoring.relative_rewards(points)
    for row, want in zip(arr, points, strict=True):
        assert list(row) == scoring.relative_rewards(list(map(int, want)))
    ret = scoring.relative_returns(points)
    for row, want in zip(ret, points, strict=True):
        assert list(row) == scoring.relative_returns(list(map(int, want)))
    assert list(scoring.penalty_rewards(points[0])) == scoring.penalty_rewards(list(map(int, points[0])))


def test_torch_tensors_work_too():
    torch = pytest.importorskip("torch")
    points = torch.tensor([[10, 0, 25], [3, 3, 3]], dtype=torch.float64)
    got = scoring.relative_rewards(points)
    assert got.tolist()[0] == scoring.relative_rewards([10, 0, 25])
    assert scoring.relative_returns(points).tolist()[1] == [0.0, 0.0, 0.0]


def test_round_rewards_modes():
    assert scoring.round_rewards("penalty", [4, 0], [4, 0], False) == [-0.04, -0.0]
    assert scoring.round_rewards("win", [4, 0], [4, 0], False) == [0.0, 0.0]
    assert scoring.round_rewards("win", [4, 0], [4, 0], True) == [-1.0, 1.0]
    with pytest.raises(ValueError):
        scoring.round_rewards("nope", [1, 2], [1, 2], False)


def test_the_adapters_use_the_one_formula():
    from tt_env import three_thirteen_v0
    from tt_env.agents import ismcts

    assert three_thirteen_v0.REWARD_SCALE is scoring.REWARD_SCALE
    assert three_thirteen_v0.REWARD_MODES is scoring.REWARD_MODES
    assert three_thirteen_v0.win_rewards is scoring.win_rewards
    assert ismcts.relative_points([3, 7, 20]) == scoring.relative_rewards([3, 7, 20], scale=1.0)
