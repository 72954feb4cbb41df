"""Three Thirteen as an RLCard environment, ``"three-thirteen"`` (needs the ``rlcard`` extra).

Importing this package registers the environment with RLCard's registry, so that
``rlcard.make("three-thirteen", config={"seed": 0, "game_num_players": 3})`` works and RLCard's
agents, ``env.run`` and ``rlcard.utils.tournament`` run on it unchanged:

- :mod:`.env`: :class:`ThreeThirteenEnv`, RLCard's ``Env`` (state, payoffs, config keys);
- :mod:`.game`: :class:`ThreeThirteenGame`, RLCard's ``Game`` interface over ``tt_env.engine``.
"""

from __future__ import annotations

from rlcard.envs.registration import register, registry

from .env import ENV_ID, ThreeThirteenEnv, allowed_config_keys, rules_from_config
from .game import ThreeThirteenGame, relative_payoffs

if ENV_ID not in registry.env_specs:  # importing twice (or reloading) must not re-register
    register(env_id=ENV_ID, entry_point="tt_env.rlcard.env:ThreeThirteenEnv")

__all__ = ["ENV_ID", "ThreeThirteenEnv", "ThreeThirteenGame", "allowed_config_keys", "relative_payoffs",
           "rules_from_config"]
