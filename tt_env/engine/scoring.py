"""The game's rewards: one owner for the reward modes, the scale and every reward formula.

The AEC env, the Gymnasium env, the search, the OpenSpiel and RLCard adapters (and the batched
engine) all import these. :func:`relative_rewards` and :func:`relative_returns` take a list, or
an array whose last axis is the seat (numpy or torch alike: plain arithmetic only).
"""

from __future__ import annotations

from typing import Any, Sequence

REWARD_MODES = ("relative", "penalty", "win")
"""The env's ``reward_mode`` values."""
REWARD_SCALE = 100.0
"""Rewards are points divided by this."""
ILLEGAL_ACTION_REWARD = -1.0
"""The offender's reward when ``env()`` ends a game on an illegal move."""


def _is_array(values: Any) -> bool:
    return hasattr(values, "shape") and hasattr(values, "sum")


def relative_rewards(points: Any, scale: float = REWARD_SCALE) -> Any:
    """Each seat's round reward in ``relative`` mode: the mean of the others' points minus its own.

    ``((total - p) / (n - 1) - p) / scale``, zero-sum. ``points`` is a list (a list of floats
    comes back) or an array/tensor whose last axis is the seat (the same kind comes back).
    ``scale=1`` gives the reward in points (the search uses that).
    """
    if _is_array(points):
        n = points.shape[-1]
        total = points.sum(-1)[..., None]
        return ((total - points) / (n - 1) - points) / scale
    n = len(points)
    total = sum(points)
    return [((total - p) / (n - 1) - p) / scale for p in points]


def penalty_rewards(points: Any, scale: float = REWARD_SCALE) -> Any:
    """Each seat's round reward in ``penalty`` mode: minus its own points."""
    if _is_array(points):
        return -points / scale
    return [-p / scale for p in points]


def win_rewards(scores: Sequence[int]) -> list[float]:
    """+1 shared among the lowest totals, -1 shared among the rest; all 0 on an all-way tie."""
    low = min(scores)
    won = [s == low for s in scores]
    k = sum(won)
    if k == len(scores):
        return [0.0] * len(scores)
    return [1.0 / k if w else -1.0 / (len(scores) - k) for w in won]


def round_rewards(reward_mode: str, points: Sequence[int], scores: Sequence[int], game_over: bool) -> list[float]:
    """Every seat's reward at the step that ends a round.

    ``points``: the round's penalties; ``scores``: the game totals after it.
    """
    if reward_mode == "relative":
        return relative_rewards(points)
    if reward_mode == "penalty":
        return penalty_rewards(points)
    if reward_mode == "win":
        return win_rewards(scores) if game_over else [0.0] * len(points)
    raise ValueError(f"reward_mode={reward_mode!r} is not allowed: use one of {list(REWARD_MODES)}")


def relative_returns(scores: Any, scale: float = REWARD_SCALE) -> Any:
    """Per seat, the ``relative`` rewards summed over the game, from the integer totals.

    ``(total - n * s) / ((n - 1) * scale)``: the same sum as :func:`relative_rewards` over the
    rounds, computed once from the totals (OpenSpiel's returns, RLCard's payoffs).
    """
    if _is_array(scores):
        n = scores.shape[-1]
        total = scores.sum(-1)[..., None]
        return (total - n * scores) / ((n - 1) * scale)
    n, total = len(scores), sum(scores)
    return [(total - n * s) / ((n - 1) * scale) for s in scores]
