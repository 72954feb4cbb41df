"""One game of the Play page: a person at one seat, agents at the others, the engine between them.

The server plays the agents' moves itself, right after the person's move, until it is the
person's turn again (each agent's move is ``tt_env.evaluation.loop.agent_decision``, the step of
the one game loop); it stops at the end of every round (every hand face up, in melds) until
the person asks for the next one, so no round ends unseen. A move is accepted only when it is
the person's turn, the game is not paused at a round's end, the move is legal for the engine,
and the request says it was chosen at the position the server holds (``step``, the number of
moves made so far: a stale page or a double click cannot play twice). Anything else is
refused with a message and leaves the game as it was.

The agents' moves are checked against a :class:`~.work.StopSignal` (the app's work limit: its
browser gone, or out of time): a stopped game cannot go on and says why, as a game whose agent
failed does. Its record, which holds the seed and so the whole deal, is given only once the game
can no longer be played (over, or stopped).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..actions import action_name
from ..agents import Agent
from ..engine.game import GameState, RoundRecord, legal_actions, new_game
from ..evaluation.loop import agent_decision
from ..engine.rules import Rules
from ..ui.records import GameRecord, record_from_game
from .validate import RequestError, short_repr
from .views import event_seen_by, hint_view, play_move, round_end_view, round_totals, table_view
from .work import StopSignal, Stopped

HUMAN = "human"
"""The name of the person's seat in the game record (as ``tt_env.ui.play`` writes it)."""


class AgentFailed(RuntimeError):
    """An agent raised or chose an illegal move: the game cannot go on."""


class PlayGame:
    """A person at ``seat`` against ``agents`` (seat -> agent); ``agent_names[p]`` names seat ``p``."""

    def __init__(self, rules: Rules, seat: int, agents: Mapping[int, Agent], agent_names: Mapping[int, str],
                 seed: int) -> None:
        n = rules.num_players
        if set(agents) != set(range(n)) - {seat}:
            raise ValueError(f"agents must sit at every seat but {seat}: got seats {sorted(agents)}")
        self.rules, self.seat, self.seed = rules, seat, seed
        self.agents = dict(agents)
        self.names = [HUMAN if p == seat else agent_names[p] for p in range(n)]
        self.state: GameState = new_game(rules, np.random.default_rng(seed))
        self.actions: list[int] = []
        self.agent_rng = np.random.default_rng([seed, 1])
        self.events: list[dict[str, Any]] = []
        """Every move so far, as the person saw it (another seat's card from the stock hidden)."""
        self.paused: RoundRecord | None = None
        """The round just finished, shown until the person asks for the next one."""
        self.failure: str | None = None
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ moves
    def start(self, stop: StopSignal | None = None) -> None:
        """Let the agents move until the person's first turn (:class:`Stopped` once ``stop`` is set)."""
        self._advance(stop)

    def act(self, action: Any, step: Any, stop: StopSignal | None = None) -> None:
        """The person's move ``action`` chosen at position ``step``, then the agents' (:meth:`start`);
        a 4xx :class:`RequestError` for a move refused, which leaves the game as it was."""
        state = self.state
        self._check_live()
        if self.paused is not None:
            raise RequestError(f"round {self.paused.round_number} is over: ask for the next round first", 409)
        if state.current_player != self.seat:
            raise RequestError(f"it is player_{state.current_player}'s turn, not yours", 409)
        if not isinstance(step, int) or isinstance(step, bool) or step != len(self.actions):
            raise RequestError(f"step={short_repr(step)} is not this game's position: {len(self.actions)} moves have "
                               f"been made (reload the game to see it)", 409)
        legal = legal_actions(state)
        if not isinstance(action, int) or isinstance(action, bool) or action not in legal:
            names = ", ".join(f"{a} ({action_name(a)})" for a in legal)
            raise RequestError(f"action {short_repr(action)} is not legal now: the legal moves are {names}")
        self._play(action)
        self._advance(stop)

    def next_round(self, stop: StopSignal | None = None) -> None:
        """Leave the finished round's summary and go on (409 when no round has just finished)."""
        self._check_live()
        if self.paused is None:
            raise RequestError("no round has just finished: there is nothing to continue", 409)
        self.paused = None
        self._advance(stop)

    @property
    def over(self) -> bool:
        """Whether the game can no longer be played: it has ended, or it stopped (an agent failed, or
        its agents were stopped)."""
        return self.state.game_over or self.failure is not None

    def _check_live(self) -> None:
        if self.failure is not None:
            raise RequestError(f"the game stopped: {self.failure}", 409)
        if self.state.game_over:
            raise RequestError("the game is over: start a new game", 409)

    def _play(self, action: int) -> None:
        event, result = play_move(self.state, action)
        self.actions.append(action)
        self.events.append({"step": len(self.actions), **event_seen_by(event, self.seat)})
        if result.round_record is not None:
            self.paused = result.round_record

    def _advance(self, stop: StopSignal | None) -> None:
        """The agents' moves until the person's turn, a round's end or the game's end; once ``stop`` is
        set, the game stops for good (:class:`Stopped`): it cannot be resumed halfway."""
        state = self.state
        while not state.game_over and self.paused is None and state.current_player != self.seat:
            if stop is not None and stop.is_set():
                self.failure = stop.reason
                raise Stopped(stop.reason)
            p = state.current_player
            try:
                action = int(agent_decision(self.agents[p], state, self.agent_rng)[2])
            except Exception as exc:
                self.failure = f"agent {self.names[p]} at seat {p} failed: {exc}"
                raise AgentFailed(self.failure) from exc
            if action not in legal_actions(state):
                self.failure = f"agent {self.names[p]} at seat {p} chose the illegal action {action}"
                raise AgentFailed(self.failure)
            self._play(action)

    # ------------------------------------------------------------------ what the page shows
    def view(self, since: int = 0) -> dict[str, Any]:
        """The person's view: the table, the legal moves (only on their turn), the moves after ``since``,
        and a finished round's summary while paused."""
        state = self.state
        yours = (not state.game_over and self.paused is None and self.failure is None
                 and state.current_player == self.seat)
        view = {
            "table": table_view(state, self.names, self.seat), "seat": self.seat, "step": len(self.actions),
            "legal": legal_actions(state) if yours else [], "your_turn": yours,
            "events": self.events[max(0, since):], "round_end": None, "failure": self.failure,
            "seed": self.seed if self.over else None,  # the seed gives the deal away: shown at the end
        }
        if self.paused is not None:
            done = len(state.round_results)
            view["round_end"] = round_end_view(self.paused, self.rules, self.names, round_totals(state, done))
        return view

    def hint(self) -> dict[str, Any]:
        """The solver's best arrangement of the person's hand (and best discard on their turn)."""
        return hint_view(self.state, self.seat)

    def record(self) -> GameRecord:
        """The game as a record (``tt_env.ui.records``; final scores once it is over). Only once the game
        can no longer be played (:attr:`over`): the record holds the seed, which gives the whole deal
        away, every hand and the stock's order (409 before)."""
        if not self.over:
            raise RequestError("the game record is given once the game is over: it holds the seed, which gives "
                               "the deal away (every hand and the stock)", 409)
        final: Sequence[int] | None = self.state.scores if self.state.game_over else None
        return record_from_game(self.rules, self.seed, self.names, self.actions, final)
