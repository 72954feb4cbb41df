"""A multi-agent loop over the batched engine: a different agent in each seat, every table at once.

Each step, the seat to move differs from table to table (``ts.seat``). Every agent acts for the
tables where its seat is to move, and one ``step`` advances the whole batch. Run it::

    python docs/examples/batch_multi_agent.py
"""

from __future__ import annotations

import torch

from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchGreedy, BatchRandom
from tt_env.engine.rules import Rules


def main(num_tables: int = 256, games: int = 200, device: str = "cpu", rounds: tuple[int, ...] = (1, 2, 3)
         ) -> torch.Tensor:
    rules = Rules(num_players=3, rounds=rounds)
    game = BatchGame(rules, num_tables, device=device, seed=0)
    seats = [BatchGreedy(rules), BatchRandom(rules, seed=1, device=device), BatchGreedy(rules)]
    totals = torch.zeros(rules.num_players, device=device)  # rewards summed over every game
    wins = torch.zeros(rules.num_players, device=device)
    finished = 0
    ts = game.reset()
    while finished < games:
        actions = torch.zeros(num_tables, dtype=torch.int64, device=device)
        for seat, agent in enumerate(seats):
            rows = (ts.seat == seat).nonzero().squeeze(1)  # the tables where this seat is to move
            actions[rows] = agent.act(ts.observation[rows], ts.action_mask[rows])
        ts = game.step(actions)
        totals += ts.rewards.sum(dim=0)
        over = ts.game_over
        lowest = ts.scores == ts.scores.min(dim=1, keepdim=True).values
        wins += (lowest & over.unsqueeze(1)).sum(dim=0)
        finished += int(over.sum())
    print(f"{finished} games; relative reward per game by seat: {(totals / finished).tolist()}")
    print(f"wins (ties count for each) by seat: {wins.tolist()}")
    return totals / finished


if __name__ == "__main__":
    main()
