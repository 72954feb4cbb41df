"""Our PettingZoo AEC environment as an RLlib ``MultiAgentEnv``, through RLlib's PettingZoo wrapper.

Two small layers, nothing else:

* :class:`RLlibObservationKeys` (a PettingZoo AEC wrapper) renames the observation dict's keys
  to the ones a masking RLModule reads, ``{"observations": ..., "action_mask": ...}``, and the
  spaces with them. The values are the env's own (float32 observation, int8 mask).
* :class:`ThreeThirteenRLlibEnv` is ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` on
  that wrapped ``three_thirteen_v0.env(...)``. It refuses an action that the current mask
  forbids (``env()`` would instead end the game with -1 for the offender, which would hide a
  masking bug from training), and it can raise on purpose at a given step, so that a test can
  check that a crashing environment fails the whole run.

``env_config`` keys: ``num_players`` (2), ``reward_mode`` (``"relative"``), ``rules`` (a dict of
rule options, e.g. ``{"rounds": [11]}``) and, for tests, ``fail_at_step`` (raise ``RuntimeError``
at this step of each env; ``None``).

:class:`SeatPolicyMapping` maps seats to policies: the shared learner everywhere (self-play),
or for a share of the episodes one learner seat among fixed opponents.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

from tt_env import three_thirteen_v0

OBS_KEY = "observations"
MASK_KEY = "action_mask"
LEARNER_POLICY = "shared"


class RLlibObservationKeys(BaseWrapper):
    """Renames ``{"observation", "action_mask"}`` to ``{"observations", "action_mask"}``."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._spaces: dict[str, gymnasium.spaces.Dict] = {}

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        if agent not in self._spaces:
            inner = self.env.observation_space(agent)
            self._spaces[agent] = gymnasium.spaces.Dict(
                {OBS_KEY: inner["observation"], MASK_KEY: inner["action_mask"]})
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        obs = self.env.observe(agent)
        if obs is None:
            return None
        return {OBS_KEY: obs["observation"], MASK_KEY: obs["action_mask"]}


def make_aec_env(env_config: dict[str, Any] | None = None) -> RLlibObservationKeys:
    """``three_thirteen_v0.env(...)`` as configured by ``env_config``, keys renamed for RLlib."""
    cfg = dict(env_config or {})
    return RLlibObservationKeys(three_thirteen_v0.env(
        num_players=cfg.get("num_players", 2), reward_mode=cfg.get("reward_mode", "relative"),
        **dict(cfg.get("rules") or {})))


class ThreeThirteenRLlibEnv(PettingZooEnv):
    """RLlib's ``PettingZooEnv`` on our AEC env; checks every action against the current mask."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        config = dict(config or {})
        self._fail_at_step: int | None = config.get("fail_at_step")
        self._num_steps = 0
        self._mask: np.ndarray | None = None
        super().__init__(make_aec_env(config))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, infos = super().reset(seed=seed, options=options)
        self._mask = obs[self.env.agent_selection][MASK_KEY]
        return obs, infos

    def step(self, action: dict[str, int]):
        self._num_steps += 1
        if self._fail_at_step is not None and self._num_steps >= self._fail_at_step:
            raise RuntimeError(f"environment failed on purpose at step {self._num_steps} (fail_at_step)")
        agent = self.env.agent_selection
        act = int(action[agent])
        if self._mask is None or not self._mask[act]:
            legal = [] if self._mask is None else np.flatnonzero(self._mask).tolist()
            raise ValueError(f"illegal action {act} for {agent}; legal actions: {legal}")
        obs, rewards, terminateds, truncateds, infos = super().step(action)
        nxt = self.env.agent_selection if self.env.agents else None
        self._mask = obs[nxt][MASK_KEY] if nxt in obs else None
        return obs, rewards, terminateds, truncateds, infos


class SeatPolicyMapping:
    """``policy_mapping_fn``: every seat plays the shared policy, or (with probability
    ``opponent_mix``, drawn once per episode) one random seat plays it and each other seat a
    fixed opponent drawn from ``opponents`` (policy id :func:`fixed_policy_id`).

    The draw is a function of the episode id only, so every call for one episode agrees, on any
    env runner. A plain class, not a closure, so that it pickles to remote env runners.
    """

    def __init__(self, num_players: int, opponent_mix: float = 0.0, opponents: tuple[str, ...] = ()) -> None:
        if opponent_mix > 0 and not opponents:
            raise ValueError("opponent_mix > 0 needs at least one opponent name")
        self.num_players = int(num_players)
        self.opponent_mix = float(opponent_mix)
        self.opponents = tuple(opponents)

    def seats(self, episode_id: str) -> list[str]:
        """Policy id of each seat for the episode ``episode_id``."""
        rng = random.Random(f"seats:{episode_id}")
        if not self.opponents or rng.random() >= self.opponent_mix:
            return [LEARNER_POLICY] * self.num_players
        learner = rng.randrange(self.num_players)
        return [LEARNER_POLICY if s == learner else fixed_policy_id(rng.choice(self.opponents))
                for s in range(self.num_players)]

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        return self.seats(str(episode.id_))[int(agent_id.rsplit("_", 1)[1])]


def fixed_policy_id(opponent: str) -> str:
    """RLlib policy id of a fixed opponent (ids may not hold ``/``, ``:`` or ``.``)."""
    return "fixed_" + "".join(c if c.isalnum() or c in "-_" else "_" for c in opponent)
