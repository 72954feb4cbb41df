"""One game of the Watch page: a game record replayed, to step through in any order.

A record comes from a file the person opens (checked whole by ``tt_env.ui.records.replay``
before anything is shown: an illegal move, moves after the end or wrong final scores are
refused with the step that is wrong) or from a new game among chosen agents, played here
on the engine. Positions are kept every :data:`SNAPSHOT_EVERY` moves; any other position is
the nearest one before it played forward with the engine.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..agents import Agent
from ..engine.game import GameState, RoundRecord, legal_actions, new_game
from ..engine.rules import Rules
from ..evaluation.loop import play_game
from ..ui.records import GameRecord, record_from_game, replay
from .config import MAX_GAME_MOVES
from .work import Stopped
from .validate import RequestError, short_repr, short_text
from .views import event_seen_by, play_move, round_end_view, round_totals, table_view

SNAPSHOT_EVERY = 16


class WatchGame:
    """A checked record and the positions of its replay; it never changes once built, so any number of
    requests may read it at once (no lock)."""

    def __init__(self, record: GameRecord) -> None:
        self.record = record
        self.names = list(record.seats)
        self.snapshots: list[GameState] = []
        self.events: list[dict[str, Any]] = []
        self.round_ends: dict[int, RoundRecord] = {}
        """Step -> the round that the move of that step finished."""
        before: GameState | None = None
        try:
            for i, env in replay(record):  # each move is checked by replay() before it is noted here
                state = env.game_state
                if before is not None:
                    self._note(i, before, record.actions[i - 1])
                if i % SNAPSHOT_EVERY == 0:
                    self.snapshots.append(state.copy())
                before = None if state.game_over else state.copy()
        except ValueError as exc:
            raise RequestError(f"the record does not replay: {short_text(str(exc), 300)}") from None

    def _note(self, step: int, before: GameState, action: int) -> None:
        """The event and round end of the move of ``step`` (played on a copy of the position before it)."""
        event, result = play_move(before, action)
        self.events.append({"step": step, **event})
        if result.round_record is not None:
            self.round_ends[step] = result.round_record

    @property
    def steps(self) -> int:
        """Moves in the record (positions are ``0 .. steps``)."""
        return len(self.record.actions)

    def position(self, step: int) -> GameState:
        """The game after ``step`` moves."""
        if not 0 <= step <= self.steps:
            raise RequestError(f"step={step} is not a position of this game: use 0..{self.steps}")
        state = self.snapshots[step // SNAPSHOT_EVERY].copy()
        for action in self.record.actions[step // SNAPSHOT_EVERY * SNAPSHOT_EVERY:step]:
            play_move(state, action)
        return state

    def view(self, step: int, viewer: int | None) -> dict[str, Any]:
        """Position ``step`` with every hand face up (``viewer=None``) or as seat ``viewer`` saw it."""
        n = self.record.rules.num_players
        if viewer is not None and not 0 <= viewer < n:
            raise RequestError(f"seat={viewer} is not a seat of this game: use all or 0..{n - 1}")
        state = self.position(step)
        last = event_seen_by(self.events[step - 1], viewer) if step > 0 else None
        finished = self.round_ends.get(step)
        round_end = None
        if finished is not None:
            done = sum(1 for s in self.round_ends if s <= step)
            round_end = round_end_view(finished, self.record.rules, self.names, round_totals(state, done))
        recent = [event_seen_by(e, viewer) for e in self.events[max(0, step - 12):step]]
        return {"table": table_view(state, self.names, viewer), "step": step, "steps": self.steps,
                "last": last, "recent": recent, "round_end": round_end, "seats": self.names}


class _Guarded:
    """An agent of :func:`play_agents_game` as the game loop asks it: before it decides, the game
    stops (``stop`` set) or is refused (past :data:`~.config.MAX_GAME_MOVES` moves)."""

    def __init__(self, agent: Agent, actions: list[int], stop: threading.Event | None) -> None:
        self.agent, self.actions, self.stop = agent, actions, stop
        self.name = getattr(agent, "name", agent)

    def act(self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        if self.stop is not None and self.stop.is_set():
            raise Stopped(f"the game was stopped after {len(self.actions)} moves")
        if len(self.actions) >= MAX_GAME_MOVES:
            raise RequestError(f"the game took more than {MAX_GAME_MOVES} moves, the most this server plays")
        return int(self.agent.act(observation, mask, rng))


def play_agents_game(agents: Sequence[Agent], names: Sequence[str], rules: Rules, seed: int,
                     stop: threading.Event | None = None) -> GameRecord:
    """A whole game among ``agents`` (seat ``p``: ``agents[p]``) on the engine, as a record; raises
    :class:`Stopped` before the next move once ``stop`` is set, and refuses a game past
    :data:`~.config.MAX_GAME_MOVES` moves. It is played by :func:`tt_env.evaluation.play_game`."""
    state = new_game(rules, np.random.default_rng(seed))
    rng = np.random.default_rng([seed, 1])
    actions: list[int] = []

    def check(state: GameState, p: int, observation: np.ndarray, mask: np.ndarray, action: int,
              seconds: float) -> None:
        if action not in legal_actions(state):
            raise RuntimeError(f"agent {names[p]} at seat {p} chose the illegal action {action}")
        actions.append(action)

    guarded = [_Guarded(agent, actions, stop) for agent in agents]
    state = play_game(guarded, rules, None, agent_rngs=[rng] * len(agents), state=state,  # type: ignore[arg-type]
                      on_decision=check)
    return record_from_game(rules, seed, names, actions, state.scores)


def record_from_upload(data: Mapping[str, Any]) -> GameRecord:
    """A record from the JSON the browser sent (400 naming what is wrong; 413 for one of more than
    :data:`~.config.MAX_GAME_MOVES` moves, before any of it is replayed). Its ``rng_state``, kept and
    sent back with the record, must be exactly a state of numpy's default generator."""
    actions = data.get("actions")
    if isinstance(actions, list) and len(actions) > MAX_GAME_MOVES:
        raise RequestError(f"the record has {len(actions):,} moves: this server replays records of at most "
                           f"{MAX_GAME_MOVES} moves", 413)
    if data.get("rng_state") is not None:
        data = {**data, "rng_state": rng_state_field(data["rng_state"])}
    try:
        return GameRecord.from_dict(data, source="the record")
    except (TypeError, ValueError) as exc:
        raise RequestError(short_text(str(exc), 300)) from None


PCG64_STATE = "{'bit_generator': 'PCG64', 'state': {'state': int, 'inc': int}, 'has_uint32': 0 or 1, 'uinteger': int}"


def rng_state_field(value: Any) -> dict[str, Any]:
    """A record's ``rng_state`` rebuilt from its checked parts: numpy's ``PCG64`` state and nothing
    else (400 naming the form otherwise), so no other value the browser sent is kept or echoed."""
    def is_uint(v: Any, bits: int) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** bits

    inner = value.get("state") if isinstance(value, Mapping) else None
    if (not isinstance(value, Mapping) or set(value) != {"bit_generator", "state", "has_uint32", "uinteger"}
            or value["bit_generator"] != "PCG64" or not isinstance(inner, Mapping) or set(inner) != {"state", "inc"}
            or not is_uint(inner["state"], 128) or not is_uint(inner["inc"], 128)
            or value["has_uint32"] not in (0, 1) or not is_uint(value["uinteger"], 32)):
        raise RequestError(f"the record has rng_state {short_repr(value)}: use numpy's default generator state "
                           f"{PCG64_STATE}")
    return {"bit_generator": "PCG64", "state": {"state": inner["state"], "inc": inner["inc"]},
            "has_uint32": int(value["has_uint32"]), "uinteger": value["uinteger"]}
