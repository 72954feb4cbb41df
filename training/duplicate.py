"""Duplicate games: play each deal once per seating, on the engine, reproducibly.

A *deal* is one seed for the deck shuffles of every round. With N agents it is played N
times, once per cyclic rotation of the seats (rotation k puts agent i in seat
``(i + k) % N``), so every agent plays every seat of every deal and the luck of the cards
cancels out within a deal. The engine draws the deals and the reshuffles of an empty stock
from separate random streams (:func:`play_game` hands it the reshuffle stream only for that
draw), so the hands of every round are the same in every rotation, whatever was played.

Seeds: deal ``d`` of a run with seed ``s`` uses ``SeedSequence([s, d, 0])`` for the deals,
``[s, d, 1]`` for the reshuffles and ``[s, d, 2, k, i]`` for agent ``i`` in rotation ``k``.
Results are keyed by deal index, so the numbers do not depend on how many worker processes
played them or in what order.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tt_env.agents import Agent, make_agent
from tt_env.engine import game
from tt_env.engine.rules import Rules
from tt_env.observation import encode


@dataclass
class GameRecord:
    """One game of a deal, seen from the agents (index = position in the agent list)."""

    deal: int
    rotation: int
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
    """Every action id in order (0..53 fit a byte), for replayable records (``tt_env.records``)."""


def seat_of(agent_index: int, rotation: int, num_agents: int) -> int:
    """Seat of agent ``agent_index`` in ``rotation``: ``(agent_index + rotation) % num_agents``."""
    return (agent_index + rotation) % num_agents


def play_game(agents: Sequence[Agent], rules: Rules, seed: int, deal: int, rotation: int) -> GameRecord:
    """Play deal ``deal`` of run ``seed`` with the seats of ``rotation``; agents in list order."""
    n = len(agents)
    if rules.num_players != n:
        raise ValueError(f"{n} agents need rules with num_players={n}, got num_players={rules.num_players}")
    seats = [seat_of(i, rotation, n) for i in range(n)]
    by_seat = [0] * n
    for i, s in enumerate(seats):
        by_seat[s] = i
    deal_rng = np.random.default_rng(np.random.SeedSequence([seed, deal, 0]))
    shuffle_rng = np.random.default_rng(np.random.SeedSequence([seed, deal, 1]))
    agent_rngs = [np.random.default_rng(np.random.SeedSequence([seed, deal, 2, rotation, i])) for i in range(n)]
    # reshuffles draw from their own stream, so the deals of later rounds stay the same in every rotation
    state = game.new_game(rules, deal_rng, shuffle_rng=shuffle_rng)
    moves = [0] * n
    think = [0.0] * n
    actions: list[int] = []
    steps = 0
    while not state.game_over:
        seat = state.current_player
        i = by_seat[seat]
        obs = encode(state, seat)
        mask = game.action_mask(state)
        t0 = time.perf_counter()
        action = agents[i].act(obs, mask, agent_rngs[i])
        think[i] += time.perf_counter() - t0
        moves[i] += 1
        if not mask[action]:
            raise RuntimeError(f"agent {getattr(agents[i], 'name', agents[i])!r} chose illegal action "
                               f"{action} at {state.describe()}")
        actions.append(int(action))
        game.apply(state, action)
        steps += 1
    scores = [state.scores[seats[i]] for i in range(n)]
    low = min(scores)
    winners = sum(s == low for s in scores)
    shares = [1.0 / winners if s == low else 0.0 for s in scores]
    turns = sum(r.turns for r in state.round_results)
    return GameRecord(deal, rotation, seats, scores, shares, turns, moves, think, bytes(actions))


def play_deal(agents: Sequence[Agent], rules: Rules, seed: int, deal: int) -> list[GameRecord]:
    """Every rotation of one deal."""
    return [play_game(agents, rules, seed, deal, k) for k in range(len(agents))]


# ---------------------------------------------------------------- worker processes
_WORKER: dict = {}


def build_agent(spec: str | Agent, rules: Rules, allow_rule_mismatch: bool = False) -> Agent:
    """``make_agent(spec, rules)``; ``allow_rule_mismatch`` goes to checkpoint agents only."""
    if allow_rule_mismatch:
        from models.agent_loader import is_checkpoint_spec  # needs torch: only when asked for

        if is_checkpoint_spec(spec):
            return make_agent(spec, rules, allow_rule_mismatch=True)
    return make_agent(spec, rules)


def _init_worker(specs: Sequence[str], rules_dict: dict, seed: int, allow_rule_mismatch: bool = False) -> None:
    """Build the agents once per worker process from their specs (spawn-safe)."""
    rules = Rules.from_dict(rules_dict)
    _WORKER.update(agents=[build_agent(s, rules, allow_rule_mismatch) for s in specs], rules=rules, seed=seed)


def _worker_deal(deal: int) -> list[GameRecord]:
    return play_deal(_WORKER["agents"], _WORKER["rules"], _WORKER["seed"], deal)


def run_deals(specs: Sequence[str | Agent], rules: Rules, num_deals: int, seed: int, workers: int = 1,
              on_deal: Callable[[list[GameRecord]], None] | None = None, *,
              allow_rule_mismatch: bool = False) -> list[list[GameRecord]]:
    """Play deals ``0 .. num_deals - 1``; the result is ordered by deal, whatever ``workers`` is.

    ``specs`` are registry names or checkpoint paths (rebuilt in each worker); agent objects
    are allowed only with ``workers=1``. ``on_deal`` is called as each deal finishes.
    ``allow_rule_mismatch`` lets checkpoint agents play games whose scoring rules differ
    from their training rules (``models.agent_loader.load_agent``).
    """
    if num_deals < 1:
        raise ValueError(f"num_deals={num_deals} is not allowed: play at least 1 deal")
    if workers < 1:
        raise ValueError(f"workers={workers} is not allowed: use 1 or more")
    if workers > 1 and not all(isinstance(s, str) for s in specs):
        raise ValueError("agent objects cannot be sent to worker processes: name them by registry name "
                         "or checkpoint path, or use workers=1")
    for s in specs:  # fail here, with the agent's own message, before any worker starts
        build_agent(s, rules, allow_rule_mismatch)
    results: list[list[GameRecord]] = []
    for records in _iter_deals(specs, rules, num_deals, seed, workers, allow_rule_mismatch):
        results.append(records)
        if on_deal is not None:
            on_deal(records)
    return results


def _iter_deals(specs: Sequence[str | Agent], rules: Rules, num_deals: int, seed: int,
                workers: int, allow_rule_mismatch: bool = False) -> Iterator[list[GameRecord]]:
    if workers == 1:
        agents = [build_agent(s, rules, allow_rule_mismatch) for s in specs]
        for deal in range(num_deals):
            yield play_deal(agents, rules, seed, deal)
        return
    ctx = multiprocessing.get_context("spawn")
    chunk = max(1, min(8, num_deals // (workers * 8)))
    with ctx.Pool(workers, initializer=_init_worker, initargs=(list(specs), rules.to_dict(), seed, allow_rule_mismatch)) as pool:
        yield from pool.imap(_worker_deal, range(num_deals), chunksize=chunk)
