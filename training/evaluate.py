"""Evaluate agents against each other in duplicate games: ``python -m training.evaluate``.

    python -m training.evaluate expert-v0 greedy-v0 --games 2000 --seed 0 --workers 2 --json out.json

Agents (2 to 6) are registry names (``random-v0``, ``greedy-v0``, ``expert-v0``; see
``tt_env.agents.list_agents()``) or checkpoint paths (loaded by the plug-in registered with
``tt_env.agents.register_checkpoint_loader``). All of them sit at one table (N agents: an
N-player game). ``--games`` is the number of deals; each deal is played once per cyclic
rotation of the seats (``training.duplicate``), so ``games_played = games * N`` and every
agent plays every hand from every seat. Same ``--seed``, same numbers, whatever ``--workers``.

## JSON format (``--json PATH``), version ``three-thirteen-evaluation/1``

| key | meaning |
|---|---|
| ``format`` | ``"three-thirteen-evaluation/1"``; bumped if a key changes meaning |
| ``games`` | number of deals (duplicate games) |
| ``seatings`` | seatings per deal (N cyclic rotations) |
| ``games_played`` | ``games * seatings`` |
| ``seed``, ``rules`` | the run's seed and rule options (``Rules.to_dict()``) |
| ``agents`` | list, in command-line order, of ``{"name", "spec", "mean_score", "mean_score_ci95": [lo, hi], "win_rate", "win_rate_ci95": [lo, hi], "ms_per_move"}`` |
| ``pairwise`` | list of ``{"a", "b", "mean_score_diff", "ci95": [lo, hi]}`` for every ordered pair: a's mean final score minus b's (negative: a is better) |
| ``ci_method`` | how the intervals are computed (below) |
| ``seconds``, ``games_per_second`` | wall time (these and ``ms_per_move`` vary between runs; nothing else does) |

``name`` is the spec, with ``#2``, ``#3`` appended to repeats of one spec. Scores are final
game totals (lower is better). ``win_rate``: a game's win is shared among the k agents with
the lowest total (1/k each). Intervals are 95%, normal approximation over deals (games of one
deal are correlated; deals are independent): mean +/- 1.96 * sample sd / sqrt(deals) of the
per-deal means over the seatings. A win-rate interval is computed the same way with two
pseudo-deals added, one lost and one won (so that winning every deal does not give a
zero-width interval), and clipped to [0, 1].
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence

from tt_env.engine.rules import ACES_OPTIONS, Rules
from tt_env.jsonio import write_json

from .duplicate import GameRecord, run_deals
from .eval_stats import CI_METHOD, score_lists, summarize

FORMAT = "three-thirteen-evaluation/1"
MIN_AGENTS, MAX_AGENTS = 2, 6


def evaluate(specs: Sequence[str], games: int, seed: int, rules: Rules | None = None, workers: int = 1,
             progress: bool = False, allow_rule_mismatch: bool = False) -> tuple[dict, list]:
    """Play ``games`` deals among ``specs``; returns (the JSON report, the per-deal game records).

    ``allow_rule_mismatch``: checkpoint agents may play scoring rules they were not trained for.
    """
    if not MIN_AGENTS <= len(specs) <= MAX_AGENTS:
        raise ValueError(f"{len(specs)} agents given: evaluate {MIN_AGENTS} to {MAX_AGENTS} agents")
    if games < 1:
        raise ValueError(f"--games {games} is not allowed: play at least 1 game")
    rules = rules or Rules(num_players=len(specs))
    if rules.num_players != len(specs):
        raise ValueError(f"{len(specs)} agents need num_players={len(specs)}, got {rules.num_players}")
    start = time.perf_counter()
    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(TextColumn("[bold]deals"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                      transient=True) as bar:
            task = bar.add_task("deals", total=games)
            deals = run_deals(list(specs), rules, games, seed, workers,
                              on_deal=lambda _records: bar.advance(task), allow_rule_mismatch=allow_rule_mismatch)
    else:
        deals = run_deals(list(specs), rules, games, seed, workers, allow_rule_mismatch=allow_rule_mismatch)
    seconds = time.perf_counter() - start
    played = games * len(specs)
    report = {
        "format": FORMAT,
        "games": games,
        "seatings": len(specs),
        "games_played": played,
        "seed": seed,
        "rules": rules.to_dict(),
        **summarize(deals, list(specs)),
        "ci_method": CI_METHOD,
        "seconds": seconds,
        "games_per_second": played / seconds if seconds > 0 else 0.0,
    }
    return report, deals


def print_report(report: dict) -> None:
    """The report as a rich table: one row per agent, one column per opponent."""
    from rich.console import Console
    from rich.table import Table

    names = [a["name"] for a in report["agents"]]
    diffs = {(p["a"], p["b"]): p for p in report["pairwise"]}
    table = Table(title=f"{report['games']} duplicate games x {report['seatings']} seatings "
                        f"= {report['games_played']} games, seed {report['seed']}",
                  caption=f"{report['games_per_second']:.1f} games/s; score: final total, lower is better; "
                          f"'vs X': mean score minus X's [95% CI], negative is better")
    table.add_column("agent", style="bold")
    table.add_column("mean score", justify="right")
    table.add_column("win rate [95% CI]", justify="right")
    for other in names:
        table.add_column(f"vs {other}", justify="right")
    table.add_column("ms/move", justify="right")
    for a in report["agents"]:
        lo, hi = a["win_rate_ci95"]
        cells = [a["name"], f"{a['mean_score']:.1f}", f"{a['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]"]
        for other in names:
            p = diffs.get((a["name"], other))
            cells.append("" if p is None else f"{p['mean_score_diff']:+.2f} [{p['ci95'][0]:+.2f}, {p['ci95'][1]:+.2f}]")
        cells.append(f"{a['ms_per_move']:.2f}")
        table.add_row(*cells)
    Console().print(table)


def plot_scores(deals: list, names: Sequence[str], path: str) -> None:
    """PNG of the distribution of final scores, one histogram per agent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, scores in zip(names, score_lists(deals, len(names))):
        ax.hist(scores, bins=40, alpha=0.5, label=name)
    ax.set_xlabel("final score (lower is better)")
    ax.set_ylabel("games")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def rules_from_args(args: argparse.Namespace, num_agents: int) -> Rules:
    """The :class:`Rules` of the command-line rule options."""
    options: dict = {"num_players": num_agents, "aces": args.aces,
                     "discard_drawn_discard": args.discard_drawn_discard,
                     "max_turns_per_round": args.max_turns_per_round,
                     "meld_needs_natural": args.meld_needs_natural}
    if args.decks != "auto":
        try:
            options["decks"] = int(args.decks)
        except ValueError:
            raise ValueError(f"--decks {args.decks!r} is not allowed: use 'auto' or a positive integer") from None
    if args.rounds:
        try:
            options["rounds"] = tuple(int(r) for r in args.rounds.split(","))
        except ValueError:
            raise ValueError(f"--rounds {args.rounds!r} is not allowed: give comma-separated round "
                             f"numbers 1..11, such as '11' or '1,2,3'") from None
    return Rules(**options)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m training.evaluate", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agents", nargs="+", help="2 to 6 registry names or checkpoint paths")
    parser.add_argument("--games", type=int, default=200, help="deals, each played once per seating (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the agents (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--json", metavar="PATH", help="write the report as JSON to PATH")
    parser.add_argument("--plot", metavar="PATH", help="write a PNG of the score distributions to PATH")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--save-games", metavar="DIR",
                        help="save every game as a replayable record (python -m tt_env.replay)")
    rules = parser.add_argument_group("rule options (README, 'Options')")
    rules.add_argument("--decks", default="auto", help="'auto' or a number of decks")
    rules.add_argument("--aces", default="low", choices=ACES_OPTIONS)
    rules.add_argument("--rounds", default="", help="comma-separated rounds to play, e.g. '11' (default all)")
    rules.add_argument("--discard-drawn-discard", action="store_true")
    rules.add_argument("--max-turns-per-round", type=int, default=200)
    rules.add_argument("--meld-needs-natural", action="store_true")
    rules.add_argument("--allow-rule-mismatch", action="store_true",
                       help="let checkpoint agents play aces / meld_needs_natural rules they were not trained with")
    return parser


def main(argv: Sequence[str] | None = None) -> dict:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not MIN_AGENTS <= len(args.agents) <= MAX_AGENTS:
        parser.error(f"{len(args.agents)} agents given: evaluate {MIN_AGENTS} to {MAX_AGENTS} agents")
    try:
        rules = rules_from_args(args, len(args.agents))
        report, deals = evaluate(args.agents, args.games, args.seed, rules, args.workers, progress=not args.quiet,
                                 allow_rule_mismatch=args.allow_rule_mismatch)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    print_report(report)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        write_json(args.json, report)
    if args.plot:
        plot_scores(deals, [a["name"] for a in report["agents"]], args.plot)
    if args.save_games:
        count = save_games(deals, args.agents, rules, args.seed, args.save_games)
        print(f"saved {count} game records to {args.save_games}")
    return report


def save_games(deals: Sequence[Sequence[GameRecord]], specs: Sequence[str], rules: Rules, seed: int,
               directory: str) -> int:
    """Write each game as ``DIR/dealNNNNN-rotR.json`` in the format of ``tt_env.records``."""
    from tt_env.records import record_from_game, save_record

    os.makedirs(directory, exist_ok=True)
    count = 0
    for deal in deals:
        for g in deal:
            by_seat = sorted(range(len(specs)), key=lambda i: g.seats[i])  # agent index at each seat
            record = record_from_game(rules, [seed, g.deal, 0], [specs[i] for i in by_seat], list(g.actions),
                                      [g.scores[i] for i in by_seat], reshuffle_seed=[seed, g.deal, 1])
            save_record(record, os.path.join(directory, f"deal{g.deal:05d}-rot{g.rotation}.json"))
            count += 1
    return count


if __name__ == "__main__":
    main()
