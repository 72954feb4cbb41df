"""Credit assignment for batched rollouts: who earned what, per (table, seat), and GAE along it.

Each (table, seat) the learner plays is its own trajectory. A decision's reward is everything
that seat earned (``TimeStep.rewards[:, seat]``) from the move it made until its next decision
at that table; a game's end (``game_over``) closes every open decision of that table as
terminal; decisions still open when the rollout stops are bootstrapped with the value of their
seat's position then. Advantages (GAE) follow each trajectory's links, however the tables and
seats interleave.

Positions are step-major: the decision of table ``b`` at rollout step ``t`` is ``t * B + b`` (a
table makes at most one decision per step), so every quantity is a flat (T * B,) tensor on the
rollout's device and nothing loops over tables in Python.
"""

from __future__ import annotations

import torch


class Trajectories:
    """Open decisions and their rewards, per (table, seat), over one rollout of ``steps`` steps."""

    def __init__(self, num_tables: int, num_players: int, steps: int, device: torch.device) -> None:
        b, size = num_tables, num_tables * steps
        self.num_tables = b
        self.device = device
        self.open_pos = torch.full((b, num_players), -1, dtype=torch.int64, device=device)
        """(B, N) position of each seat's open decision, -1 where none is open."""
        self.earned = torch.zeros(b, num_players, device=device)
        """(B, N) reward each open decision has earned so far."""
        self.value = torch.zeros(size, device=device)
        self.reward = torch.zeros(size, device=device)
        self.next_value = torch.zeros(size, device=device)
        self.done = torch.zeros(size, device=device)
        self.next_pos = torch.full((size,), -1, dtype=torch.int64, device=device)

    def decide(self, step: int, rows: torch.Tensor, seats: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Record decisions of ``seats`` at tables ``rows`` (value ``values``) at ``step``; returns
        their positions. Each seat's previous open decision is closed: its reward is what it
        earned since, it links to this one and bootstraps from this value."""
        pos = step * self.num_tables + rows
        prev = self.open_pos[rows, seats]
        has = prev >= 0
        p = prev[has]
        self.reward[p] = self.earned[rows, seats][has]
        self.next_value[p] = values[has].float()
        self.next_pos[p] = pos[has]
        self.value[pos] = values.float()
        self.open_pos[rows, seats] = pos
        self.earned[rows, seats] = 0.0
        return pos

    def earn(self, rewards: torch.Tensor, game_over: torch.Tensor) -> None:
        """Add one step's ``rewards`` (B, N) to the open decisions; close a finished game's as terminal."""
        is_open = self.open_pos >= 0
        self.earned += torch.where(is_open, rewards.float(), 0.0)
        closing = is_open & game_over.unsqueeze(1)
        p = self.open_pos[closing]
        self.reward[p] = self.earned[closing]
        self.next_value[p] = 0.0
        self.done[p] = 1.0
        self.open_pos[closing] = -1
        self.earned[closing] = 0.0

    def open_decisions(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(tables, seats) of the decisions still open."""
        rows, seats = (self.open_pos >= 0).nonzero(as_tuple=True)
        return rows, seats

    def cut(self, rows: torch.Tensor, seats: torch.Tensor, values: torch.Tensor) -> None:
        """Close the open decisions of (``rows``, ``seats``) at the rollout's end, bootstrapping
        from ``values`` (their seats' values now); what they earned so far is their reward."""
        p = self.open_pos[rows, seats]
        self.reward[p] = self.earned[rows, seats]
        self.next_value[p] = values.float()
        self.open_pos[rows, seats] = -1
        self.earned[rows, seats] = 0.0

    def advantages(self, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
        """(advantages, returns) at every position (meaningful at the decided ones): GAE along each
        trajectory's links, computed backwards one step (B positions) at a time."""
        if bool((self.open_pos >= 0).any()):
            raise RuntimeError("advantages() with decisions still open: cut() them first")
        b = self.num_tables
        not_done = 1.0 - self.done
        delta = self.reward + gamma * not_done * self.next_value - self.value
        adv = torch.zeros_like(delta)
        steps = delta.numel() // b
        for t in range(steps - 1, -1, -1):
            pos = slice(t * b, (t + 1) * b)
            nxt = self.next_pos[pos]
            follow = torch.where(nxt >= 0, adv[nxt.clamp(min=0)], 0.0)
            adv[pos] = delta[pos] + gamma * lam * not_done[pos] * follow
        return adv, adv + self.value
