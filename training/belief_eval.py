"""How good is the belief: cross-entropy per hidden card on held-out games, next to uniform worlds and the tilt.

    python -m training.belief_eval --players 2 3 4 --games 200 --plot docs/belief_calibration.png --overwrite

For each player count it plays held-out games of several pairings of agents
(:data:`PAIRINGS`, seed ``--seed``: other seeds than the training data's; some pairings seat
agents the shipped beliefs never saw in training) with ``training.belief_data``, or reads
such files (``--data``), and scores three beliefs at the same positions:

- **model**: the learned belief (``--belief``; default the shipped one for the player count);
- **uniform**: the unseen copies dealt uniformly (``tt_env.search.determinize``): each unseen
  copy equally likely;
- **tilt**: ``tt_env.search.sample_world``'s default tilt, whose per-card marginals are
  estimated from ``--worlds`` sampled worlds per position, shrunk towards uniform by one
  world's weight (so no card the tilt can deal gets probability 0).

The score is the cross-entropy per hidden card in bits: over every unknown card ``c`` an
opponent really holds, ``-log2(p_c)`` with ``p_c`` the belief's expected copies of ``c`` in
that opponent's unknown cards over their number (the chance that one of them, picked at
random, is a ``c``); lower is better, and uniform is the scale. Results come by pairing and by
how far into the round the opponent is (its discards this round). The calibration plot
compares each belief's predicted chance that an unseen copy is in an opponent's hand with how
often it is, in bins. ``--json`` writes every number.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from models.belief import Belief, load_belief
from models.checkpoint import CheckpointError
from models.belief_net import unseen_and_unknown
from training import belief_data
from tt_env.cli_checks import CommandParser, int_at_least, output_file_problem, players_arg, seed_arg
from tt_env.engine.rules import Rules
from tt_env.observation import get_layout
from tt_env.search import sample_world

PAIRINGS: dict[int, list[list[str]]] = {
    2: [["expert-v0", "expert-v0"], ["ppo-2p-v1", "greedy-v0"], ["ismcts-v0", "expert-v0"],
        ["ppo-2p-v0", "expert-v0"], ["random-v0", "greedy-v0"]],
    3: [["expert-v0", "expert-v0", "expert-v0"], ["ppo-3p-v0", "greedy-v0", "expert-v0"],
        ["random-v0", "expert-v0", "greedy-v0"]],
    4: [["expert-v0", "expert-v0", "expert-v0", "expert-v0"], ["ppo-4p-v0", "greedy-v0", "expert-v0", "expert-v0"],
        ["random-v0", "expert-v0", "greedy-v0", "expert-v0"]],
}
"""Held-out pairings per player count. ``ppo-2p-v0`` and ``random-v0`` are never seated in the
default training data (``training.belief_data.DEFAULT_MIX``)."""
SLOW_GAMES_SHARE = 0.3
"""A pairing with a search agent plays this share of ``--games`` (its games cost far more)."""
STAGES = ((0, 0), (1, 2), (3, 5), (6, 9), (10, 10 ** 6))
"""Buckets of the opponent's discards this round."""


def tilt_probs(obs: np.ndarray, mask: np.ndarray, rules: Rules, worlds: int, rng: np.random.Generator) -> np.ndarray:
    """``(opponents, 52)`` marginals of the default tilt, from ``worlds`` samples shrunk by one uniform world."""
    n = rules.num_players
    lay = get_layout(n)
    taken = np.rint(lay.view(obs, "opponent_taken").reshape(n - 1, 52)).astype(np.int64)
    unseen, unknown = unseen_and_unknown(obs[None], n, rules.num_decks)
    unseen, unknown = unseen[0], unknown[0]
    total = np.zeros((n - 1, 52))
    for _ in range(worlds):
        world = sample_world(obs, rules, rng, action_mask=mask)
        for k in range(1, n):
            total[k - 1] += np.bincount(world.hands[k], minlength=52) - taken[k - 1]
    uniform = unseen[None] * (unknown / max(int(unseen.sum()), 1))[:, None]
    return (total + uniform) / (worlds + 1)


def cross_entropy(probs: np.ndarray, hands: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """(summed ``-log2 p`` over the true hidden cards, their number) of rows ``(R, 52)``."""
    keep = counts > 0
    share = probs[keep] / counts[keep, None]
    logs = np.log2(np.maximum(share, 1e-300))
    return float(-(hands[keep] * np.where(hands[keep] > 0, logs, 0.0)).sum()), float(counts[keep].sum())


def evaluate_positions(belief: Belief, arrays: dict[str, np.ndarray], rules: Rules, *, worlds: int,
                       max_positions: int, rng: np.random.Generator) -> dict:
    """Scores of the model, uniform and the tilt at (a sample of) the positions of one pairing."""
    n = rules.num_players
    index = np.arange(len(arrays["obs"]))
    if len(index) > max_positions:
        index = np.sort(rng.choice(index, size=max_positions, replace=False))
    sums = {b: np.zeros((len(STAGES), 2)) for b in ("model", "uniform", "tilt")}
    calib = {b: [] for b in ("model", "tilt")}
    lay = get_layout(n)
    for i in index:
        obs = arrays["obs"][i]
        hands = arrays["label"][i].astype(np.int64)
        unseen, unknown = unseen_and_unknown(obs[None], n, rules.num_decks)
        unseen, unknown = unseen[0], unknown[0]
        beliefs = {"model": belief.card_probs(obs),
                   "uniform": unseen[None] * (unknown / max(int(unseen.sum()), 1))[:, None],
                   "tilt": tilt_probs(obs, arrays["mask"][i], rules, worlds, rng) if worlds else None}
        discards = lay.view(obs, "opponent_discards").reshape(n - 1, 52).sum(axis=1)
        for k in range(n - 1):
            stage = next(s for s, (lo, hi) in enumerate(STAGES) if lo <= discards[k] <= hi)
            for name, probs in beliefs.items():
                if probs is None:
                    continue
                ce, cards = cross_entropy(probs[k:k + 1], hands[k:k + 1], unknown[k:k + 1])
                sums[name][stage] += (ce, cards)
            for name in calib:
                if beliefs[name] is not None:
                    has = unseen > 0
                    calib[name].append(np.stack([beliefs[name][k][has] / unseen[has], hands[k][has] / unseen[has]]))
    out = {"positions": int(len(index)), "stages": {}}
    for name, table in sums.items():
        if not table[:, 1].sum():
            continue
        out[name] = float(table[:, 0].sum() / table[:, 1].sum())
        for s, (lo, hi) in enumerate(STAGES):
            label = f"{lo}" if lo == hi else (f"{lo}+" if hi > 1000 else f"{lo}-{hi}")
            if table[s, 1]:
                out["stages"].setdefault(label, {})[name] = float(table[s, 0] / table[s, 1])
                out["stages"][label]["cards"] = int(table[s, 1])
    out["calibration"] = {name: np.concatenate(rows, axis=1) for name, rows in calib.items() if rows}
    return out


def calibration_curve(pairs: np.ndarray, bins: int = 15) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean predicted, observed frequency, copies) per quantile bin of the predicted chance."""
    predicted, observed = pairs
    edges = np.unique(np.quantile(predicted, np.linspace(0, 1, bins + 1)))
    which = np.clip(np.searchsorted(edges, predicted, side="right") - 1, 0, len(edges) - 2)
    mean_p = np.array([predicted[which == b].mean() for b in range(len(edges) - 1) if (which == b).any()])
    mean_o = np.array([observed[which == b].mean() for b in range(len(edges) - 1) if (which == b).any()])
    size = np.array([(which == b).sum() for b in range(len(edges) - 1) if (which == b).any()])
    return mean_p, mean_o, size


def plot_calibration(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = sorted(results)
    fig, axes = plt.subplots(1, len(counts), figsize=(4.2 * len(counts), 4.2), squeeze=False)
    for ax, n in zip(axes[0], counts, strict=True):
        for name, style in (("model", "o-"), ("tilt", "s--")):
            pairs = [r["calibration"][name] for r in results[n].values() if name in r.get("calibration", {})]
            if not pairs:
                continue
            p, o, _ = calibration_curve(np.concatenate(pairs, axis=1))
            ax.plot(p, o, style, label=name, markersize=4)
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(1e-3, 1)
        ax.set_ylim(1e-3, 1)
        ax.set_title(f"{n} players")
        ax.set_xlabel("predicted chance a copy is in the hand")
        ax.set_ylabel("observed frequency")
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> dict:
    parser = CommandParser(prog="python -m training.belief_eval", description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=players_arg, nargs="+", default=[2], help="player counts, 2..8 (default 2)")
    parser.add_argument("--belief", nargs="+", default=None,
                        help="a belief per player count (name or path; default the shipped belief-Np-v0)")
    parser.add_argument("--data", nargs="+", default=None,
                        help="held-out files from training.belief_data --seats (instead of playing games)")
    parser.add_argument("--games", type=int_at_least(1), default=200, help="games per pairing (default 200)")
    parser.add_argument("--seed", type=seed_arg, default=1000, help="seed of the held-out games (default 1000)")
    parser.add_argument("--worlds", type=int_at_least(0), default=32,
                        help="tilted worlds per position for the tilt's marginals (default 32; 0 skips the tilt)")
    parser.add_argument("--max-positions", type=int_at_least(1), default=1500,
                        help="positions scored per pairing, sampled (default 1500)")
    parser.add_argument("--plot", default=None, help="calibration plot (.png)")
    parser.add_argument("--json", default=None, help="every number (.json)")
    parser.add_argument("--overwrite", action="store_true", help="replace the --plot and --json files if they exist")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.belief is not None and len(args.belief) != len(args.players):
        parser.error("--belief: give one belief per --players entry")
    for flag, path, suffixes in (("--plot", args.plot, (".png",)), ("--json", args.json, (".json",))):
        problem = path and output_file_problem(path, suffixes=suffixes, overwrite=args.overwrite)
        if problem:
            parser.error(f"{flag} {path}: {problem}")
    loaded = []
    for p in args.data or []:  # every file checked before any work
        try:
            loaded.append(belief_data.load(p))
        except (OSError, ValueError) as exc:
            parser.error(f"--data: {exc}")
    for path in (args.plot, args.json):  # the folders made now: a run is not lost at its end for a missing one
        if path:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                parser.error(f"cannot make the folder of {path}: {exc}")
    beliefs = []
    for i, n in enumerate(args.players):  # every belief loaded before any work
        spec = args.belief[i] if args.belief else f"belief-{n}p-v0"
        try:
            beliefs.append(load_belief(spec, rules=Rules(num_players=n)))
        except (CheckpointError, OSError, ValueError) as exc:
            parser.error(f"--belief {spec}: {exc}")
    rng = np.random.default_rng(args.seed)
    results: dict[int, dict] = {}
    t0 = time.perf_counter()
    for n, belief in zip(args.players, beliefs, strict=True):
        rules = Rules(num_players=n)
        sources = []
        if args.data:
            for arrays, meta in loaded:
                if meta["rules"].get("num_players") == n:
                    sources.append(("+".join(meta.get("seats") or meta["mix"]), arrays))
            if not sources:
                parser.error(f"--data: no file holds {n}-player games (--players {n})")
        else:
            for seats in PAIRINGS.get(n, []):
                games = args.games if not any(s.startswith("ismcts") for s in seats) else \
                    max(1, int(args.games * SLOW_GAMES_SHARE))
                rows = belief_data.collect(rules, games, args.seed, seats, [0.0], 0.25, seats=seats,
                                           progress=not args.quiet)
                sources.append(("+".join(seats), belief_data.to_arrays(rows, sorted(set(seats)))))
        results[n] = {}
        for name, arrays in sources:
            r = evaluate_positions(belief, arrays, rules, worlds=args.worlds, max_positions=args.max_positions,
                                   rng=rng)
            results[n][name] = r
    print(report(results))
    print(f"({time.perf_counter() - t0:.0f} s)")
    if args.plot:
        plot_calibration(results, Path(args.plot))
    if args.json:
        clean = {str(n): {k: {kk: vv for kk, vv in v.items() if kk != "calibration"} for k, v in r.items()}
                 for n, r in results.items()}
        Path(args.json).write_text(json.dumps({"args": vars(args), "results": clean}, indent=2) + "\n")
    return results


def report(results: dict[int, dict]) -> str:
    lines = ["| players | pairing | positions | model | uniform | tilt | model gain over uniform |",
             "|---|---|---|---|---|---|---|"]
    for n, per in results.items():
        for name, r in per.items():
            tilt = f"{r['tilt']:.3f}" if "tilt" in r else "-"
            lines.append(f"| {n} | {name} | {r['positions']} | {r['model']:.3f} | {r['uniform']:.3f} | {tilt} | "
                         f"{r['uniform'] - r['model']:+.3f} |")
    lines += ["", "| players | opponent's discards | cards | model | uniform | tilt |", "|---|---|---|---|---|---|"]
    for n, per in results.items():
        stages: dict[str, dict] = {}
        for r in per.values():
            for label, s in r["stages"].items():
                acc = stages.setdefault(label, {"cards": 0})
                for name in ("model", "uniform", "tilt"):
                    if name in s:
                        acc[name] = acc.get(name, 0.0) + s[name] * s["cards"]
                acc["cards"] += s["cards"]
        for label, acc in stages.items():
            vals = [f"{acc[b] / acc['cards']:.3f}" if b in acc else "-" for b in ("model", "uniform", "tilt")]
            lines.append(f"| {n} | {label} | {acc['cards']} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
