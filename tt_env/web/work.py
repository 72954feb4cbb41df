"""Bounds on the agents' work: how many computations run at once, how long each may take, and a stop
that every agent move checks.

Every agent move the server computes for a request (a new Watch game, the agents' moves of a Play
game) runs through :class:`WorkLimit`: at most ``max_jobs`` at a time (503 past that), each given
a :class:`StopSignal` that is set when its browser closes the request or its time is up. The
work checks the signal before each agent move and raises :class:`Stopped` (:func:`stop_guard`
puts the check in front of an agent for loops that are not ours, such as the evaluator's).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ..agents import Agent
from .validate import RequestError


class Stopped(Exception):
    """A computation stopped by its :class:`StopSignal` (its browser gone, out of time, or asked to)."""


class StopSignal(threading.Event):
    """An event that stops a computation at its next agent move, with the reason to give for it."""

    def __init__(self) -> None:
        super().__init__()
        self.reason = "the game was stopped"

    def stop(self, reason: str) -> None:
        """Set the signal, saying why."""
        self.reason = reason
        self.set()

    def check(self) -> None:
        """Raise :class:`Stopped` (with the reason) once the signal is set."""
        if self.is_set():
            raise Stopped(self.reason)


class _Guard:
    """``agent`` with ``check()`` called before each of its moves (which raises to stop the game)."""

    def __init__(self, agent: Agent, check: Callable[[], None]) -> None:
        self.agent, self.check = agent, check
        self.name = getattr(agent, "name", agent)

    def act(self, observation: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        self.check()
        return self.agent.act(observation, mask, rng)


class _BatchGuard(_Guard):
    """A :class:`_Guard` of an agent with ``act_batch``: the game loops still ask it in batches."""

    def act_batch(self, observations: Any, masks: Any, rngs: Any) -> Any:
        self.check()
        return self.agent.act_batch(observations, masks, rngs)  # type: ignore[attr-defined]


def stop_guard(agent: Agent, check: Callable[[], None]) -> Agent:
    """``agent`` asking ``check()`` before every move (``act`` and, if it has it, ``act_batch``)."""
    batched = callable(getattr(agent, "act_batch", None))
    return (_BatchGuard if batched else _Guard)(agent, check)  # type: ignore[return-value]


class WorkLimit:
    """At most ``max_jobs`` agent computations at a time (503 past that), each stopped when its
    browser goes away or after ``max_seconds``."""

    def __init__(self, max_jobs: int, max_seconds: float) -> None:
        if max_jobs < 1:
            raise ValueError(f"max_jobs={max_jobs} is not allowed: use an integer >= 1")
        self.max_jobs, self.max_seconds = max_jobs, max_seconds
        self._slots = threading.BoundedSemaphore(max_jobs)

    async def run(self, request: Request, work: Callable[[StopSignal], Any]) -> Any:
        """``work(stop)`` in a worker thread; ``stop`` is set when the request's client disconnects or
        time runs out, and :class:`Stopped` from ``work`` becomes a 503 with the reason. The slot is
        held until the thread itself ends."""
        if not self._slots.acquire(blocking=False):
            raise RequestError(f"the server is busy: {self.max_jobs} games are being computed; try again when "
                               f"one has finished", 503)
        stop = StopSignal()

        def in_thread() -> Any:
            try:
                return work(stop)
            finally:
                self._slots.release()

        task = asyncio.ensure_future(run_in_threadpool(in_thread))
        deadline = time.monotonic() + self.max_seconds
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=0.1)
                if task.done() or stop.is_set():
                    continue
                if await request.is_disconnected():
                    stop.stop("the browser closed the request, so its game was stopped")
                elif time.monotonic() > deadline:
                    stop.stop(f"the agents took over {self.max_seconds:g} s on this game and were stopped: choose "
                              f"faster agents or fewer rounds")
        except asyncio.CancelledError:
            stop.stop("the request was cancelled, so its game was stopped")
            raise
        try:
            return task.result()
        except Stopped:
            raise RequestError(stop.reason, 503) from None
