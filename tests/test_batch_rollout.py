"""``training.ppo.batch_rollout.Trajectories``: credit assignment per (table, seat) and GAE along it,
on hand-computed cases."""

from __future__ import annotations

import pytest
import torch

from training.ppo.batch_rollout import Trajectories


def test_trajectories_hand_computed_case():
    """2 tables, 2 seats: rewards go to the seat that earned them, until its next decision."""
    traj = Trajectories(2, 2, 4, torch.device("cpu"))
    seat = lambda *s: torch.tensor(s)  # noqa: E731
    v = lambda *x: torch.tensor(x, dtype=torch.float32)  # noqa: E731
    traj.decide(0, seat(0, 1), seat(0, 1), v(0.1, 0.2))          # t0: table 0 seat 0, table 1 seat 1
    traj.earn(torch.tensor([[1.0, -1.0], [0.0, 0.0]]), torch.tensor([False, False]))
    traj.decide(1, seat(0, 1), seat(1, 0), v(0.3, 0.4))          # t1: table 0 seat 1, table 1 seat 0
    traj.earn(torch.tensor([[2.0, 5.0], [0.0, 7.0]]), torch.tensor([False, False]))
    traj.decide(2, seat(0), seat(0), v(0.5))                     # t2: table 0 seat 0 again
    traj.earn(torch.tensor([[0.0, 0.0], [3.0, -3.0]]), torch.tensor([False, True]))  # table 1's game ends
    traj.decide(3, seat(1), seat(1), v(0.6))                     # t3: table 1 seat 1, new game
    traj.earn(torch.tensor([[4.0, 4.0], [1.0, 1.0]]), torch.tensor([False, False]))
    rows, seats = traj.open_decisions()
    assert sorted(zip(rows.tolist(), seats.tolist(), strict=True)) == [(0, 0), (0, 1), (1, 1)]
    traj.cut(rows, seats, torch.full((3,), 9.0))
    pos = lambda t, b: t * 2 + b  # noqa: E731
    # table 0 seat 0: decided at t0, earned 1 (t0) + 2 (t1) before deciding again at t2, then 4 (t3), cut
    assert traj.reward[pos(0, 0)] == 3.0 and traj.next_pos[pos(0, 0)] == pos(2, 0)
    assert traj.next_value[pos(0, 0)] == pytest.approx(0.5)
    assert traj.reward[pos(2, 0)] == 4.0 and traj.next_value[pos(2, 0)] == 9.0 and traj.done[pos(2, 0)] == 0
    # table 0 seat 1: decided at t1: 5 (t1) + 0 (t2) + 4 (t3); the -1 of t0 was before its decision
    assert traj.reward[pos(1, 0)] == 9.0 and traj.next_pos[pos(1, 0)] == -1
    # table 1 seat 1: decided at t0: 0 + 7 + (-3), game over at t2: terminal
    assert traj.reward[pos(0, 1)] == 4.0 and traj.done[pos(0, 1)] == 1 and traj.next_pos[pos(0, 1)] == -1
    # table 1 seat 0: decided at t1: 0 + 3, game over
    assert traj.reward[pos(1, 1)] == 3.0 and traj.done[pos(1, 1)] == 1
    # table 1 seat 1 in the new game: 1 (t3), cut
    assert traj.reward[pos(3, 1)] == 1.0 and traj.next_value[pos(3, 1)] == 9.0
    adv, ret = traj.advantages(0.5, 1.0)
    # GAE along table 0 seat 0: delta0 = 3 + 0.5 * 0.5 - 0.1, delta2 = 4 + 0.5 * 9 - 0.5
    assert adv[pos(2, 0)] == pytest.approx(8.0)
    assert adv[pos(0, 0)] == pytest.approx(3.15 + 0.5 * 8.0)
    assert ret[pos(0, 1)] == pytest.approx(4.0)


def test_a_decision_at_the_first_position_is_open_until_cut():
    """Table 0's decision at step 0 sits at position 0: it is open, advantages() refuses to run
    before it is cut, and the cut bootstraps it."""
    traj = Trajectories(2, 2, 2, torch.device("cpu"))
    traj.decide(0, torch.tensor([0]), torch.tensor([1]), torch.tensor([0.25]))
    traj.earn(torch.tensor([[0.0, 2.0], [0.0, 0.0]]), torch.tensor([False, False]))
    rows, seats = traj.open_decisions()
    assert rows.tolist() == [0] and seats.tolist() == [1]
    with pytest.raises(RuntimeError, match="decisions still open"):
        traj.advantages(0.5, 1.0)
    traj.cut(rows, seats, torch.tensor([4.0]))
    adv, ret = traj.advantages(0.5, 1.0)
    assert traj.reward[0] == 2.0 and adv[0] == pytest.approx(2.0 + 0.5 * 4.0 - 0.25)
    assert ret[0] == pytest.approx(4.0)
