"""``ismcts-v1``: ``ismcts-v0``'s search on worlds drawn from the learned belief (needs torch).

Registered by :mod:`models.agent_loader` (the plug-in that ``tt_env.agents.make_agent`` loads
for names it does not know), because the belief is a torch network. The search itself is
``tt_env.agents.ismcts.ISMCTSAgent``; this module only chooses its options and its belief.
"""

from __future__ import annotations

import os

import numpy as np

from tt_env.agents import register_agent
from tt_env.agents.ismcts import ISMCTSAgent
from tt_env.engine.rules import Rules

from .belief import SHIPPED as BELIEFS
from .belief import load_belief

ISMCTS_V1_DEFAULTS = {"candidates": 2, "z": 3.0, "margin": 1.0, "tilt": 0.025, "infer": 6, "horizon": 0}
"""``ismcts-v1``'s documented defaults (the search options it does not share with ``ismcts-v0``'s)."""

WORLDS_BY_PLAYERS = {2: 16, 3: 12, 4: 10}
"""``ismcts-v1``'s default ``worlds`` by player count (more players: the 4-player budget), and
``min_worlds`` is half of it: a world costs more play-out with every player, and these keep a
decision under issue 16's 250 ms on the 2-core machine (``benchmarks/bench_search.py``)."""


def default_worlds(num_players: int) -> tuple[int, int]:
    """(worlds, min_worlds) of ``ismcts-v1`` at its default budget for ``num_players``."""
    worlds = WORLDS_BY_PLAYERS.get(num_players, WORLDS_BY_PLAYERS[max(WORLDS_BY_PLAYERS)])
    return worlds, worlds // 2


def ismcts_v1(rules: Rules, *, belief: object = None, worlds: int | None = None, min_worlds: int | None = None,
              candidates: int = ISMCTS_V1_DEFAULTS["candidates"],
              z: float = ISMCTS_V1_DEFAULTS["z"], margin: float = ISMCTS_V1_DEFAULTS["margin"],
              tilt: float = ISMCTS_V1_DEFAULTS["tilt"], infer: int = ISMCTS_V1_DEFAULTS["infer"],
              horizon: int = ISMCTS_V1_DEFAULTS["horizon"], tree_depth: int = 0, exploration: float = 10.0,
              rollout: object = "expert", exact_last_turn: bool = True, allow_rule_mismatch: bool = False):
    """``ismcts-v1``: ``ismcts-v0``'s search on worlds drawn from the learned belief.

    ``belief``: a belief name or path (default the shipped ``belief-Np-v0`` for the player
    count) or a loaded :class:`models.belief.Belief`; a number is ``ismcts-v0``'s tilt (for
    ablations: 0 is uniform worlds). ``worlds`` and ``min_worlds`` default by player count
    (:func:`default_worlds`); ``min_worlds`` is capped at ``worlds``. ``allow_rule_mismatch``:
    a belief trained with other scoring (``aces``, ``meld_needs_natural``) is used anyway, as a
    checkpoint agent's is (its player and deck counts must still fit).
    """
    default, default_min = default_worlds(rules.num_players)
    worlds = default if worlds is None else worlds
    min_worlds = default_min if min_worlds is None else min_worlds
    if belief is None:
        belief = f"belief-{rules.num_players}p-v0"
    numeric = isinstance(belief, (int, float, np.number)) and not isinstance(belief, (bool, np.bool_))
    if not (numeric or hasattr(belief, "sample_unknown") or isinstance(belief, (str, os.PathLike))):
        raise ValueError(f"belief={belief!r} is not allowed: use a shipped belief's name ({sorted(BELIEFS)}), a "
                         f"belief checkpoint's path, a loaded belief, or a number (ismcts-v0's tilt)")
    model = belief if numeric or hasattr(belief, "sample_unknown") else load_belief(
        belief, rules=rules, allow_rule_mismatch=allow_rule_mismatch)
    agent = ISMCTSAgent(rules, worlds=worlds, min_worlds=min_worlds, candidates=candidates, z=z, margin=margin,
                        tree_depth=tree_depth, exploration=exploration, rollout=rollout, belief=model, tilt=tilt,
                        infer=infer, horizon=horizon, exact_last_turn=exact_last_turn)
    agent.name = "ismcts-v1"
    return agent


register_agent("ismcts-v1", ismcts_v1)
