"""Checks shared by the environments: actions that are not integers, seeds, done agents, table
counts, flags, and the player count, opponents, seat and illegal-action mode of the one-learner
environments (``tt_env.gym_env`` and the batched vector env).

Kept apart from the environments so that their modules hold the game logic; the messages
say what is wrong and what is allowed (STYLE: bad input gets a clear error).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .engine import game
from .engine.rules import MAX_PLAYERS, MIN_PLAYERS, Rules

SEAT_MODES = ("rotate", "random")
"""The learner's seats besides an int: by episode (``"rotate"``) or drawn (``"random"``)."""
ILLEGAL_ACTION_MODES = ("terminate", "raise")
"""What a one-learner environment does with a masked-out action: reward -1 and end, or raise."""


class ActionCheckWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` with errors that say what is wrong.

    A non-integer action (a bool, a float, a string, ``None`` at a live agent's turn, an array
    with a shape) raises ``TypeError`` and an integer outside ``0..53`` raises ``ValueError``,
    both naming what is allowed, instead of a bare ``AssertionError`` (or, for ``True``, an
    error from inside ``TerminateIllegalWrapper``). These are bugs in the caller, not moves:
    only an in-range action that the mask forbids is an illegal move, which
    ``TerminateIllegalWrapper`` turns into -1 for the offender.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def step(self, action: Any) -> None:
        if type(action) is not int:
            raw = self._raw
            if action is None and raw.game_state is not None and _is_done(raw, raw.agent_selection):
                self.env.step(None)
                return
            action = raw._checked_action(action)
        if not 0 <= action < game.NUM_ACTIONS:
            raise ValueError(f"action {action} is outside the action space: use an int 0..{game.NUM_ACTIONS - 1} "
                             f"(one whose action_mask entry is 1)")
        self.env.step(action)


def _is_done(env: Any, agent: str) -> bool:
    """Whether ``agent`` is terminated or truncated (or already removed)."""
    return env.terminations.get(agent, True) or env.truncations.get(agent, True)


def checked_seed(seed: Any, *, allow_list: bool = False) -> Any:
    """``seed`` for ``reset``: ``None``, an int >= 0 (a numpy integer becomes an int) or, with
    ``allow_list``, a non-empty list or tuple of them; else ``ValueError``/``TypeError`` naming it."""
    if seed is None or type(seed) is int and seed >= 0:
        return seed
    allowed = "None or an integer >= 0" + (" (or a non-empty list of them)" if allow_list else "")
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise ValueError(f"seed={seed!r} is not allowed: a seed must not be negative; use {allowed}")
        return int(seed)
    if allow_list and isinstance(seed, (list, tuple)) and seed:
        try:
            return [checked_seed(s) for s in seed]
        except (TypeError, ValueError):
            raise ValueError(f"seed={seed!r} is not allowed: every entry of a seed list must be an integer "
                             f">= 0; use {allowed}") from None
    raise TypeError(f"seed={seed!r} ({type(seed).__name__}) is not allowed: use {allowed}")


def checked_flag(value: Any, name: str) -> bool:
    """``value`` (a bool, numpy's too) as a bool; ``ValueError`` naming ``name`` otherwise (a string
    such as ``"false"`` from a config file would read as True)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name}={value!r} is not allowed: use True or False")


def table_count(value: Any, name: str) -> int:
    """``value``, a count of tables (an int or a numpy integer, at least 1), as an int;
    ``ValueError`` naming ``name`` and what is allowed otherwise."""
    if isinstance(value, np.integer):
        value = int(value)
    if type(value) is not int or value < 1:
        raise ValueError(f"{name}={value!r} is not allowed: use an int >= 1")
    return value


def player_count(num_opponents: int, num_players: Any, rules: Any, rule_options: dict[str, Any]) -> int:
    """The player count of a one-learner environment from its arguments, checked.

    ``rules`` (a :class:`Rules`) and rule options exclude each other, and ``num_players`` must
    agree with ``rules``; without either, the count is one more than the opponents. One or
    ``n - 1`` opponents fit ``n`` players (one is repeated)."""
    if isinstance(num_players, (int, np.integer)) and not isinstance(num_players, (bool, np.bool_)):
        num_players = int(num_players)  # (numpy's integers and int subclasses such as an IntEnum)
    if rules is not None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules={rules!r} is not a Rules object")
        if rule_options:
            raise ValueError(f"give rules=Rules(...) or rule options, not both (got {sorted(rule_options)})")
        if num_players is not None and num_players != rules.num_players:
            raise ValueError(f"num_players={num_players!r} does not match rules.num_players={rules.num_players}")
        num_players = rules.num_players
    if num_players is not None and (type(num_players) is not int
                                    or not MIN_PLAYERS <= num_players <= MAX_PLAYERS):
        raise ValueError(f"num_players={num_players!r} is not allowed: use None (one more than the "
                         f"opponents) or an integer {MIN_PLAYERS}..{MAX_PLAYERS}")
    n = num_players if num_players is not None else num_opponents + 1
    if num_opponents not in (1, n - 1):
        raise ValueError(f"{num_opponents} opponents do not fit num_players={n}: give 1 (repeated) "
                         f"or {n - 1} opponents")
    return n


def is_batched_agent(agent: object) -> bool:
    """Whether ``agent.act`` takes (observation, action_mask) alone, as batched agents do
    (``tt_env.batch.agents``); a scalar agent's ``act`` also takes a numpy generator."""
    act = getattr(agent, "act", None)
    if act is None:
        return False
    try:
        params = [p for p in inspect.signature(act).parameters.values()
                  if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return True
    return len(params) == 2


def learner_table(opponents: Any, seat: Any, illegal_action: Any, num_players: Any, rules: Any,
                  rule_options: dict[str, Any], *, agent_kinds: str) -> tuple[list[Any], int | str, int]:
    """The opponents (one per other seat), seat and player count of a one-learner environment, checked.

    One environment owns these checks so that ``tt_env.gym_env`` and the batched vector env take
    the same arguments: ``opponents`` is one agent or name or a non-empty sequence of them (a
    single one is repeated for every other seat), ``seat`` an int ``0..n-1`` (a numpy integer
    too, not a bool) or one of :data:`SEAT_MODES`, ``illegal_action`` one of
    :data:`ILLEGAL_ACTION_MODES`. ``agent_kinds`` says, in the error for no opponents, what an
    agent may be in that environment."""
    if isinstance(opponents, str) or hasattr(opponents, "act"):
        opponents = [opponents]
    if isinstance(opponents, (bytes, dict)) or not hasattr(opponents, "__iter__"):
        raise ValueError(f"opponents={opponents!r} is not allowed: give an agent or a list of them ({agent_kinds})")
    opponents = list(opponents)
    if not opponents:
        raise ValueError(f"opponents=[] is not allowed: give at least one agent ({agent_kinds})")
    for agent in opponents:
        if isinstance(agent, type):
            raise ValueError(f"opponent {agent.__name__} is a class, not an agent: give an agent object (an instance "
                             f"made for the game's rules) or a name ({agent_kinds})")
    n = player_count(len(opponents), num_players, rules, rule_options)
    if isinstance(seat, (int, np.integer)) and not isinstance(seat, (bool, np.bool_)):
        seat = int(seat)
    if illegal_action not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"illegal_action={illegal_action!r} is not allowed: use one of "
                         f"{list(ILLEGAL_ACTION_MODES)}")
    if not (seat in SEAT_MODES or (type(seat) is int and 0 <= seat < n)):
        raise ValueError(f"seat={seat!r} is not allowed: use an int 0..{n - 1}, 'rotate' or 'random'")
    return (opponents * (n - 1) if len(opponents) == 1 else opponents), seat, n
