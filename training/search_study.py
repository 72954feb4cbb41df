"""What a search's deviations from expert-v0 are worth, on positions valued with every card seen.

    python -m training.search_study --data data/oracle_2p.npz --agent ismcts-v1 --positions 2000

The positions and values come from ``training.oracle_data``: at decisions of expert-v0
self-play, each of expert-v0's best moves was played from the *true* state and the round
played out by expert-v0 with common random numbers, so ``q[i, j]`` is an unbiased estimate of
what candidate ``j`` is worth at position ``i`` (in round points relative to the others).
The agent decides each position from the observation alone; its *gain* at a position is
``q[its move] - q[expert-v0's move]`` (zero where it plays the expert's move). The mean gain
per decision, times the decisions of a game, is a first-order estimate of its edge over
expert-v0 in points a game, at a fraction of the cost of playing games, with a standard
error; deviations that go to a move the data did not value are counted apart.

To see *why* a search gains or loses, it also compares, for every challenger the search
valued (with ``z`` set high the agent never deviates but still reports its estimates), the
search's estimate of the challenger's advantage over expert-v0's move with the oracle's value
of that advantage: their correlation, and the oracle's mean advantage among the challengers
the search estimates above 0, 0.5, 1 and 2 points. A search can only gain by deviating where
that mean is positive.

Also printed, as the ceiling: the same for the *oracle* choice (the best candidate by ``q``,
which sees the true hands: not a legal player, and optimistic, since it is chosen on the
same noisy values it is scored on).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence

import numpy as np

from tt_env.agents import make_agent
from tt_env.cli_checks import CommandParser, int_at_least, output_file_problem, positive_float, seed_arg
from tt_env.jsonio import write_json
from tt_env.engine.rules import Rules


THRESHOLDS = (0.0, 0.5, 1.0, 2.0)
"""Search estimates (points) above which the oracle's mean advantage is reported."""


def study(agent, arrays: dict[str, np.ndarray], positions: np.ndarray, seed: int) -> dict:
    """Gains of ``agent`` at ``positions`` (indices into ``arrays`` of an oracle data file)."""
    gains, deviations, unvalued, seconds = [], 0, 0, 0.0
    estimated, oracle = [], []
    for i in positions:
        obs, mask = arrays["obs"][i], arrays["mask"][i]
        cands, q = arrays["cands"][i], arrays["q"][i]
        t0 = time.perf_counter()
        move = int(agent.act(obs, mask, np.random.default_rng([seed, int(i)])))
        seconds += time.perf_counter() - t0
        valued = {int(c): float(v) for c, v in zip(cands, q, strict=True) if c >= 0}
        search = getattr(agent, "last_search", None) or {}
        for a, adv in (search.get("advantage") or {}).items():
            if int(a) in valued and search.get("candidates", [None])[0] == int(cands[0]):
                estimated.append(adv)
                oracle.append(valued[int(a)] - valued[int(cands[0])])
        if hasattr(agent, "last_search"):
            agent.last_search = {}
        if move == int(cands[0]):
            gains.append(0.0)
            continue
        deviations += 1
        if move not in valued:
            unvalued += 1
            continue
        gains.append(valued[move] - valued[int(cands[0])])
    g = np.asarray(gains)
    est, orc = np.asarray(estimated), np.asarray(oracle)
    corr = float(np.corrcoef(est, orc)[0, 1]) if est.size > 2 else float("nan")
    above = {f"{t:g}": {"pairs": int((est > t).sum()),
                        "oracle_mean": float(orc[est > t].mean()) if (est > t).any() else None}
             for t in THRESHOLDS}
    return {"pairs": {"estimate": est.tolist(), "oracle": orc.tolist()}, "estimates": int(est.size),
            "correlation": corr, "above": above,
            "positions": int(len(positions)), "deviations": deviations, "unvalued": unvalued,
            "mean_gain": float(g.mean()) if g.size else 0.0,
            "se": standard_error(g),
            "good_deviations": int((g > 0).sum()), "bad_deviations": int((g < 0).sum()),
            "ms_per_decision": 1000 * seconds / max(1, len(positions))}


def oracle_ceiling(arrays: dict[str, np.ndarray], positions: np.ndarray) -> dict:
    q = arrays["q"][positions]
    valid = arrays["cands"][positions] >= 0
    best = np.where(valid, q, -np.inf).max(axis=1)
    g = best - q[:, 0]
    return {"mean_gain": float(g.mean()), "se": standard_error(g), "deviations": int((g > 0).sum())}


def standard_error(gains: np.ndarray) -> float | None:
    """The mean's standard error; None from fewer than two values (none can be told, not 0)."""
    return float(gains.std(ddof=1) / math.sqrt(gains.size)) if gains.size > 1 else None


def plus_minus(value: float, se: float | None, digits: int) -> str:
    """``+1.23 +- 0.45``, or ``+1.23 (no interval: one value)``."""
    return f"{value:+.{digits}f} " + ("(no interval: one value)" if se is None else f"+- {se:.{digits}f}")


def load_study_data(path: str) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and meta of an oracle data file (``training.imitate.load_oracle``'s checks), and its
    game count and share kept, which scale the gain to points a game."""
    from training.imitate import load_oracle

    arrays = load_oracle(path)
    meta = arrays.pop("meta")
    if not all(isinstance(meta.get(k), (int, float)) and meta[k] > 0 for k in ("keep", "games")):
        raise ValueError(f"the meta of {path} lacks 'keep' and 'games': not a file of python -m training.oracle_data")
    return arrays, meta


def main(argv: Sequence[str] | None = None) -> dict:
    parser = CommandParser(prog="python -m training.search_study", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="an oracle data file (training.oracle_data)")
    parser.add_argument("--agent", default="ismcts-v1", help="the agent to study (name or checkpoint)")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an agent option (JSON value), repeatable: --option worlds=32")
    parser.add_argument("--positions", type=int_at_least(1), default=1000, help="positions studied (sampled)")
    parser.add_argument("--decisions-per-game", type=positive_float(), default=None,
                        help="decisions of one player in a game, to scale the gain to points a game (default: "
                             "measured from the data's games)")
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the results as JSON to PATH")
    parser.add_argument("--overwrite", action="store_true", help="replace the --json file if it exists")
    args = parser.parse_args(argv)
    if args.json and (problem := output_file_problem(args.json, overwrite=args.overwrite)):
        parser.error(f"--json {args.json}: {problem}")  # before the study, not after it
    try:
        arrays, meta = load_study_data(args.data)
        rules = Rules.from_dict(meta["rules"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.error(f"--data {args.data}: {exc}")
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--option {item!r} is not KEY=VALUE")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    try:
        agent = make_agent(args.agent, rules, **options)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    rng = np.random.default_rng(args.seed)
    total = len(arrays["obs"])
    positions = np.sort(rng.choice(total, size=min(args.positions, total), replace=False))
    result = study(agent, arrays, positions, args.seed)
    ceiling = oracle_ceiling(arrays, positions)
    # decisions of one player per game with two or more candidates: positions / keep / games / players
    per_game = args.decisions_per_game or total / meta["keep"] / meta["games"] / rules.num_players
    for r in (result, ceiling):
        r["per_game"] = r["mean_gain"] * per_game
        r["per_game_se"] = None if r["se"] is None else r["se"] * per_game
    print(f"{args.agent} {options}: {result['deviations']} deviations in {result['positions']} positions "
          f"({result['good_deviations']} good, {result['bad_deviations']} bad, {result['unvalued']} unvalued); "
          f"gain {plus_minus(result['mean_gain'], result['se'], 4)} points a decision = "
          f"{plus_minus(result['per_game'], result['per_game_se'], 2)} a game ({per_game:.0f} searched decisions a "
          f"game); {result['ms_per_decision']:.1f} ms a decision")
    above = "; ".join(f"> {t}: {v['pairs']} pairs, {v['oracle_mean']:+.2f}" if v["oracle_mean"] is not None
                      else f"> {t}: none" for t, v in result["above"].items())
    print(f"search estimates of a challenger's advantage vs its oracle value: {result['estimates']} pairs, "
          f"correlation {result['correlation']:.3f}; the oracle's mean advantage where the estimate is {above}")
    print(f"oracle ceiling (sees the hands): {plus_minus(ceiling['per_game'], ceiling['per_game_se'], 2)} a game")
    if args.json:
        write_json(args.json, {"args": vars(args), "agent": result, "oracle": ceiling})
    return {"agent": result, "oracle": ceiling}


if __name__ == "__main__":
    main()
