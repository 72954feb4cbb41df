"""The leaderboard: every agent against expert-v0 at 2, 3 and 4 players, in duplicate games.

    python -m training.leaderboard --players 2 3 4 --deals 300 --workers 2 --json leaderboard.json

For each agent A and player count N, A sits at a table with N - 1 copies of ``expert-v0``
(``python -m training.evaluate A expert-v0 ...``): every deal is played once per seating, so
A plays every hand from every seat. A row reports the mean over deals of A's final score minus
the mean of the expert-v0 seats' (negative: A is better) with its 95% interval over deals, A's
win rate (a tie shares the win) with its interval, and A's time per move. ``expert-v0`` itself
is the reference (0 by construction) and is not played. A checkpoint agent plays only at the
player count it was trained for; other cells are skipped. The markdown table it prints is the
one in docs/evaluation.md.

Every agent and path is checked before the first game (unknown names, missing or damaged
checkpoints, a ``--json`` that cannot be written or that exists without ``--overwrite``,
``--deals-for`` an agent not ranked), and ``--json`` is rewritten after every cell, so a crash or
Ctrl-C loses at most the cell it was in.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from tt_env.cli_checks import CommandParser, int_at_least, output_file_problem, players_arg, seed_arg, workers_note
from tt_env.agents.registry import trained_agent_names, trained_players
from tt_env.engine.rules import Rules
from tt_env.jsonio import write_json

from .duplicate import run_deals
from .stats import interval_text, mean_ci, win_rate_ci

REFERENCE = "expert-v0"
SCRIPTED = ("random-v0", "greedy-v0", "ismcts-v0")
FORMAT = "three-thirteen-leaderboard/1"


def default_agents() -> list[str]:
    """The scripted agents, the search agents on shipped networks and every shipped checkpoint (no torch needed)."""
    return [*SCRIPTED, *trained_agent_names()]


def players_of(spec: str) -> int | None:
    """The player count a checkpoint agent was trained for; None for a scripted agent (any count)."""
    from tt_env.agents import list_agents

    players = trained_players(spec)
    if players is not None:
        return players
    if spec in list_agents():
        return None
    raise ValueError(f"unknown agent {spec!r}: use a checkpoint path or one of {list_agents()}")


def check_agents(agents: Sequence[str], players: Sequence[int]) -> dict[str, int | None]:
    """The player count each agent was trained for (None: any), after building every agent of every cell.

    Run before the first game: an unknown name, a missing, damaged or mismatched checkpoint,
    or an agent that cannot be built is a ``ValueError`` here, not after the cells before it.
    """
    from tt_env.agents import make_agent

    trained_for = {a: players_of(a) for a in agents}
    for a in agents:
        for n in players:
            if a != REFERENCE and trained_for[a] in (None, n):
                make_agent(a, Rules(num_players=n))  # loads the weights: a damaged file fails now
    return trained_for


def write_rows(path: str, seed: int, rows: list[dict]) -> None:
    """The leaderboard so far as JSON (rewritten after each cell, so a crash loses at most the cell it was in)."""
    write_json(path, {"format": FORMAT, "seed": seed, "reference": REFERENCE, "rows": rows})


def versus_reference(spec: str, num_players: int, deals: int, seed: int, workers: int) -> dict:
    """One leaderboard cell: ``spec`` against ``num_players - 1`` expert-v0 seats."""
    rules = Rules(num_players=num_players)
    start = time.perf_counter()
    records = run_deals([spec] + [REFERENCE] * (num_players - 1), rules, deals, seed, workers)
    seconds = time.perf_counter() - start
    diffs = np.array([np.mean([g.scores[0] - np.mean(g.scores[1:]) for g in deal]) for deal in records])
    shares = np.array([np.mean([g.win_shares[0] for g in deal]) for deal in records])
    moves = sum(g.moves[0] for deal in records for g in deal)
    think = sum(g.think_seconds[0] for deal in records for g in deal)
    mean, interval = mean_ci(diffs)
    return {"agent": spec, "players": num_players, "deals": deals, "games": deals * num_players,
            "score_diff": mean, "ci95": interval,
            "win_rate": float(shares.mean()), "win_rate_ci95": win_rate_ci(shares),
            "ms_per_move": 1000.0 * think / max(moves, 1), "seconds": seconds}


def markdown(rows: Sequence[dict]) -> str:
    """The leaderboard as a markdown table, one line per agent, one column group per player count."""
    counts = sorted({r["players"] for r in rows})
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    cells = {(r["agent"], r["players"]): r for r in rows}
    head = "| agent | " + " | ".join(f"{n}p: vs expert-v0 [95% CI] | {n}p: win rate" for n in counts) + " |"
    lines = [head, "|---|" + "---|---|" * len(counts)]
    lines.append(f"| {REFERENCE} (reference) | " + " | ".join("0 | " + f"{1 / n:.3f}" for n in counts) + " |")
    for a in agents:
        parts = []
        for n in counts:
            r = cells.get((a, n))
            if r is None:
                parts.append("- | -")
            else:
                parts.append(f"{r['score_diff']:+.2f} {interval_text(r['ci95'], '+.2f')} | {r['win_rate']:.3f}")
        lines.append(f"| {a} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> list[dict]:
    parser = CommandParser(prog="python -m training.leaderboard", description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", default=None,
                        help=f"agents to rank (default: {' '.join(default_agents())})")
    parser.add_argument("--players", nargs="+", type=players_arg, default=[2, 3, 4],
                        help="player counts, 2..8 (default 2 3 4)")
    parser.add_argument("--deals", type=int_at_least(1), default=100, help="duplicate deals per cell (default 100)")
    parser.add_argument("--deals-for", nargs=2, action="append", default=[], metavar=("AGENT", "DEALS"),
                        help="another number of deals for one agent (repeatable), e.g. --deals-for ismcts-v0 300")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the deals (default 0)")
    parser.add_argument("--workers", type=int_at_least(1), default=1, help="worker processes (default 1)")
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON to PATH")
    parser.add_argument("--overwrite", action="store_true", help="replace --json if it exists before the run")
    args = parser.parse_args(argv)
    args.agents = list(dict.fromkeys(args.agents or default_agents()))
    args.players = list(dict.fromkeys(args.players))
    if args.json:
        problem = output_file_problem(args.json, suffixes=(".json",), overwrite=args.overwrite)
        if problem:
            parser.error(f"--json {args.json}: {problem}")
    deals_for = {}
    for agent, count in args.deals_for:
        if agent not in args.agents:
            parser.error(f"--deals-for {agent} {count}: {agent!r} is not one of the agents ranked {args.agents}")
        try:
            deals_for[agent] = int_at_least(1)(count)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"--deals-for {agent} {count}: {exc}")
    try:
        trained_for = check_agents(args.agents, args.players)
    except (ValueError, KeyError, TypeError, OSError) as exc:
        parser.error(f"cannot rank the agents: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
    cells = [(n, a) for n in args.players for a in args.agents if a != REFERENCE and trained_for[a] in (None, n)]
    if not cells:
        parser.error(f"no cell to play: each agent of {args.agents} plays only at a player count other than "
                     f"--players {' '.join(map(str, args.players))} (or is the reference {REFERENCE})")
    note = workers_note(args.workers)
    if note:
        print(note, file=sys.stderr)  # (as evaluate: stdout holds the table)
    rows: list[dict] = []
    for n, a in cells:
        row = versus_reference(a, n, deals_for.get(a, args.deals), args.seed, args.workers)
        rows.append(row)
        print(f"{a} at {n} players: {row['score_diff']:+.2f} {interval_text(row['ci95'], '+.2f')}, "
              f"win rate {row['win_rate']:.3f}, {row['ms_per_move']:.3g} ms/move, {row['seconds']:.0f} s",
              flush=True)
        if args.json:
            write_rows(args.json, args.seed, rows)
    print(markdown(rows))
    return rows


if __name__ == "__main__":
    main()
