"""Positions labelled with the truth, for the learned belief: every opponent's unknown cards.

    python -m training.belief_data --players 2 --games 3000 --seed 0 --out data/belief_2p.npz

Each game seats agents drawn from a mix (``--agents``, default :data:`DEFAULT_MIX` for the
player count: expert-v0, greedy-v0, the shipped network for that count and ismcts-v0) and gives
each seat a noise level drawn from ``--noise`` (the chance that a move is a uniformly random
legal one instead), so that the model learns what play reveals rather than one player's
habits. At each decision, with probability ``--keep``, the position is recorded from the
mover's point of view: its observation (the environment's default encoding), and as labels,
for each opponent in the observation's order, the counts of its *unknown* cards (its hand
minus the cards it is known to hold because it took them from the discard pile).

The ``.npz`` holds ``obs`` (float32, positions x observation size), ``mask`` (int8,
positions x 54: the legal actions), ``label`` (uint8,
positions x opponents x 52), ``passed`` (uint8, positions x opponents x 52: the top discards
each opponent passed over this round) and ``recent`` (float16, the same shape: for each card
an opponent discarded this round, ``RECENCY_DECAY`` to the power of its discards since),
``game`` (int32), ``round`` (int8), ``turn`` (int16), ``phase``
(int8), ``seats`` (int16, positions x players: the agent at each seat, relative to the mover,
as an index into ``meta["agents"]``) and ``meta`` (a JSON string: the arguments, the agent
names, the rules, the format). Loaded with ``numpy.load(..., allow_pickle=False)``: it holds
only arrays. Game ``g`` of a run uses ``SeedSequence([seed, g])`` for its deal, its seating
and its noise, so a run is the same whatever ``--workers``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from training.data.cli import add_collection_arguments, check_collection_arguments
from training.data.npz import save_npz
from tt_env import jsonio
from tt_env.agents import list_agents, make_agent
from tt_env.cli_checks import CommandParser, int_at_least, output_file_problem, players_arg
from tt_env.engine import game
from tt_env.engine.rules import Rules
from tt_env.evaluation.loop import play_game
from tt_env.observation import observation_size

FORMAT = "three-thirteen-belief-data/1"

DEFAULT_MIX: dict[int, list[str]] = {
    2: ["expert-v0", "expert-v0", "greedy-v0", "ppo-2p-v1", "ismcts-v0"],
    3: ["expert-v0", "expert-v0", "greedy-v0", "ppo-3p-v0", "ismcts-v0"],
    4: ["expert-v0", "expert-v0", "greedy-v0", "ppo-4p-v0", "ismcts-v0"],
}
"""Agents seated uniformly from these lists (a name twice: twice as often)."""
SLOW_AGENT_SHARE = 0.05
"""Share of the games in which ``ismcts-*`` agents may be seated at all (a search decision costs
hundreds of times an expert-v0 one); in the others they are skipped in the draw."""
DEFAULT_NOISE = (0.0, 0.0, 0.05, 0.15)
PASSED_MAX = 255
"""Most passes over one card a ``passed`` entry holds (its uint8)."""
ARRAYS = ("obs", "mask", "label", "passed", "recent", "game", "round", "turn", "phase", "seats")
"""The arrays of a belief data file (module docstring)."""


def unknown_counts(state: game.GameState, seat: int) -> np.ndarray:
    """(opponents, 52) uint8: each opponent's hand minus the cards it is known to hold, from ``seat``'s left."""
    n = state.rules.num_players
    out = np.zeros((n - 1, 52), dtype=np.uint8)
    for k in range(1, n):
        other = (seat + k) % n
        counts = np.bincount(state.hands[other], minlength=52)
        if state.known_taken[other]:
            counts -= np.bincount(state.known_taken[other], minlength=52)
        out[k - 1] = counts
    return out


RECENCY_DECAY = 0.7


def history_blocks(state: game.GameState, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """Public history the observation (version 1) leaves out, per opponent from ``seat``'s left:
    the counts of the top discards it passed over this round, and for each card it discarded,
    ``RECENCY_DECAY ** (its discards since)`` (1 for its last discard)."""
    n = state.rules.num_players
    passed = np.zeros((n - 1, 52), dtype=np.uint8)
    recent = np.zeros((n - 1, 52), dtype=np.float32)
    for k in range(1, n):
        other = (seat + k) % n
        if state.passed[other]:
            passed[k - 1] = np.bincount(state.passed[other], minlength=52)
        discards = state.discards[other]
        for age, c in enumerate(reversed(discards)):
            if recent[k - 1, c] == 0:
                recent[k - 1, c] = RECENCY_DECAY ** age
    return passed, recent


class _Table:
    """The agents of one game and their noise, drawn from the game's seed."""

    def __init__(self, rules: Rules, mix: Sequence[str], noise: Sequence[float], rng: np.random.Generator,
                 agents: dict[str, object], seats: Sequence[str] | None = None, index: int = 0) -> None:
        n = rules.num_players
        slow_ok = rng.random() < SLOW_AGENT_SHARE
        pool = [a for a in mix if slow_ok or not a.startswith("ismcts")] or list(mix)
        draws = [pool[int(rng.integers(len(pool)))] for _ in range(n)]
        self.names = [seats[(s + index) % n] for s in range(n)] if seats else draws
        self.noise = [float(noise[int(rng.integers(len(noise)))]) for _ in range(n)]
        for name in set(self.names):
            if name not in agents:
                agents[name] = make_agent(name, rules)
        self.agents = [agents[name] for name in self.names]


class _Seat:
    """The agent of one seat as :func:`~tt_env.evaluation.loop.play_game` asks it: before deciding it
    draws from the game's ``rng`` whether the position is kept (``kept``, read by the recorder),
    then whether it plays a random legal action (its noise) instead of its agent's."""

    def __init__(self, agent: object, noise: float, keep: float, rng: np.random.Generator) -> None:
        self.agent, self.noise, self.keep, self.rng = agent, noise, keep, rng
        self.name = getattr(agent, "name", agent)
        self.kept = False

    def act(self, obs: np.ndarray, mask: np.ndarray, act_rng: np.random.Generator) -> int:
        rng = self.rng
        self.kept = rng.random() < self.keep
        if rng.random() < self.noise:
            legal = np.flatnonzero(mask)
            return int(legal[int(rng.integers(legal.size))])
        return int(self.agent.act(obs, mask, act_rng))


def game_positions(rules: Rules, seed: int, index: int, mix: Sequence[str], noise: Sequence[float], keep: float,
                   agents: dict[str, object], seats: Sequence[str] | None = None) -> dict[str, list]:
    """The recorded positions of game ``index`` (lists of rows, by field); ``seats``: fixed agents
    instead of draws from ``mix`` (seat ``s`` of game ``g`` gets ``seats[(s + g) % N]``)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
    table = _Table(rules, mix, noise, rng, agents, seats, index)
    deal_rng = np.random.default_rng(rng.integers(2 ** 63))
    shuffle_rng = np.random.default_rng(rng.integers(2 ** 63))
    act_rng = np.random.default_rng(rng.integers(2 ** 63))
    n = rules.num_players
    players = [_Seat(agent, table.noise[s], keep, rng) for s, agent in enumerate(table.agents)]
    rows: dict[str, list] = {k: [] for k in ("obs", "mask", "label", "passed", "recent", "round", "turn", "phase",
                                             "seats")}

    def record(state: game.GameState, seat: int, obs: np.ndarray, mask: np.ndarray, action: int,
               seconds: float) -> None:
        if players[seat].kept:
            rows["obs"].append(obs)
            rows["mask"].append(mask.copy())
            rows["label"].append(unknown_counts(state, seat))
            passed, recent = history_blocks(state, seat)
            rows["passed"].append(passed)
            rows["recent"].append(recent)
            rows["round"].append(state.round_number)
            rows["turn"].append(state.turn)
            rows["phase"].append(state.phase)
            rows["seats"].append([(seat + k) % n for k in range(n)])

    play_game(players, rules, deal_rng, agent_rngs=[act_rng] * n, shuffle_rng=shuffle_rng,  # type: ignore[arg-type]
              on_decision=record)
    names = table.names
    rows["seats"] = [[names[s] for s in order] for order in rows["seats"]]
    return rows


_WORKER: dict = {}


def _init(rules_dict: dict, seed: int, mix: list[str], noise: list[float], keep: float,
          seats: list[str] | None) -> None:
    _WORKER.update(rules=Rules.from_dict(rules_dict), seed=seed, mix=mix, noise=noise, keep=keep, agents={},
                   seats=seats)


def _work(index: int) -> tuple[int, dict[str, list]]:
    w = _WORKER
    return index, game_positions(w["rules"], w["seed"], index, w["mix"], w["noise"], w["keep"], w["agents"],
                                 w["seats"])


def collect(rules: Rules, games: int, seed: int, mix: Sequence[str], noise: Sequence[float], keep: float,
            workers: int = 1, start: int = 0, progress: bool = False,
            seats: Sequence[str] | None = None) -> list[tuple[int, dict[str, list]]]:
    """``(game index, rows)`` of games ``start .. start + games - 1``, in game order whatever ``workers``."""
    from tqdm import tqdm

    args = (rules.to_dict(), seed, list(mix), list(noise), keep, list(seats) if seats else None)
    indices = range(start, start + games)
    bar = tqdm(total=games, unit="game", disable=not progress, desc="belief games")
    results = []
    if workers == 1:
        _init(*args)
        for i in indices:
            results.append(_work(i))
            bar.update()
    else:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(workers, initializer=_init, initargs=args) as pool:
            for r in pool.imap_unordered(_work, indices, chunksize=4):
                results.append(r)
                bar.update()
    bar.close()
    results.sort(key=lambda r: r[0])
    return results


def to_arrays(results: list[tuple[int, dict[str, list]]], agent_names: list[str]) -> dict[str, np.ndarray]:
    """The games' rows as the arrays of the ``.npz`` (module docstring)."""
    index = {name: i for i, name in enumerate(agent_names)}
    out: dict[str, list] = {k: [] for k in ARRAYS}
    for g, rows in results:
        out["game"].extend([g] * len(rows["obs"]))
        for key in ("obs", "mask", "label", "passed", "recent", "round", "turn", "phase"):
            out[key].extend(rows[key])
        out["seats"].extend([[index[name] for name in seats] for seats in rows["seats"]])
    return {"obs": np.asarray(out["obs"], dtype=np.float32), "mask": np.asarray(out["mask"], dtype=np.int8),
            "label": np.asarray(out["label"], dtype=np.uint8),
            "passed": np.asarray(out["passed"], dtype=np.uint8), "recent": np.asarray(out["recent"], dtype=np.float16),
            "game": np.asarray(out["game"], dtype=np.int32), "round": np.asarray(out["round"], dtype=np.int8),
            "turn": np.asarray(out["turn"], dtype=np.int16), "phase": np.asarray(out["phase"], dtype=np.int8),
            "seats": np.asarray(out["seats"], dtype=np.int16)}


def load(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays and the metadata of a ``.npz`` written by this module (no pickles), checked whole
    (:func:`check_arrays`); a ``ValueError`` of one line naming the file and the problem otherwise.
    Arrays other than :data:`ARRAYS` are left out."""
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such file")
    try:
        with np.load(path, allow_pickle=False) as data:
            if not hasattr(data, "files"):
                raise ValueError("a single array, not an .npz archive")
            arrays = {k: data[k] for k in data.files if k in ARRAYS}
            meta_text = str(data["meta"]) if "meta" in data.files else None
    except (OSError, ValueError, EOFError, KeyError, TypeError, zipfile.BadZipFile, zlib.error) as exc:
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise ValueError(f"{path}: not a readable .npz file (empty, truncated or corrupt: {reason})") from None
    meta = jsonio.loads(meta_text, f"{path}: the meta") if meta_text is not None else None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise ValueError(f"{path}: not a belief data file of format {FORMAT!r} (found {found!r})")
    missing = sorted(set(ARRAYS) - set(arrays))
    if missing or not isinstance(meta.get("rules"), dict):
        raise ValueError(f"{path}: a belief data file lacking {missing or 'its rules'}")
    check_arrays(arrays, meta, str(path))
    return arrays, meta


def check_arrays(arrays: dict[str, np.ndarray], meta: dict, where: str) -> None:
    """Refuse (``ValueError`` naming ``where``) arrays a belief data file of ``meta["rules"]`` cannot hold:
    wrong shapes or widths, no rows, rows of different counts, non-finite numbers, labels over the
    copies of a card."""
    try:
        rules = Rules.from_dict(meta["rules"])
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"{where}: its rules are not valid ({exc})") from None
    n = rules.num_players
    shapes = {"obs": (observation_size(n),), "mask": (game.NUM_ACTIONS,), "label": (n - 1, 52),
              "passed": (n - 1, 52), "recent": (n - 1, 52), "game": (), "round": (), "turn": (), "phase": (),
              "seats": (n,)}
    rows = len(arrays["obs"]) if arrays["obs"].ndim else 0
    if rows == 0:
        raise ValueError(f"{where}: holds no positions (0 rows): give a file with at least one")
    for key, tail in shapes.items():
        a = arrays[key]
        if a.shape != (rows, *tail):
            want = "x".join(str(d) for d in (rows, *tail))
            raise ValueError(f"{where}: {key} has shape {'x'.join(map(str, a.shape)) or 'scalar'}; a file of "
                             f"{rows} {n}-player positions needs {want}")
        if a.dtype.kind not in "biuf":
            raise ValueError(f"{where}: {key} holds {a.dtype} values; allowed are numbers")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError(f"{where}: {key} holds NaN or infinite values; every number must be finite")
    # a hidden card is held at most once per deck; a top discard may be passed over again each time it
    # comes back to the top (taken and discarded again), so its count is bounded by the turns alone
    bounds = {"label": (rules.num_decks, f"copies of a card; allowed are 0..{rules.num_decks} "
                                          f"({rules.num_decks} deck(s))"),
              "passed": (PASSED_MAX, f"passes over a card; allowed are 0..{PASSED_MAX} (a uint8 count)")}
    for key, (bound, what) in bounds.items():
        a = arrays[key]
        if a.dtype.kind == "f" and not np.array_equal(a, np.round(a)):
            raise ValueError(f"{where}: {key} holds fractions; allowed are whole counts 0..{bound}")
        low, high = int(a.min()), int(a.max())
        if low < 0 or high > bound:
            raise ValueError(f"{where}: {key} holds a count of {high if high > bound else low} {what}")


def _noise_levels(text: str) -> list[float]:
    try:
        levels = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of shares in [0, 1]") from None
    if not levels or not all(0.0 <= x <= 1.0 for x in levels):
        raise argparse.ArgumentTypeError(f"{text!r}: every noise level must be a share in [0, 1]")
    return levels


def main(argv: Sequence[str] | None = None) -> Path:
    parser = CommandParser(prog="python -m training.belief_data", description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=players_arg, default=2, help="players, 2..8 (default 2)")
    parser.add_argument("--games", type=int_at_least(1), default=100, help="games (default 100)")
    parser.add_argument("--first-game", type=int_at_least(0), default=0, help="index of the first game (default 0)")
    parser.add_argument("--agents", nargs="+", action="extend", default=None,
                        help="the agents seated at random (default: expert-v0 twice, greedy-v0, the shipped "
                             "network of the player count, ismcts-v0)")
    parser.add_argument("--seats", nargs="+", action="extend", default=None,
                        help="fixed agents, one per seat, instead of draws from --agents (seat s of game g gets "
                             "the ((s + g) mod N)-th); the noise then defaults to 0")
    parser.add_argument("--noise", type=_noise_levels, default=None,
                        help="noise levels drawn per seat: the chance of a random legal move (default 0,0,0.05,0.15)")
    add_collection_arguments(parser, keep=0.25)
    args = parser.parse_args(argv)
    check_collection_arguments(parser, args)
    if args.seats is not None and len(args.seats) != args.players:
        parser.error(f"--seats: give {args.players} agents, one per seat (got {len(args.seats)})")
    if args.noise is None:
        args.noise = [0.0] if args.seats else list(DEFAULT_NOISE)
    mix = args.seats or args.agents or DEFAULT_MIX.get(args.players)
    if mix is None:
        parser.error(f"no default agents for {args.players} players: give --agents")
    known = list_agents()
    for name in mix:
        if name not in known and not Path(name).is_file():
            parser.error(f"--agents: unknown agent {name!r}: use registered agents {known} or checkpoint paths")
    problem = output_file_problem(args.out, suffixes=(".npz",), overwrite=args.overwrite)
    if problem:
        parser.error(f"--out {args.out}: {problem}")
    rules = Rules(num_players=args.players)
    for name in sorted(set(mix)):  # every agent built once here, so none fails after games were played
        try:
            make_agent(name, rules)
        except (ValueError, ImportError, OSError, KeyError, TypeError) as exc:
            parser.error(f"--agents: {name} cannot play {args.players}-player games: {' '.join(str(exc).split())}")
    t0 = time.perf_counter()
    results = collect(rules, args.games, args.seed, mix, args.noise, args.keep, args.workers, args.first_game,
                      progress=not args.quiet, seats=args.seats)
    names = sorted(set(mix))
    arrays = to_arrays(results, names)
    if not arrays["obs"].size:
        parser.error("no position was recorded: play more games or raise --keep")
    meta = {"format": FORMAT, "rules": rules.to_dict(), "games": args.games, "first_game": args.first_game,
            "seed": args.seed, "agents": names, "mix": list(mix), "seats": args.seats, "noise": args.noise,
            "keep": args.keep, "seconds": time.perf_counter() - t0}
    out = save_npz(args.out, meta, arrays)
    print(f"{len(arrays['obs'])} positions from {args.games} games in {meta['seconds']:.0f} s -> {out}")
    return out


if __name__ == "__main__":
    main()
