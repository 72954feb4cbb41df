"""Statistics of a duplicate evaluation, computed over deal groups.

The games of one deal (one per seating) share their cards, so they are not independent;
deals are. Every interval here is therefore taken over per-deal values: for each deal, the
mean over its seatings of the quantity (an agent's final score, its win share, a score
difference between two agents), then a normal-approximation 95% interval
``mean +/- 1.96 * sd / sqrt(deals)`` over the deals (sample sd; width 0 with one deal). Win
shares split a tie: each of the k agents with the lowest score gets 1/k. A win-rate interval
is the same normal interval computed with two pseudo-deals added, one lost and one won (the
Agresti-Coull idea), so that an agent that won every deal still gets an interval of nonzero
width, then clipped to [0, 1]; the reported win rate itself is the plain mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .duplicate import GameRecord

Z95 = 1.959963984540054
CI_METHOD = ("normal approximation over deals: mean +/- 1.96 * sample sd / sqrt(deals) of the per-deal "
             "means over the seatings; win rates: the same with one lost and one won pseudo-deal added, "
             "clipped to [0, 1]")


def mean_ci(values: np.ndarray) -> tuple[float, list[float] | None]:
    """Mean and normal 95% interval of independent per-deal values (``None`` for one value)."""
    if len(values) < 1:
        raise ValueError("no values: an interval needs at least one deal")
    mean = float(np.mean(values))
    if len(values) < 2:
        return mean, None
    half = Z95 * float(np.std(values, ddof=1)) / math.sqrt(len(values))
    return mean, [mean - half, mean + half]


def win_rate_ci(shares: np.ndarray) -> list[float]:
    """95% interval of a win rate from per-deal win shares: :func:`mean_ci` with one lost and one
    won pseudo-deal added (nonzero width at 0% and 100%), clipped to [0, 1]."""
    _, interval = mean_ci(np.concatenate([shares, [0.0, 1.0]]))
    assert interval is not None  # the pseudo-deals make at least three values
    lo, hi = interval
    return [max(0.0, lo), min(1.0, hi)]


def interval_text(interval: Sequence[float] | None, spec: str) -> str:
    """``[lo, hi]`` formatted with ``spec`` (such as ``"+.2f"``), or ``n/a (1 deal)`` when undefined."""
    if interval is None:
        return "n/a (1 deal)"
    lo, hi = interval
    return f"[{lo:{spec}}, {hi:{spec}}]"


def unique_names(specs: Sequence[str]) -> list[str]:
    """Display names: the specs, with ``#2``, ``#3``... on repeats of the same spec."""
    seen: dict[str, int] = {}
    names = []
    for s in specs:
        seen[s] = seen.get(s, 0) + 1
        names.append(s if seen[s] == 1 else f"{s}#{seen[s]}")
    return names


def summarize(deals: Sequence[Sequence[GameRecord]], specs: Sequence[str]) -> dict:
    """The ``agents`` and ``pairwise`` parts of the JSON report (see ``tt_env.evaluation.evaluator``)."""
    n = len(specs)
    names = unique_names(specs)
    scores = np.array([[g.scores for g in deal] for deal in deals], dtype=float)  # (deals, seatings, agents)
    shares = np.array([[g.win_shares for g in deal] for deal in deals], dtype=float)
    per_deal_score = scores.mean(axis=1)
    per_deal_share = shares.mean(axis=1)
    moves = np.array([sum(g.moves[i] for deal in deals for g in deal) for i in range(n)], dtype=float)
    think = np.array([sum(g.think_seconds[i] for deal in deals for g in deal) for i in range(n)])
    agents = []
    for i in range(n):
        mean, ci = mean_ci(per_deal_score[:, i])
        rate = float(np.mean(per_deal_share[:, i]))
        agents.append({
            "name": names[i],
            "spec": specs[i],
            "mean_score": mean,
            "mean_score_ci95": ci,
            "win_rate": rate,
            "win_rate_ci95": win_rate_ci(per_deal_share[:, i]),
            "ms_per_move": 1000.0 * float(think[i] / moves[i]) if moves[i] else 0.0,
        })
    pairwise = []
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            diff, ci = mean_ci(per_deal_score[:, a] - per_deal_score[:, b])
            pairwise.append({"a": names[a], "b": names[b], "mean_score_diff": diff, "ci95": ci})
    return {"agents": agents, "pairwise": pairwise}


def score_lists(deals: Sequence[Sequence[GameRecord]], num_agents: int) -> list[list[int]]:
    """Every final score of each agent (one per game), for the distribution plot."""
    return [[g.scores[i] for deal in deals for g in deal] for i in range(num_agents)]
