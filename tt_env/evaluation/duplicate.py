"""Duplicate games: play each deal once per seating, on the engine, reproducibly.

A *deal* is one seed for the deck shuffles of every round. With N agents it is played once
per seating (``seatings``): ``"rotations"`` plays the N cyclic rotations of the seats
(rotation k puts agent i in seat ``(i + k) % N``), so every agent plays every seat of every deal
and the luck of the cards cancels out within a deal; ``"permutations"`` plays all N! orders
(:func:`seats_in`, the rotations first), so that with three or more different agents who
sits after whom (who takes whose discards) cancels out too, which rotations alone fix by the
agents' order. The engine draws the deals and the reshuffles of an empty stock
from separate random streams (:func:`play_game` hands it the reshuffle stream only for that
draw), so the hands of every round are the same in every seating, whatever was played.

Seeds: deal ``d`` of a run with seed ``s`` uses ``SeedSequence([s, d, 0])`` for the deals,
``[s, d, 1]`` for the reshuffles and ``[s, d, 2, k, i]`` for agent ``i`` in seating ``k``.
Results are keyed by deal index, so the numbers do not depend on how many worker processes
played them or in what order.

Batching: an agent with an ``act_batch(observations, masks, rngs) -> list[int]`` method (a
network: :class:`models.checkpoint_agent.CheckpointAgent`) is asked for many decisions at once.
With ``batch_size`` > 1 and such an agent at the table, each worker keeps ``batch_size``
games in flight side by side (a new game starts as soon as one ends) and, at every step,
hands all the games waiting on the same batch-capable agent to one ``act_batch`` call; the
other agents act one game at a time as before. Each game keeps its own state and its own
random streams (above), and agents act on the observation alone (``tt_env.agents.base``),
so a game plays out the same whichever games it shares the table with. With ``batch_size=1``
(or no batch-capable agent) games are played one after another, and a batch-capable agent
is still asked through ``act_batch`` (one row), so its decisions, and every number, are the
same whatever the batching and the worker count. Think time (``GameRecord.think_seconds``):
an ``act`` call's time goes to its agent; an ``act_batch`` call's time is shared evenly among
the decisions of the batch.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tt_env.agents import Agent, make_agent
from tt_env.agents.registry import takes_option
from tt_env.engine import game
from tt_env.engine.rules import Rules
from tt_env.observation import encode

from .loop import can_batch
from .loop import play_game as loop_play_game

SEATINGS = ("rotations", "permutations")
"""How a deal is seated: the N cyclic rotations, or all N! orders (module docstring)."""
DEFAULT_BATCH_SIZE = 256
"""Games each worker plays side by side when an agent can batch (``run_deals(batch_size=...)``)."""


@dataclass
class GameRecord:
    """One game of a deal, seen from the agents (index = position in the agent list)."""

    deal: int
    rotation: int
    """The seating's index (:func:`seats_in`; under ``"rotations"``, the rotation)."""
    seats: list[int]
    """``seats[i]``: the seat agent ``i`` played."""
    scores: list[int]
    """Final score of each agent."""
    win_shares: list[float]
    """1/k to each of the k agents with the lowest score, 0 to the others."""
    turns: int
    moves: list[int]
    """Decisions each agent made."""
    think_seconds: list[float]
    """Time each agent spent in ``act``."""
    actions: bytes = b""
    """Every action id in order (0..53 fit a byte), for replayable records (``tt_env.ui.records``)."""


def seat_of(agent_index: int, rotation: int, num_agents: int) -> int:
    """Seat of agent ``agent_index`` in ``rotation``: ``(agent_index + rotation) % num_agents``."""
    return (agent_index + rotation) % num_agents


def seating_count(num_agents: int, seatings: str = "rotations") -> int:
    """Games a deal is played: N rotations, or N! orders."""
    if seatings not in SEATINGS:
        raise ValueError(f"seatings={seatings!r} is not allowed: use one of {list(SEATINGS)}")
    return num_agents if seatings == "rotations" else math.factorial(num_agents)


def seats_in(seating: int, num_agents: int) -> list[int]:
    """``seats[i]``, agent ``i``'s seat in seating ``k = j * N + r``: the ``j``-th order (in
    lexicographic order) of agents 1..N-1 after agent 0 around the table, rotated ``r`` seats. The
    first N seatings (``j = 0``) are the rotations, :func:`seat_of`'s."""
    order_index, shift = divmod(seating, num_agents)
    rest = next(itertools.islice(itertools.permutations(range(1, num_agents)), order_index, None))
    seats = [0] * num_agents
    for place, agent in enumerate((0, *rest)):
        seats[agent] = (place + shift) % num_agents
    return seats


class _Table:
    """One game in flight: its state, seating, random streams and what each agent did."""

    __slots__ = ("deal", "rotation", "seats", "by_seat", "rngs", "state", "moves", "think", "actions")

    def __init__(self, rules: Rules, seed: int, deal: int, rotation: int) -> None:
        n = rules.num_players
        self.deal, self.rotation = deal, rotation
        self.seats = seats_in(rotation, n)
        self.by_seat = [0] * n
        for i, s in enumerate(self.seats):
            self.by_seat[s] = i
        deal_rng = np.random.default_rng(np.random.SeedSequence([seed, deal, 0]))
        shuffle_rng = np.random.default_rng(np.random.SeedSequence([seed, deal, 1]))
        self.rngs = [np.random.default_rng(np.random.SeedSequence([seed, deal, 2, rotation, i])) for i in range(n)]
        # reshuffles draw from their own stream, so the deals of later rounds stay the same in every seating
        self.state = game.new_game(rules, deal_rng, shuffle_rng=shuffle_rng)
        self.moves = [0] * n
        self.think = [0.0] * n
        self.actions: list[int] = []

    def to_move(self) -> int:
        """Index (in the agent list) of the agent whose turn it is."""
        return self.by_seat[self.state.current_player]

    def play(self, agent: Agent, i: int, action: int, mask: np.ndarray, seconds: float) -> None:
        """Apply agent ``i``'s ``action`` (checked against ``mask``), counting ``seconds`` of its thinking."""
        self.think[i] += seconds
        self.moves[i] += 1
        if not mask[action]:
            raise RuntimeError(f"agent {getattr(agent, 'name', agent)!r} chose illegal action "
                               f"{action} at {self.state.describe()}")
        self.actions.append(int(action))
        game.apply(self.state, action)

    def record(self) -> GameRecord:
        """The :class:`GameRecord` of the finished game."""
        state, n = self.state, len(self.seats)
        scores = [state.scores[self.seats[i]] for i in range(n)]
        low = min(scores)
        winners = sum(s == low for s in scores)
        shares = [1.0 / winners if s == low else 0.0 for s in scores]
        turns = sum(r.turns for r in state.round_results)
        return GameRecord(self.deal, self.rotation, self.seats, scores, shares, turns, self.moves, self.think,
                          bytes(self.actions))


def _check_table(agents: Sequence[Agent], rules: Rules) -> None:
    n = len(agents)
    if rules.num_players != n:
        raise ValueError(f"{n} agents need rules with num_players={n}, got num_players={rules.num_players}")


def play_game(agents: Sequence[Agent], rules: Rules, seed: int, deal: int, rotation: int) -> GameRecord:
    """Play deal ``deal`` of run ``seed`` with the seats of ``rotation``; agents in list order.

    A batch-capable agent is asked through ``act_batch`` with one row, so that it decides
    here as it does in the games played side by side (module docstring).
    """
    _check_table(agents, rules)
    table = _Table(rules, seed, deal, rotation)
    n = len(agents)
    at_seat = [agents[table.by_seat[s]] for s in range(n)]
    rngs = [table.rngs[table.by_seat[s]] for s in range(n)]

    def note(_state: game.GameState, seat: int, _obs: np.ndarray, _mask: np.ndarray, action: int,
             seconds: float) -> None:
        i = table.by_seat[seat]
        table.think[i] += seconds
        table.moves[i] += 1
        table.actions.append(int(action))

    loop_play_game(at_seat, rules, None, agent_rngs=rngs, state=table.state, on_decision=note)
    return table.record()


def play_deal(agents: Sequence[Agent], rules: Rules, seed: int, deal: int,
              seatings: str = "rotations") -> list[GameRecord]:
    """Every seating of one deal."""
    return [play_game(agents, rules, seed, deal, k) for k in range(seating_count(len(agents), seatings))]


def play_deals(agents: Sequence[Agent], rules: Rules, seed: int, deals: Iterable[int],
               batch_size: int = DEFAULT_BATCH_SIZE, seatings: str = "rotations") -> Iterator[list[GameRecord]]:
    """Every seating of each deal in ``deals``, yielded deal by deal in that order.

    With ``batch_size`` > 1 and a batch-capable agent, ``batch_size`` games are played side
    by side and their decisions batched (module docstring); the records are the same.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} is not allowed: use 1 or more games side by side")
    _check_table(agents, rules)
    count = seating_count(len(agents), seatings)
    if batch_size == 1 or not any(can_batch(a) for a in agents):
        for deal in deals:
            yield play_deal(agents, rules, seed, deal, seatings)
        return
    yield from _side_by_side(agents, rules, seed, deals, batch_size, count)


def _side_by_side(agents: Sequence[Agent], rules: Rules, seed: int, deals: Iterable[int],
                  batch_size: int, count: int) -> Iterator[list[GameRecord]]:
    n = len(agents)
    batched = [can_batch(a) for a in agents]
    owner = [next(j for j in range(n) if agents[j] is agents[i]) for i in range(n)]  # one batch per object
    starts = ((deal, k) for deal in deals for k in range(count))
    open_deals: deque[int] = deque()  # deals started and not yet yielded, in order
    done: dict[int, list[GameRecord | None]] = {}
    tables: list[_Table] = []
    while True:
        while len(tables) < batch_size:
            start = next(starts, None)
            if start is None:
                break
            deal, k = start
            if k == 0:
                open_deals.append(deal)
                done[deal] = [None] * count
            tables.append(_Table(rules, seed, deal, k))
        if not tables:
            return
        waiting: dict[int, list[tuple[_Table, int]]] = {}
        for t in tables:
            i = t.to_move()
            waiting.setdefault(owner[i], []).append((t, i))
        for j, group in waiting.items():
            agent = agents[j]
            observations = [encode(t.state, t.state.current_player) for t, _ in group]
            masks = [game.action_mask(t.state) for t, _ in group]
            if batched[j]:
                t0 = time.perf_counter()
                actions = agent.act_batch(observations, masks, [t.rngs[i] for t, i in group])
                share = (time.perf_counter() - t0) / len(group)
                if len(actions) != len(group):
                    raise RuntimeError(f"agent {getattr(agent, 'name', agent)!r} returned {len(actions)} actions "
                                       f"from act_batch for {len(group)} observations: give one per observation")
                for (t, i), mask, action in zip(group, masks, actions, strict=True):
                    t.play(agent, i, action, mask, share)
                continue
            for (t, i), obs, mask in zip(group, observations, masks, strict=True):
                t0 = time.perf_counter()
                action = agent.act(obs, mask, t.rngs[i])
                t.play(agent, i, action, mask, time.perf_counter() - t0)
        playing = []
        for t in tables:
            if t.state.game_over:
                done[t.deal][t.rotation] = t.record()
            else:
                playing.append(t)
        tables = playing
        while open_deals and all(r is not None for r in done[open_deals[0]]):
            yield done.pop(open_deals.popleft())  # type: ignore[misc]


# ---------------------------------------------------------------- worker processes
_WORKER: dict = {}


def build_agent(spec: str | Agent, rules: Rules, allow_rule_mismatch: bool = False) -> Agent:
    """``make_agent(spec, rules)``; ``allow_rule_mismatch`` goes to the agents that take it
    (checkpoints, and agents built on trained networks such as ``ismcts-v1``)."""
    if allow_rule_mismatch and takes_option(spec, "allow_rule_mismatch"):
        return make_agent(spec, rules, allow_rule_mismatch=True)
    return make_agent(spec, rules)


def _init_worker(specs: Sequence[str], rules_dict: dict, seed: int, allow_rule_mismatch: bool = False,
                 batch_size: int = DEFAULT_BATCH_SIZE, seatings: str = "rotations") -> None:
    """Build the agents once per worker process from their specs (spawn-safe)."""
    rules = Rules.from_dict(rules_dict)
    _WORKER.update(agents=[build_agent(s, rules, allow_rule_mismatch) for s in specs], rules=rules, seed=seed,
                   batch_size=batch_size, seatings=seatings)


def _worker_deals(deals: Sequence[int]) -> list[list[GameRecord]]:
    return list(play_deals(_WORKER["agents"], _WORKER["rules"], _WORKER["seed"], deals, _WORKER["batch_size"],
                           _WORKER["seatings"]))


def run_deals(specs: Sequence[str | Agent], rules: Rules, num_deals: int, seed: int, workers: int = 1,
              on_deal: Callable[[list[GameRecord]], None] | None = None, *,
              allow_rule_mismatch: bool = False, batch_size: int = DEFAULT_BATCH_SIZE,
              seatings: str = "rotations") -> list[list[GameRecord]]:
    """Play deals ``0 .. num_deals - 1``; the result is ordered by deal, whatever ``workers`` is.

    ``specs`` are registry names or checkpoint paths (rebuilt in each worker); agent objects
    are allowed only with ``workers=1``. ``on_deal`` is called as each deal finishes (in deal
    order). ``allow_rule_mismatch`` lets checkpoint agents play games whose scoring rules differ
    from their training rules (``models.agent_loader.load_agent``). ``batch_size``: games each
    worker plays side by side, batching the decisions of agents that can (module docstring);
    1 plays them one at a time. ``seatings``: :data:`SEATINGS` (module docstring). The records do
    not depend on ``workers`` or ``batch_size``.
    """
    if num_deals < 1:
        raise ValueError(f"num_deals={num_deals} is not allowed: play at least 1 deal")
    if workers < 1:
        raise ValueError(f"workers={workers} is not allowed: use 1 or more")
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size} is not allowed: use 1 or more games side by side")
    seating_count(len(specs), seatings)  # (a bad scheme named here)
    if workers > 1 and not all(isinstance(s, str) for s in specs):
        raise ValueError("agent objects cannot be sent to worker processes: name them by registry name "
                         "or checkpoint path, or use workers=1")
    for s in specs:  # fail here, with the agent's own message, before any worker starts
        build_agent(s, rules, allow_rule_mismatch)
    results: list[list[GameRecord]] = []
    for records in _iter_deals(specs, rules, num_deals, seed, workers, allow_rule_mismatch, batch_size, seatings):
        results.append(records)
        if on_deal is not None:
            on_deal(records)
    return results


def deal_blocks(num_deals: int, workers: int, batch_size: int, games_per_deal: int) -> list[range]:
    """Deals ``0 .. num_deals - 1`` cut into the tasks of ``workers`` processes, in order.

    One game at a time: blocks of up to 8 deals, about 8 per worker. Side by side: about 4
    blocks per worker, to balance the load, each of at most four times the deals of
    ``batch_size`` games (a block's games are played side by side, its last ones in smaller
    batches).
    """
    if batch_size == 1:
        size = max(1, min(8, num_deals // (workers * 8)))
    else:
        per_table = -(-batch_size // games_per_deal)  # deals that fill batch_size games
        size = max(1, min(4 * per_table, -(-num_deals // (workers * 4))))
    return [range(start, min(start + size, num_deals)) for start in range(0, num_deals, size)]


def _iter_deals(specs: Sequence[str | Agent], rules: Rules, num_deals: int, seed: int,
                workers: int, allow_rule_mismatch: bool = False, batch_size: int = DEFAULT_BATCH_SIZE,
                seatings: str = "rotations") -> Iterator[list[GameRecord]]:
    if workers == 1:
        agents = [build_agent(s, rules, allow_rule_mismatch) for s in specs]
        yield from play_deals(agents, rules, seed, range(num_deals), batch_size, seatings)
        return
    ctx = multiprocessing.get_context("spawn")
    blocks = deal_blocks(num_deals, workers, batch_size, seating_count(len(specs), seatings))
    workers = min(workers, len(blocks))  # a process without a block of deals would only start up
    with ctx.Pool(workers, initializer=_init_worker,
                  initargs=(list(specs), rules.to_dict(), seed, allow_rule_mismatch, batch_size, seatings)) as pool:
        for records in pool.imap(_worker_deals, blocks):
            yield from records
