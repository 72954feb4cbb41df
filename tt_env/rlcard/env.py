"""Three Thirteen as an RLCard environment: ``rlcard.make("three-thirteen")`` after ``import tt_env.rlcard``.

A thin adapter like ``tt_env/openspiel/``: every rule is the engine's (``tt_env.engine``), and
:class:`ThreeThirteenEnv` only speaks RLCard's ``Env`` protocol, so RLCard's agents (DQN, NFSP,
DMC, random), ``env.run`` and ``rlcard.utils.tournament`` work on it unchanged.

| | |
|---|---|
| ``state["obs"]`` | our observation (``tt_env.observation.encode``), float32, 107 N + 80 |
| ``state["legal_actions"]`` | ``OrderedDict`` of the legal action ids (our mask), values ``None`` (one-hot action features) |
| ``state["raw_legal_actions"]`` | their names: ``"draw stock"``, ``"take discard"``, ``"discard 7H"`` |
| ``state["raw_obs"]`` | the same observation; ``state["action_record"]`` the actions so far |
| ``env.get_payoffs()`` | per player the AEC env's ``relative`` rewards summed over the game, (sum of totals - N * own total) / (100 (N - 1)) |
| ``env.state_shape``, ``env.action_shape`` | ``[[107 N + 80]] * N``, ``[None] * N`` |

Config keys (``rlcard.make("three-thirteen", config={...})``): RLCard's ``seed`` and
``allow_step_back`` (``env.step_back()`` then undoes a step exactly: the game, ``env.timestep`` and
``state["action_record"]``; a refused step counts and records nothing), and one ``game_<option>``
per rule option of :class:`tt_env.engine.Rules`:
``game_num_players`` (2), ``game_decks`` (``"auto"``), ``game_aces`` (``"low"``),
``game_rounds`` (1..11), ``game_discard_drawn_discard`` (False), ``game_max_turns_per_round``
(200), ``game_meld_needs_natural`` (False). An unknown key or a bad value raises ``ValueError``
naming what is allowed.

Seeding: with ``config["seed"]`` the env's ``np_random`` draws one engine seed per game
(``env.game.game_seed``), so a seeded env plays the same deals whatever else uses numpy's or
Python's global generators; ``three_thirteen_v0.env().reset(seed=env.game.game_seed)`` deals
the same game. An illegal action raises ``ValueError`` naming the legal ones (RLCard's agents
only choose among ``legal_actions``).
"""  # noqa: E501  (markdown tables: one row a line)

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from rlcard.envs import Env

from ..actions import action_name
from ..engine.rules import Rules, option_names
from ..observation import observation_size
from .game import ThreeThirteenGame

ENV_ID = "three-thirteen"
GAME_PREFIX = "game_"
RLCARD_KEYS = ("seed", "allow_step_back")
"""The keys of RLCard's own default config (``rlcard.envs.registration.DEFAULT_CONFIG``)."""


def allowed_config_keys() -> list[str]:
    """Every key the env's config accepts."""
    return list(RLCARD_KEYS) + [GAME_PREFIX + name for name in option_names()]


def rules_from_config(config: dict[str, Any]) -> Rules:
    """The :class:`Rules` of an RLCard config (``game_<option>`` keys); bad keys or values raise ``ValueError``."""
    unknown = sorted(set(config) - set(allowed_config_keys()))
    if unknown:
        raise ValueError(f"unknown config key(s) {unknown} for {ENV_ID!r}: allowed are {allowed_config_keys()}")
    options = {key[len(GAME_PREFIX):]: value for key, value in config.items() if key.startswith(GAME_PREFIX)}
    return Rules.from_dict(options)


class ThreeThirteenEnv(Env):
    """RLCard's ``Env`` over :class:`~tt_env.rlcard.game.ThreeThirteenGame` (module docstring)."""

    def __init__(self, config: dict[str, Any]) -> None:
        config = dict(config)
        config.setdefault("seed", None)
        config.setdefault("allow_step_back", False)
        seed = config["seed"]
        if seed is not None:  # RLCard's own check fails with an AttributeError of its own (rlcard.utils.seeding)
            if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(f"seed={seed!r} is not allowed: use None or an integer >= 0")
            config["seed"] = int(seed)
        if not isinstance(config["allow_step_back"], bool):
            raise ValueError(f"allow_step_back={config['allow_step_back']!r} is not allowed: use True or False")
        self.name = ENV_ID
        self.rules = rules_from_config(config)
        self.default_game_config = {GAME_PREFIX + k: v for k, v in Rules().to_dict().items()}
        self.game = ThreeThirteenGame(self.rules)
        super().__init__(config)
        n = self.rules.num_players
        self.state_shape = [[observation_size(n)] for _ in range(n)]
        self.action_shape = [None for _ in range(n)]

    # ---------------------------------------------------------------- RLCard's hooks
    def _extract_state(self, state: dict[str, Any]) -> dict[str, Any]:
        legal = OrderedDict((a, None) for a in state["legal_actions"])
        return {"obs": state["obs"], "legal_actions": legal,
                "raw_obs": state["obs"], "raw_legal_actions": [action_name(a) for a in legal],
                "action_record": self.action_recorder}

    def _decode_action(self, action_id: Any) -> int:
        """An action id as the plain int the engine takes (numpy integers included)."""
        if isinstance(action_id, (bool, np.bool_)) or not isinstance(action_id, (int, np.integer)):
            raise TypeError(f"action {action_id!r} is not an action id: use an int 0..53 (or step(name, "
                            f"raw_action=True) with a name from state['raw_legal_actions'])")
        return int(action_id)

    def _get_legal_actions(self) -> OrderedDict:
        return OrderedDict((a, None) for a in self.game.get_legal_actions())

    # ---------------------------------------------------------------- undo that undoes everything
    def step(self, action: Any, raw_action: bool = False) -> tuple[dict[str, Any], int]:
        """RLCard's ``step``, except that a refused action leaves ``timestep`` and ``action_recorder`` as
        they were (RLCard counts and records it before the game refuses it)."""
        timestep, recorded = self.timestep, len(self.action_recorder)
        try:
            return super().step(action, raw_action)
        except Exception:
            self.timestep = timestep
            del self.action_recorder[recorded:]
            raise

    def step_back(self) -> tuple[dict[str, Any], int] | bool:
        """Undo the last action exactly: the game, ``timestep`` and ``action_recorder`` (so
        ``state["action_record"]``), which RLCard's own ``step_back`` leaves as they were after it.
        False when there is nothing to undo; RLCard's error when ``allow_step_back`` is off."""
        if not self.allow_step_back:
            return super().step_back()
        if not self.game.step_back():
            return False
        self.timestep -= 1
        self.action_recorder.pop()
        player_id = self.get_player_id()
        return self.get_state(player_id), player_id

    def get_payoffs(self) -> np.ndarray:
        """Per player, the relative reward of the game so far (the whole game once ``is_over()``)."""
        return self.game.get_payoffs()

    def get_perfect_information(self) -> dict[str, Any]:
        """Everything, hidden cards included (for debugging and human interfaces)."""
        state = self.game._live_state(allow_over=True)
        return {"hands": [list(h) for h in state.hands], "stock": list(state.stock),
                "discard_pile": list(state.discard_pile), "scores": list(state.scores),
                "round_number": state.round_number, "dealer": state.dealer,
                "current_player": state.current_player, "phase": "draw" if state.phase == 0 else "discard",
                "went_out": state.went_out, "legal_actions": self.game.get_legal_actions(),
                "game_seed": self.game.game_seed}
