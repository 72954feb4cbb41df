"""The ceiling of belief search: ``ismcts-v1``'s search given the opponents' true hands (not a legal player).

    python benchmarks/search_ceiling.py --deals 20 --seed 0 --opponent expert-v0

The searching seat draws its worlds from a "belief" that returns every opponent's true
unknown cards (the stock's order stays unknown: each world shuffles it), with every other
option of ``ismcts-v1`` as given (its defaults; ``--option KEY=VALUE`` changes one). It plays
duplicate games against ``--opponent`` with the seeds of ``tt_env.evaluation.duplicate`` (deal ``d``:
``SeedSequence([seed, d, 0])`` for the deals, ``[seed, d, 1]`` for the reshuffles, ``[seed, d,
2, k, i]`` for agent ``i`` in rotation ``k``), so the same deals as ``python -m
training.evaluate ismcts-v1 OPPONENT --seed SEED`` are played, and prints the score
difference with its 95% interval over deals. It sees what no player may: it shows how much
of the gap a perfect belief would close, not an agent to ship.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tt_env.evaluation.duplicate import GameRecord, seat_of  # noqa: E402
from tt_env.evaluation.stats import summarize  # noqa: E402
from tt_env.agents import make_agent  # noqa: E402
from tt_env.cli_checks import CommandParser, int_at_least, seed_arg  # noqa: E402
from tt_env.engine import game  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.observation import encode  # noqa: E402


class TrueHands:
    """A "belief" that knows: the true unknown cards of each opponent of the seat to move."""

    def __init__(self) -> None:
        self.state: game.GameState | None = None

    def sample_unknown(self, observation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        state = self.state
        n, seat = state.rules.num_players, state.current_player
        out = np.zeros((n - 1, 52), dtype=np.int64)
        for k in range(1, n):
            other = (seat + k) % n
            out[k - 1] = np.bincount(state.hands[other], minlength=52)
            if state.known_taken[other]:
                out[k - 1] -= np.bincount(state.known_taken[other], minlength=52)
        return out

    def logits(self, observation: np.ndarray) -> np.ndarray:  # pragma: no cover - only with a tilt
        raise ValueError("the true hands need no tilt: use tilt=0")


def play(searcher, truth: TrueHands, opponent, rules: Rules, seed: int, deal: int, rotation: int) -> GameRecord:
    """One game of the duplicate schedule: agent 0 is the searcher, agent 1 the opponent."""
    agents = [searcher, opponent]
    n = rules.num_players
    seats = [seat_of(i, rotation, n) for i in range(n)]
    by_seat = {s: i for i, s in enumerate(seats)}
    state = game.new_game(rules, np.random.default_rng(np.random.SeedSequence([seed, deal, 0])),
                          shuffle_rng=np.random.default_rng(np.random.SeedSequence([seed, deal, 1])))
    rngs = [np.random.default_rng(np.random.SeedSequence([seed, deal, 2, rotation, i])) for i in range(n)]
    moves, think = [0] * n, [0.0] * n
    while not state.game_over:
        i = by_seat[state.current_player]
        truth.state = state
        t0 = time.perf_counter()
        action = agents[i].act(encode(state, state.current_player), game.action_mask(state), rngs[i])
        think[i] += time.perf_counter() - t0
        moves[i] += 1
        game.apply(state, action)
    scores = [state.scores[seats[i]] for i in range(n)]
    low = min(scores)
    shares = [1.0 / scores.count(low) if s == low else 0.0 for s in scores]
    return GameRecord(deal, rotation, seats, scores, shares, sum(r.turns for r in state.round_results), moves, think)


def main(argv: list[str] | None = None) -> dict:
    parser = CommandParser(prog="python benchmarks/search_ceiling.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int_at_least(1), default=20)
    parser.add_argument("--seed", type=seed_arg, default=0)
    parser.add_argument("--opponent", default="expert-v0")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an ismcts-v1 option (a JSON value), repeatable")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    rules = Rules()
    options = {"tilt": 0.0, "infer": 0}
    for item in args.option:
        key, sep, value = item.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            sep = ""
        if not sep or not key:
            parser.error(f"--option {item!r} is not KEY=VALUE with a JSON value")
    truth = TrueHands()
    try:
        searcher = make_agent("ismcts-v1", rules, belief=truth, **options)
        opponent = make_agent(args.opponent, rules)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    t0 = time.perf_counter()
    deals = [[play(searcher, truth, opponent, rules, args.seed, d, k) for k in range(2)] for d in range(args.deals)]
    report = summarize(deals, ["ismcts-v1 (true hands)", args.opponent])
    pair = next(p for p in report["pairwise"] if p["a"].startswith("ismcts"))
    lo, hi = pair["ci95"] or (float("nan"), float("nan"))
    print(f"ismcts-v1 search with the true hands vs {args.opponent}, {args.deals} deals: "
          f"{pair['mean_score_diff']:+.2f} [{lo:+.2f}, {hi:+.2f}] points a game "
          f"({time.perf_counter() - t0:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "options": options, "report": report}, indent=2))
    return report


if __name__ == "__main__":
    main()
