"""Play, watch and compare agents in the browser: ``python -m tt_env.web`` (the ``web`` extra).

    python -m tt_env.web [--host 127.0.0.1] [--port 8000] [--no-browser] [--checkpoint PATH ...]

A local web app (Starlette, served by uvicorn; plain JavaScript and SVG cards served from the
package, nothing to build, nothing from a CDN) with three pages:

- **Play** (``/play``): a person against agents at 2 to 8 seats, any rule options; draw from the
  stock or take the discard, click a card to discard it. Only legal moves are offered; the
  solver's best arrangement of the hand on request; opponents' hand sizes and the cards they
  took; scores by round; at the end of a round every hand face up in melds with its points.
- **Watch** (``/watch``): a saved game record (``tt_env.ui.records``) or a new game among chosen
  agents, stepped back and forth or played at a speed, every hand face up or what one seat saw.
- **Leaderboard** (``/leaderboard``): the JSON files of ``python -m training.leaderboard --json``
  and ``python -m training.evaluate --json`` as tables with their intervals, and a small
  evaluation (``training.evaluate.evaluate``, a few deals) run in the background with a progress bar.

Safe by default: it listens on 127.0.0.1 unless ``--host`` says otherwise and, on any loopback
address, answers only to loopback names (``localhost``, ``127.0.0.1``, ``[::1]``, the address
itself); the engine decides every rule and the server trusts nothing the browser sends (a bad or
out-of-turn move gets a 4xx with a message and changes nothing); a Play game's seed (the whole
deal) and record are given only once it is over; games belong to the browser session that made
them (a cookie) and at most ``--max-games`` are kept; no pickles, and the only files it reads are
its own and the checkpoints named with ``--checkpoint`` (a ``.pt`` checkpoint or a
Stable-Baselines3 ``model.zip``).

Limits: request bodies of at most 2,000,000 bytes nested at most ``MAX_JSON_DEPTH`` (64) levels;
games of at most ``MAX_GAME_MOVES`` (5,000) moves, a longer record refused with 413 before it is
replayed and rules allowing a longer game with 400 (about 10 MB a kept game); ``DEFAULT_MAX_JOBS``
(2) agent computations at once (new Watch games, the agents' moves of Play games), one more refused
with 503, each stopped after ``MAX_WORK_SECONDS`` (300 s) or as soon as its browser closes the
request; a Play game busy with a move answers 409 at once; an evaluation stopped after
``MAX_EVAL_SECONDS`` (600 s), its search agents bounded by ``MAX_SEARCH_WORK``; unseeded games
seeded from ``secrets`` below 2**53 (see ``config.py``).

The JSON API (every answer JSON; errors are ``{"error": message}`` with a 4xx status):

| method and path | what |
|---|---|
| ``GET /api/options`` | agents offered (name, kind, player count), rule options and defaults, limits |
| ``POST /api/play`` ``{"seats": [...], "rules": {...}, "seed"}`` | a new game (``seats``: ``"human"`` once, agents) |
| ``GET /api/play/{id}?since=N`` | the person's view: table, legal moves, moves after move ``N``, a finished round |
| ``POST /api/play/{id}/action`` ``{"action", "step"}`` | the person's move (``step``: moves so far); then the agents' |
| ``POST /api/play/{id}/next-round`` ``{}`` | go on after a round's summary |
| ``GET /api/play/{id}/hint`` | the solver's best arrangement (and best discard) of the person's hand |
| ``GET /api/play/{id}/record`` | the game record (``tt_env.ui.records`` format) once the game is over; 409 before |
| ``POST /api/watch/record`` ``{"record": {...}}`` | open a record (checked by replaying it) |
| ``POST /api/watch/new`` ``{"seats": [...], "rules", "seed"}`` | agents play a new game to watch |
| ``GET /api/watch/{id}?step=N&seat=all`` | position ``N``: every hand (``seat=all``) or what seat ``k`` saw |
| ``GET /api/watch/{id}/record`` | the record being watched |
| ``POST /api/results`` (a results file) | a leaderboard or evaluation file as tables |
| ``POST /api/evaluations`` ``{"agents", "deals", "seed", "rules"}`` | start a small evaluation (one at a time) |
| ``GET /api/evaluations/{id}`` | its progress (deals done of total), then its report |
| ``POST /api/evaluations/{id}/stop`` ``{}`` | stop it at its next move |
"""

from __future__ import annotations

from typing import Any

from .cli import main

__all__ = ["create_app", "main"]


def __getattr__(name: str) -> Any:
    if name == "create_app":  # imported on use: it needs the web extra (Starlette)
        from .app import create_app

        return create_app
    raise AttributeError(f"module 'tt_env.web' has no attribute {name!r}")
