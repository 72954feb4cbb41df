"""The batched engine as a Stable-Baselines3 ``VecEnv``: MaskablePPO on thousands of tables in one process.

:class:`BatchedVecEnv` adapts :class:`tt_env.batch.vector_env.ThreeThirteenVectorEnv` (numpy
arrays) to SB3's vectorised-environment interface, which SB3 and sb3-contrib train on: ``reset``
returns the observations, ``step_wait`` the observations, rewards, dones and one info dict per
table with ``terminal_observation`` where a game ended (the vector env resets a finished table in
the same step, as SB3 expects), and ``env_method("action_masks")`` gives MaskablePPO each table's
legal actions. ``training/train_sb3.py`` builds it for ``vec_env: batched``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from tt_env.batch.vector_env import ThreeThirteenVectorEnv
from tt_env.engine.rules import Rules

BATCHED_OPPONENTS = ("greedy-v0", "random-v0")
"""Scripted opponents with a batched version (network agents have one too: a checkpoint name or path)."""


class BatchedVecEnv(VecEnv):
    """``num_envs`` tables of the batched engine, the learner in one seat of each, for SB3."""

    def __init__(self, env: ThreeThirteenVectorEnv) -> None:
        if env.as_tensors:
            raise ValueError("BatchedVecEnv needs the vector env's numpy arrays: build it with device=None")
        self.env = env
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    @classmethod
    def build(cls, num_envs: int, opponents: Sequence[str], rules: Rules, reward_mode: str, seed: int,
              seat: int | str = "random") -> BatchedVecEnv:
        """``num_envs`` tables of ``rules`` against ``opponents`` (names), the learner's seat drawn per game."""
        return cls(ThreeThirteenVectorEnv(num_envs, opponents=list(opponents), seat=seat, reward_mode=reward_mode,
                                          seed=seed, rules=rules))

    # ------------------------------------------------------------------ SB3's VecEnv
    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions): call step(actions)")
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, reward.astype(np.float32), dones, infos

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """One value per table: the tables share the vector env's attributes (``render_mode`` is None)."""
        value = None if attr_name == "render_mode" else getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set a shared attribute: the tables have no attributes of their own, so only for all of them."""
        if len(list(self._get_indices(indices))) != self.num_envs:
            raise ValueError(f"set_attr({attr_name!r}) on some tables: the batched tables share their attributes; "
                             f"set it on all of them (indices=None)")
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks`` per table (what MaskablePPO asks); other methods are called once, shared."""
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.env.action_masks()
            return [masks[i] for i in rows]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def _get_indices(self, indices: Any) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices
