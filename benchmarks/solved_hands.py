"""How many hands a GPU step solves: ``BatchGame(solving="gathered")`` against ``"kept"``.

Run from the repository root::

    python benchmarks/solved_hands.py                     # 2 and 4 players, random-v0 and greedy-v0
    python benchmarks/solved_hands.py --tables 512 --steps 2000 --players 2

The meld program is most of a GPU step (docs/batched-engine.md). On the every-row path a GPU
takes, ``solving="kept"`` solves the mover's hand at every table at every discard; ``"gathered"``
solves only the discarded hands that could meld completely (``could_meld_completely``) and, at
a round's end, the hands of the tables whose round ends, gathered to the front of the batch so
that the fused kernels stop after them. This counts both on a CPU: the same code as on a GPU
(every row, no picking of rows), with the C solver for speed, counting the hands the gathered
path asks for. The count does not depend on the device; what a solved hand costs does, and
``benchmarks/gpu_figures.sh`` times both modes on a GPU.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import print_header, print_table  # noqa: E402

from tt_env.batch import BatchGame, go_out  # noqa: E402
from tt_env.batch.agents import BatchGreedy, BatchRandom  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402


def count_solved(players: int, policy: str, tables: int, steps: int, seed: int) -> dict[str, float]:
    """Hands solved per decision by each mode, over ``steps`` lockstep steps of ``tables`` tables."""
    rules = Rules(num_players=players)
    game = BatchGame(rules, tables, seed=seed, check_actions=False, solving="gathered")
    game._sparse = False  # the every-row path a GPU takes (the tests do the same)
    solved = torch.zeros((), dtype=torch.int64)
    solve = go_out.solve_gathered

    def counting(hands: torch.Tensor, wild: torch.Tensor, need: torch.Tensor, *args: object) -> torch.Tensor:
        solved.add_(need.sum())
        return solve(hands, wild, need, *args)

    go_out.solve_gathered = counting  # (the engine's gathered solving calls it by this name)
    try:
        agent = BatchGreedy(rules) if policy == "greedy-v0" else BatchRandom(rules, seed=seed)
        ts = game.reset()
        discard_steps = rounds = 0
        for _ in range(steps):
            discarding = game._lockstep_phase == 1
            ts = game.step(agent.act(ts.observation, ts.action_mask))
            discard_steps += discarding
            rounds += int(ts.round_over.sum())
    finally:
        go_out.solve_gathered = solve
    decisions = tables * steps
    kept = tables * discard_steps  # every table's mover at every discard step
    return {"gathered": int(solved) / decisions, "kept": kept / decisions, "ratio": kept / max(1, int(solved)),
            "rounds": rounds / tables}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1000, help="lockstep steps (half of them discards)")
    parser.add_argument("--players", default="2,4", help="comma-separated player counts")
    parser.add_argument("--policies", default="random-v0,greedy-v0", help="subset of random-v0,greedy-v0")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    if not policies or set(policies) - {"random-v0", "greedy-v0"}:
        raise SystemExit(f"--policies {args.policies!r}: choose from random-v0, greedy-v0 (comma-separated)")
    if args.tables < 1 or args.steps < 2:
        raise SystemExit("--tables must be >= 1 and --steps >= 2")
    print_header("Hands solved per decision on the every-row (GPU) path: solving='gathered' vs 'kept'", vars(args))
    rows = []
    for players in (int(p) for p in args.players.split(",")):
        for policy in policies:
            r = count_solved(players, policy, args.tables, args.steps, args.seed)
            rows.append([f"{players}p {policy}", f"{r['kept']:.3f}", f"{r['gathered']:.4f}", f"{r['ratio']:.1f}x",
                         f"{r['rounds']:.1f}"])
            print(f"  {rows[-1][0]}: kept {rows[-1][1]}, gathered {rows[-1][2]} hands per decision", flush=True)
    print()
    print_table(["play", "kept: hands/decision", "gathered: hands/decision", "kept / gathered", "rounds/table"], rows)


if __name__ == "__main__":
    main()
