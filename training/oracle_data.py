"""Oracle targets for learned agents: what each of expert-v0's candidate moves is worth, seen with every card.

    python -m training.oracle_data --players 2 --games 400 --rollouts 8 --workers 2 --out data/oracle_2p.npz

Positions come from ``expert-v0`` self-play (deal ``g`` of the run uses ``SeedSequence([seed, g])``).
At each sampled decision with two or more candidate moves (``tt_env.agents.ismcts.expert_scores``:
expert-v0's best ``--candidates`` moves), every candidate is played from the *true* state and the
round is played out ``--rollouts`` times by expert-v0 in every seat, the stock reshuffled before
each rollout (the order of the stock is the one thing nobody knows) and the same reshuffles used
for every candidate (common random numbers). A candidate's value is the mover's round points
relative to the others (the objective of the env's ``relative`` reward), averaged.

These values see the opponents' hands, which the player cannot. Fitted from the observation alone
(``training/imitate.py``), they give the expected value over everything the observation leaves
open, weighted as it occurs in real play: a learned one-step improvement over expert-v0 without any
model of what the opponents hold (the "oracle guiding" of Suphx, Li et al. 2020).

The ``.npz`` holds ``obs`` (float32, positions x observation size), ``mask`` (int8, x 54),
``cands`` (int16, x candidates, -1 where a position has fewer), ``q`` (float32, x candidates,
points), ``round`` (int8), ``phase`` (int8), plus ``meta`` (a JSON string of the run's arguments).
Loaded with ``numpy.load(..., allow_pickle=False)``: it holds only arrays.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from training.data.cli import add_collection_arguments, check_collection_arguments
from training.data.npz import save_npz
from tt_env.agents.expert import ExpertAgent
from tt_env.agents.ismcts import expert_scores, relative_points
from tt_env.cli_checks import CommandParser, int_at_least, output_file_problem, players_arg
from tt_env.engine import game
from tt_env.engine.rules import Rules
from tt_env.evaluation import play_game
from tt_env.observation import encode


def candidate_values(state: game.GameState, actions: Sequence[int], experts: Sequence[ExpertAgent],
                     rollouts: int, rng: np.random.Generator) -> np.ndarray:
    """Mean relative round points of the mover for each action, by expert-v0 rollouts from the true state."""
    seat = state.current_player
    out = np.zeros(len(actions))
    dummy = np.random.default_rng(0)  # expert-v0 draws nothing from it
    for _ in range(rollouts):
        seed = int(rng.integers(2 ** 62))
        for i, action in enumerate(actions):
            world = state.copy(np.random.default_rng(seed))
            order = np.random.default_rng(seed + 1).permutation(len(world.stock))
            world.stock = [world.stock[k] for k in order]
            result = game.apply(world, action)
            while result.round_record is None:
                p = world.current_player
                result = game.apply(world, experts[p].act(encode(world, p), game.action_mask(world), dummy))
            out[i] += relative_points(result.round_record.points)[seat]
    return out / rollouts


class _ScoredExpert:
    """expert-v0, keeping the scored candidates (``expert_scores``) behind the move it plays."""

    def __init__(self, expert: ExpertAgent) -> None:
        self.expert, self.name = expert, expert.name
        self.prior: list[tuple[int, float]] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        self.prior = expert_scores(self.expert, observation, action_mask)
        return self.prior[0][0]


def game_positions(rules: Rules, seed: int, index: int, candidates: int, rollouts: int,
                   keep: float) -> list[tuple]:
    """(obs, mask, cands, q, round, phase) of the sampled decisions of one expert-v0 self-play game."""
    experts = [ExpertAgent(rules) for _ in range(rules.num_players)]
    rng = np.random.default_rng([seed, index, 1])
    players = [_ScoredExpert(e) for e in experts]
    rows = []

    def sample(state: game.GameState, seat: int, obs: np.ndarray, mask: np.ndarray, _action: int,
               _seconds: float) -> None:
        prior = players[seat].prior
        if len(prior) > 1 and rng.random() < keep:
            cands = [a for a, _ in prior[:candidates]]
            q = candidate_values(state, cands, experts, rollouts, rng)
            rows.append((obs, mask.copy(), cands, q, state.round_number, state.phase))

    unused = np.random.default_rng(0)  # expert-v0 draws nothing
    play_game(players, rules, np.random.default_rng([seed, index]), agent_rngs=[unused] * rules.num_players,
              on_decision=sample)
    return rows


_WORKER: dict = {}


def _init(rules_dict: dict, seed: int, candidates: int, rollouts: int, keep: float) -> None:
    _WORKER.update(rules=Rules.from_dict(rules_dict), seed=seed, candidates=candidates, rollouts=rollouts, keep=keep)


def _work(index: int) -> tuple[int, list[tuple]]:
    w = _WORKER
    return index, game_positions(w["rules"], w["seed"], index, w["candidates"], w["rollouts"], w["keep"])


def collect(rules: Rules, games: int, seed: int, candidates: int, rollouts: int, keep: float,
            workers: int = 1, start: int = 0, progress: bool = False) -> list[tuple]:
    """The positions of games ``start .. start + games - 1``, in game order whatever ``workers``.

    ``progress`` shows a bar of games done (tqdm, on stderr): a 2-player game cost about 4 s of
    one core here at ``candidates=3, rollouts=4, keep=0.5``.
    """
    from tqdm import tqdm

    indices = range(start, start + games)
    bar = tqdm(total=games, unit="game", disable=not progress, desc="oracle games")
    if workers == 1:
        _init(rules.to_dict(), seed, candidates, rollouts, keep)
        results = []
        for i in indices:
            results.append(_work(i))
            bar.update()
    else:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(workers, initializer=_init, initargs=(rules.to_dict(), seed, candidates, rollouts, keep)) as pool:
            results = []
            for r in pool.imap_unordered(_work, indices):
                results.append(r)
                bar.update()
    bar.close()
    results.sort(key=lambda r: r[0])
    return [row for _, rows in results for row in rows]


def to_arrays(rows: list[tuple], candidates: int) -> dict[str, np.ndarray]:
    """The positions as the arrays of the ``.npz`` (module docstring)."""
    n = len(rows)
    cands = np.full((n, candidates), -1, dtype=np.int16)
    q = np.zeros((n, candidates), dtype=np.float32)
    for i, (_, _, c, v, _, _) in enumerate(rows):
        cands[i, :len(c)] = c
        q[i, :len(c)] = v
    return {"obs": np.stack([r[0] for r in rows]).astype(np.float32), "mask": np.stack([r[1] for r in rows]),
            "cands": cands, "q": q, "round": np.array([r[4] for r in rows], dtype=np.int8),
            "phase": np.array([r[5] for r in rows], dtype=np.int8)}


def main(argv: Sequence[str] | None = None) -> Path:
    parser = CommandParser(prog="python -m training.oracle_data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=players_arg, default=2, help="players, 2..8 (default 2)")
    parser.add_argument("--games", type=int_at_least(1), default=100, help="self-play games (default 100)")
    parser.add_argument("--first-game", type=int_at_least(0), default=0, help="index of the first game (default 0)")
    parser.add_argument("--candidates", type=int_at_least(2), default=3, help="expert-v0 moves valued (default 3)")
    parser.add_argument("--rollouts", type=int_at_least(1), default=8, help="rollouts per candidate (default 8)")
    add_collection_arguments(parser, keep=1.0)
    args = parser.parse_args(argv)
    check_collection_arguments(parser, args)
    problem = output_file_problem(args.out, suffixes=(".npz",), overwrite=args.overwrite)
    if problem:
        parser.error(f"--out {args.out}: {problem}")
    rules = Rules(num_players=args.players)
    t0 = time.perf_counter()
    rows = collect(rules, args.games, args.seed, args.candidates, args.rollouts, args.keep, args.workers,
                   args.first_game, progress=not args.quiet)
    if not rows:
        parser.error("no position was recorded: play more games or raise --keep")
    arrays = to_arrays(rows, args.candidates)
    meta = {"format": "three-thirteen-oracle/1", "rules": rules.to_dict(), "games": args.games,
            "first_game": args.first_game, "seed": args.seed, "candidates": args.candidates,
            "rollouts": args.rollouts, "keep": args.keep, "seconds": time.perf_counter() - t0}
    out = save_npz(args.out, meta, arrays)
    print(f"{len(rows)} positions from {args.games} games in {meta['seconds']:.0f} s -> {out}")
    return out


if __name__ == "__main__":
    main()
