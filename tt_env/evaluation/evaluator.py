"""Evaluate agents against each other in duplicate games: ``python -m training.evaluate``.

    python -m training.evaluate expert-v0 greedy-v0 --games 2000 --seed 0 --workers 2 --json out.json

Agents (2 to 6) are registry names (``random-v0``, ``greedy-v0``, ``expert-v0``; see
``tt_env.agents.list_agents()``) or checkpoint paths (loaded by the plug-in registered with
``tt_env.agents.register_checkpoint_loader``). All of them sit at one table (N agents: an
N-player game). ``--games`` is the number of deals; each deal is played once per seating
(``tt_env.evaluation.duplicate``), so every agent plays every hand from every seat:
``--seatings rotations`` plays the N cyclic rotations of the seats, ``permutations`` all N!
orders, so that who sits after whom (who takes whose discards) cancels out as well; with three
or more different agents, rotations alone give numbers that depend on the order the agents are
named in. The default, ``auto``, is ``permutations`` for three or more different agents at a
table of up to 4 (at most 24 games a deal), else ``rotations``: at 2 agents the two are the
same, one agent against copies of another is seated every way by the rotations, and 5 or 6
agents have 120 or 720 orders.
``games_played = games * seatings``. Same ``--seed``, same numbers, whatever ``--workers`` and
``--batch-size``.

``--batch-size N`` (default 256): each worker plays N games side by side and asks a network
agent for the decisions of all the games waiting on it in one batched call
(``tt_env.evaluation.duplicate``, ``CheckpointAgent.act_batch``); scripted agents still act one game at
a time. ``--batch-size 1`` plays one game at a time (the path before batching: slower, the
same numbers).

## JSON format (``--json PATH``), version ``three-thirteen-evaluation/1``

| key | meaning |
|---|---|
| ``format`` | ``"three-thirteen-evaluation/1"``; bumped if a key changes meaning |
| ``games`` | number of deals (duplicate games) |
| ``seatings`` | seatings per deal (N cyclic rotations, or N! orders) |
| ``seating`` | ``"rotations"`` or ``"permutations"`` |
| ``games_played`` | ``games * seatings`` |
| ``seed``, ``rules`` | the run's seed and rule options (``Rules.to_dict()``) |
| ``agents`` | list, in command-line order, of ``{"name", "spec", "mean_score", "mean_score_ci95": [lo, hi] (null with one deal), "win_rate", "win_rate_ci95": [lo, hi], "ms_per_move"}`` |
| ``pairwise`` | list of ``{"a", "b", "mean_score_diff", "ci95": [lo, hi]}`` (``ci95`` null with one deal) for every ordered pair: a's mean final score minus b's (negative: a is better) |
| ``ci_method`` | how the intervals are computed (below) |
| ``seconds``, ``games_per_second`` | wall time (these and ``ms_per_move`` vary between runs; nothing else does) |

``ms_per_move`` is an agent's thinking time per decision: the time of its ``act`` calls, or,
for a batched call, the call's time shared evenly among the decisions it made.

``name`` is the spec, with ``#2``, ``#3`` appended to repeats of one spec. Scores are final
game totals (lower is better). ``win_rate``: a game's win is shared among the k agents with
the lowest total (1/k each). Intervals are 95%, normal approximation over deals (games of one
deal are correlated; deals are independent): mean +/- 1.96 * sample sd / sqrt(deals) of the
per-deal means over the seatings. With one deal there is no spread to estimate, so
``mean_score_ci95`` and ``ci95`` are ``null``; every other value is always a number. A
win-rate interval is computed the same way with two pseudo-deals added, one lost and one won
(so that winning every deal does not give a zero-width interval, and one deal gives an
interval), and clipped to [0, 1]. The file is strict JSON (no ``NaN``).

## Checks before the first game

Every argument is checked before a game is played: the numbers (``--games``, ``--workers`` >= 1,
``--seed`` >= 0, the rule options), the agents (unknown names, missing or unloadable
checkpoints) and the output paths (``--json``, ``--plot`` and ``--save-games`` must be
writable; ``--plot`` and ``--json`` name files, not folders, and an existing one is replaced
only with ``--overwrite``). ``--save-games DIR`` writes
``DIR/seed<S>-deal<NNNNN>-rot<R>.json`` (R: the seating); a folder that already holds ``.json`` files is refused
unless ``--append-games`` is given, and even then no existing file is overwritten.
"""  # noqa: E501  (markdown tables: one row a line)

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from tt_env.cli_checks import (CommandParser, add_rules_arguments, int_at_least, output_dir_problem,
                               output_file_problem, rules_from_args, seed_arg, significant, workers_note)
from tt_env.engine.rules import Rules
from tt_env.jsonio import write_json
from tt_env.optional import MissingDependencyError, require

from .duplicate import DEFAULT_BATCH_SIZE, SEATINGS, GameRecord, run_deals, seating_count
from .stats import CI_METHOD, interval_text, score_lists, summarize

FORMAT = "three-thirteen-evaluation/1"
MIN_AGENTS, MAX_AGENTS = 2, 6
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
APPEND_FLAG = "--append-games"
AUTO_PERMUTATIONS = 4
"""``seatings="auto"``: all orders of 3 or more different agents up to this many (24 games a deal)."""


def evaluate(specs: Sequence[str], games: int, seed: int, rules: Rules | None = None, workers: int = 1,
             progress: bool = False, allow_rule_mismatch: bool = False,
             batch_size: int = DEFAULT_BATCH_SIZE, on_deal: Callable[[list[GameRecord]], None] | None = None,
             seatings: str = "auto") -> tuple[dict, list]:
    """Play ``games`` deals among ``specs``; returns (the JSON report, the per-deal game records).

    ``allow_rule_mismatch``: checkpoint agents may play scoring rules they were not trained for.
    ``batch_size``: games played side by side in each worker (1: one at a time; same numbers).
    ``on_deal(records)`` is called as each deal finishes, in deal order (a progress bar's hook:
    the browser app's evaluations use it). ``seatings``: ``"auto"`` or one of ``SEATINGS``
    (module docstring).
    """
    if not MIN_AGENTS <= len(specs) <= MAX_AGENTS:
        raise ValueError(f"{len(specs)} agents given: evaluate {MIN_AGENTS} to {MAX_AGENTS} agents")
    if games < 1:
        raise ValueError(f"--games {games} is not allowed: play at least 1 game")
    if seed < 0:
        raise ValueError(f"--seed {seed} is not allowed: seeds are integers >= 0")
    if batch_size < 1:
        raise ValueError(f"--batch-size {batch_size} is not allowed: play 1 or more games side by side")
    rules = rules or Rules(num_players=len(specs))
    if rules.num_players != len(specs):
        raise ValueError(f"{len(specs)} agents need num_players={len(specs)}, got {rules.num_players}")
    seatings = resolved_seatings(seatings, specs)
    start = time.perf_counter()
    if progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        with Progress(TextColumn("[bold]deals"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                      transient=True) as bar:
            task = bar.add_task("deals", total=games)

            def advance(records: list[GameRecord]) -> None:
                bar.advance(task)
                if on_deal is not None:
                    on_deal(records)

            deals = run_deals(list(specs), rules, games, seed, workers, on_deal=advance,
                              allow_rule_mismatch=allow_rule_mismatch, batch_size=batch_size, seatings=seatings)
    else:
        deals = run_deals(list(specs), rules, games, seed, workers, on_deal=on_deal,
                          allow_rule_mismatch=allow_rule_mismatch, batch_size=batch_size, seatings=seatings)
    return build_report(deals, specs, games, seed, rules, time.perf_counter() - start, seatings), deals


def resolved_seatings(seatings: str, specs: Sequence[str]) -> str:
    """``"auto"`` as it seats ``specs``: every order where three or more different agents sit at a
    table of up to :data:`AUTO_PERMUTATIONS` (with one agent against copies of another, the order
    among the copies changes nothing, and the rotations are every arrangement); a scheme of
    ``SEATINGS`` as it is."""
    if seatings == "auto":
        mixed = len(set(specs)) >= 3 and len(specs) <= AUTO_PERMUTATIONS
        return "permutations" if mixed else "rotations"
    if seatings not in SEATINGS:
        raise ValueError(f"--seatings {seatings} is not allowed: use auto or one of {', '.join(SEATINGS)}")
    return seatings


def build_report(records: list, specs: Sequence[str], games: int, seed: int, rules: Rules, seconds: float,
                 seatings: str = "rotations") -> dict:
    """The JSON report of ``games`` deals' game ``records`` among ``specs`` (:func:`evaluate`'s)."""
    played = games * seating_count(len(specs), seatings)
    return {
        "format": FORMAT,
        "games": games,
        "seatings": seating_count(len(specs), seatings),
        "seating": seatings,
        "games_played": played,
        "seed": seed,
        "rules": rules.to_dict(),
        **summarize(records, list(specs)),
        "ci_method": CI_METHOD,
        "seconds": seconds,
        "games_per_second": played / seconds if seconds > 0 else 0.0,
    }


MAX_LABEL = 16
"""Widest agent label in the table (longer checkpoint paths are shortened, with a legend)."""


def short_labels(names: Sequence[str], width: int = MAX_LABEL) -> dict[str, str]:
    """A distinct short label for each agent name, for a table that fits 80 columns.

    A name's label is the shortest suffix of its path (``final.pt``, ``run_a/final.pt``) that
    no other name ends with; one still wider than ``width`` is cut to its last characters
    after an ellipsis, or, if that no longer tells it apart, becomes ``agent K`` (its place).
    Registry names such as ``expert-v0`` are their own label.
    """
    parts = {n: n.replace(os.sep, "/").split("/") for n in names}
    labels: dict[str, str] = {}
    for n in names:
        label = n
        for k in range(1, len(parts[n]) + 1):
            tail = parts[n][-k:]
            if not any(o != n and parts[o][-k:] == tail for o in names):
                label = "/".join(tail)
                break
        labels[n] = label
    for i, n in enumerate(names):
        if len(labels[n]) > width:
            cut = "…" + labels[n][-(width - 1):]
            taken = set(labels.values()) - {labels[n]}
            labels[n] = cut if cut not in taken else f"agent {i + 1}"
    return labels


def print_report(report: dict) -> None:
    """The report as a rich table: one row per agent, one column per opponent (short labels, with a legend)."""
    from rich.console import Console
    from rich.table import Table

    full = [a["name"] for a in report["agents"]]
    labels = short_labels(full)
    names = [labels[n] for n in full]
    diffs = {(labels[p["a"]], labels[p["b"]]): p for p in report["pairwise"]}
    table = Table(title=f"{report['games']} duplicate games x {report['seatings']} seatings "
                        f"= {report['games_played']} games, seed {report['seed']}",
                  caption=f"{significant(report['games_per_second'])} games/s; score: final total, lower is better; "
                          f"'vs X': mean score minus X's [95% CI], negative is better")
    # overflow="fold": a narrow column breaks a label over lines but never cuts it to an ellipsis,
    # so two columns cannot look alike
    table.add_column("agent", style="bold", overflow="fold", no_wrap=True)
    table.add_column("mean score", justify="right", overflow="fold")
    table.add_column("win rate [95% CI]", justify="right", overflow="fold")
    for other in names:
        table.add_column(f"vs {other}", justify="right", overflow="fold")
    table.add_column("ms/move", justify="right", overflow="fold")
    for a in report["agents"]:
        label = labels[a["name"]]
        cells = [label, f"{a['mean_score']:.1f}", f"{a['win_rate']:.3f} {interval_text(a['win_rate_ci95'], '.3f')}"]
        for other in names:
            p = diffs.get((label, other))
            cells.append("" if p is None else f"{p['mean_score_diff']:+.2f} {interval_text(p['ci95'], '+.2f')}")
        cells.append(significant(a["ms_per_move"]))
        table.add_row(*cells)
    console = Console()
    console.print(table)
    for name in full:
        if labels[name] != name:
            console.print(f"  {labels[name]}: {name}", highlight=False, markup=False, soft_wrap=True)


def plot_scores(deals: list, names: Sequence[str], path: str) -> None:
    """PNG of the distribution of final scores, one histogram per agent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, scores in zip(names, score_lists(deals, len(names)), strict=True):
        ax.hist(scores, bins=40, alpha=0.5, label=name)
    ax.set_xlabel("final score (lower is better)")
    ax.set_ylabel("games")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="python -m training.evaluate", description=__doc__.split("\n\n")[0],
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agents", nargs="+", help="2 to 6 registry names or checkpoint paths")
    parser.add_argument("--games", type=int_at_least(1), default=200,
                        help="deals (>= 1), each played once per seating (default 200)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the deals and the agents, >= 0 (default 0)")
    parser.add_argument("--seatings", choices=["auto", *SEATINGS], default="auto",
                        help=f"how each deal is seated: the N cyclic rotations, or all N! orders (who sits after "
                             f"whom cancels out too); auto (default): permutations for 3 or more different agents "
                             f"up to {AUTO_PERMUTATIONS}, else rotations")
    parser.add_argument("--workers", type=int_at_least(1), default=1, help="worker processes, >= 1 (default 1)")
    parser.add_argument("--batch-size", type=int_at_least(1), default=DEFAULT_BATCH_SIZE, metavar="N",
                        help=f"games each worker plays side by side, batching the decisions of network agents, "
                             f">= 1 (default {DEFAULT_BATCH_SIZE}); 1 plays one game at a time (same numbers)")
    parser.add_argument("--json", metavar="PATH", help="write the report as JSON to the file PATH")
    parser.add_argument("--plot", metavar="PATH",
                        help="write a picture of the score distributions to PATH (.png, .svg or .pdf)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the --json and --plot files if they exist (never a --save-games record)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--save-games", metavar="DIR",
                        help="save every game as a replayable record in DIR (python -m tt_env.ui.replay)")
    parser.add_argument(APPEND_FLAG, action="store_true",
                        help="let --save-games add to a folder that already holds records (never overwriting one)")
    rules = add_rules_arguments(parser)
    rules.add_argument("--allow-rule-mismatch", action="store_true",
                       help="let checkpoint agents play aces / meld_needs_natural rules they were not trained with")
    return parser


def record_name(seed: int, deal: int, rotation: int) -> str:
    """The file ``--save-games`` writes for one game: ``seed<S>-deal<NNNNN>-rot<R>.json``."""
    return f"seed{seed}-deal{deal:05d}-rot{rotation}.json"


def record_names(seatings: int, games: int, seed: int) -> Iterator[str]:
    """Every file name a run of ``games`` deals of ``seatings`` games each saves."""
    for deal in range(games):
        for rotation in range(seatings):
            yield record_name(seed, deal, rotation)


def is_record_of_run(path: str, directory: str, seatings: int, games: int, seed: int) -> bool:
    """Whether ``path`` is one of the records ``--save-games directory`` writes (:func:`record_names`),
    which would replace it: checked by the name's numbers, not by listing every name."""
    target = Path(os.path.abspath(path))
    if target.parent != Path(os.path.abspath(directory)):
        return False
    match = re.fullmatch(rf"seed{seed}-deal(\d{{5,}})-rot(\d+)\.json", target.name)
    if not match:
        return False
    deal, rotation = int(match[1]), int(match[2])
    return deal < games and rotation < seatings and target.name == record_name(seed, deal, rotation)


def is_kept_record(path: str, directory: str) -> bool:
    """Whether ``path`` is a game record already in ``--save-games directory`` (any run's: with
    ``--append-games`` the folder keeps earlier runs' records, which no report may replace)."""
    target = Path(os.path.abspath(path))
    return (target.parent == Path(os.path.abspath(directory)) and target.is_file()
            and re.fullmatch(r"seed\d+-deal\d{5,}-rot\d+\.json", target.name) is not None)


def save_games_problem(directory: str, seatings: int, games: int, seed: int, append: bool) -> str | None:
    """Why ``--save-games directory`` would fail or overwrite records (``None`` when it is fine)."""
    problem = output_dir_problem(directory)
    if problem:
        return f"--save-games {directory}: {problem}"
    folder = Path(directory)
    if not folder.is_dir():
        return None
    held = sorted(p.name for p in folder.glob("*.json"))
    if held and not append:
        return (f"--save-games {directory} already holds {len(held)} .json file(s) (such as {held[0]}): "
                f"give {APPEND_FLAG} to add this run's records to them, or choose another folder")
    clashes = [name for name in record_names(seatings, games, seed) if (folder / name).exists()]
    if clashes:
        return (f"--save-games {directory} already holds {clashes[0]}" +
                (f" and {len(clashes) - 1} more record(s)" if len(clashes) > 1 else "") +
                " that this run would overwrite: use another --seed or another folder")
    return None


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before any game, what would make the run fail or lose its results (one line, exit 2)."""
    if not MIN_AGENTS <= len(args.agents) <= MAX_AGENTS:
        parser.error(f"{len(args.agents)} agents given: evaluate {MIN_AGENTS} to {MAX_AGENTS} agents")
    for flag, path, suffixes in (("--json", args.json, ()), ("--plot", args.plot, PLOT_SUFFIXES)):
        if path:
            problem = output_file_problem(path, suffixes, overwrite=args.overwrite)
            if problem:
                parser.error(f"{flag} {path}: {problem}")
    if args.json and args.plot and os.path.abspath(args.json) == os.path.abspath(args.plot):
        parser.error(f"--json and --plot both name {args.json}: give two files")
    if args.save_games:
        games_a_deal = seating_count(len(args.agents), resolved_seatings(args.seatings, args.agents))
        problem = save_games_problem(args.save_games, games_a_deal, args.games, args.seed, args.append_games)
        if problem:
            parser.error(problem)
        if args.json and is_record_of_run(args.json, args.save_games, games_a_deal, args.games, args.seed):
            parser.error(f"--json {args.json}: --save-games {args.save_games} writes a game record of that name: "
                         f"give another file name")  # (--plot's names never end in .json)
        if args.json and is_kept_record(args.json, args.save_games):
            parser.error(f"--json {args.json}: it is a game record that --save-games {args.save_games} keeps (of an "
                         f"earlier run): give another file name; --overwrite never replaces a record")
    elif args.append_games:
        parser.error(f"{APPEND_FLAG} goes with --save-games DIR")
    try:  # the table needs rich and --plot matplotlib: refuse now, not after the games
        require(["rich"], "the results table")
        if args.plot:
            require(["matplotlib"], "--plot")
    except MissingDependencyError as exc:
        parser.error(str(exc))
    if args.workers > args.games:
        print(f"note: --workers {args.workers} is more than the {args.games} deal(s) to play: using "
              f"{args.games} worker process(es)", file=sys.stderr)
        args.workers = args.games
    note = workers_note(args.workers)
    if note:
        print(note, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> dict:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    try:
        rules = rules_from_args(args, len(args.agents))
        report, deals = evaluate(args.agents, args.games, args.seed, rules, args.workers, progress=not args.quiet,
                                 allow_rule_mismatch=args.allow_rule_mismatch, batch_size=args.batch_size,
                                 seatings=args.seatings)
    except (ValueError, OSError) as exc:  # bad rules, agents, checkpoints: found before the first game
        parser.error(str(exc))
    print_report(report)
    if args.json:
        write_json(args.json, report)  # (it makes the folder)
    if args.plot:
        os.makedirs(os.path.dirname(os.path.abspath(args.plot)), exist_ok=True)
        plot_scores(deals, [a["name"] for a in report["agents"]], args.plot)
    if args.save_games:
        count = save_games(deals, args.agents, rules, args.seed, args.save_games)
        print(f"saved {count} game records to {args.save_games}")
    return report


def save_games(deals: Sequence[Sequence[GameRecord]], specs: Sequence[str], rules: Rules, seed: int,
               directory: str) -> int:
    """Write each game as ``DIR/seed<S>-deal<NNNNN>-rot<R>.json`` in the format of ``tt_env.ui.records``."""
    from tt_env.ui.records import record_from_game, save_record

    os.makedirs(directory, exist_ok=True)
    count = 0
    for deal in deals:
        for g in deal:
            by_seat = sorted(range(len(specs)), key=lambda i: g.seats[i])  # agent index at each seat
            record = record_from_game(rules, [seed, g.deal, 0], [specs[i] for i in by_seat], list(g.actions),
                                      [g.scores[i] for i in by_seat], reshuffle_seed=[seed, g.deal, 1])
            save_record(record, os.path.join(directory, record_name(seed, g.deal, g.rotation)))
            count += 1
    return count


if __name__ == "__main__":
    main()
