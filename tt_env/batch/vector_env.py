"""Gymnasium ``VectorEnv`` on the batched engine: one learning seat per table, batched opponents.

``gymnasium.make_vec("tt_env/ThreeThirteen-v0", num_envs=B, vectorization_mode="vector_entry_point")``
builds :class:`ThreeThirteenVectorEnv`: ``B`` tables of :class:`~tt_env.batch.game.BatchGame`,
the learner in one seat of each, the other seats played by batched agents
(:mod:`tt_env.batch.agents`). It is :class:`tt_env.gym_env.ThreeThirteenGymEnv` for a batch:
the same observations, masks (``info["action_mask"]`` and ``action_masks()``), rewards and
info keys, one row per table.

Episodes are whole games and reset in the same step (Gymnasium's ``AutoresetMode.SAME_STEP``):
the observation of a finished table is the first of its next game, and ``info["final_obs"]``
holds the finished game's last observation (rows where ``info["_final_obs"]``) and
``info["final_seat"]`` the learner's seat in it (``info["seat"]`` is already the next game's). With
``device=None`` arrays are numpy; with a device (``"cpu"``, ``"cuda"``) they are torch tensors
there, and the whole loop stays on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import torch

from ..engine.game import NUM_ACTIONS
from ..engine.rules import Rules
from ..env_checks import ILLEGAL_ACTION_MODES as ILLEGAL_ACTION_MODES  # re-exported, owned by env_checks
from ..env_checks import SEAT_MODES as SEAT_MODES  # re-exported, owned by env_checks
from ..agents.registry import check_agent_rules
from ..env_checks import checked_seed, is_batched_agent, learner_table, table_count
from ..observation import observation_bounds
from ..three_thirteen_v0 import rules_from_kwargs
from .agents import BatchAgent, make_batch_agent
from .devices import checked_device
from .game import BatchGame, TimeStep
from .random_keys import seed_words, stream_base, uniform_below
from .step_inputs import checked_actions

ILLEGAL_ACTION_REWARD = -1.0
_SEAT_SALT = 0x2545F491
"""Salt of the learner's seat draw (``seat="random"``; ``random_keys.uniform_below``)."""
VECTOR_ENV_ARGUMENTS = "num_envs, opponents, seat, illegal_action, reward_mode, num_players, device, seed, rules"
"""The keyword arguments besides the rule options (named when one is unknown)."""


def opponent_seed(seed: int, k: int) -> int:
    """The seed of opponent ``k``'s generator (from the learner's left, 0 first) for the env's
    ``seed``: ``(seed + k) % 2**64``. Every seed the env takes (any int >= 0) gives one a batched
    agent takes (0..2**64-1); below ``2**64 - k`` it is ``seed + k``."""
    return (int(seed) + k) % 2 ** 64


class ThreeThirteenVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` tables, a learner in ``seat`` of each, batched ``opponents`` in the others.

    Args:
        num_envs: tables (B).
        opponents: batched agents or their names (``"greedy-v0"``, ``"random-v0"``, a network
            checkpoint), for the other seats from the learner's left; one is repeated.
        seat: the learner's seat, an int, ``"rotate"`` (per table, by episode) or ``"random"``.
        illegal_action: ``"terminate"`` (reward -1, the episode ends) or ``"raise"``.
        reward_mode, num_players, rules, rule options: as ``tt_env.gym_env`` (``rules``, a
            ``Rules``, or rule options; ``num_players`` must agree with ``rules``).
        device: ``None`` for numpy arrays, else the torch device of the engine and of every array.
        seed: root seed of the tables' deals, of the random seats and of the opponents' draws
            (opponent ``k`` built from a name: :func:`opponent_seed`; ``reset(seed=)`` likewise).
    """

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, opponents: Sequence[str | BatchAgent] | str | BatchAgent = ("greedy-v0",),
                 seat: int | str = 0, illegal_action: str = "terminate", reward_mode: str = "relative",
                 num_players: int | None = None, device: str | torch.device | None = None, seed: int = 0,
                 rules: Rules | None = None, **rule_options: Any) -> None:
        num_envs = table_count(num_envs, "num_envs")
        opponents, seat, n = learner_table(opponents, seat, illegal_action, num_players, rules, rule_options,
                                           agent_kinds="a name or a batched agent")
        self.rules = rules if rules is not None else rules_from_kwargs(n, env_arguments=VECTOR_ENV_ARGUMENTS,
                                                                        **rule_options)
        self.as_tensors = device is not None
        self.device = checked_device("cpu" if device is None else device)
        self.game = BatchGame(self.rules, num_envs, device=self.device, seed=seed, reward_mode=reward_mode)
        for o in opponents:
            if not isinstance(o, str) and not is_batched_agent(o):
                raise ValueError(f"opponent {o!r} is not a batched agent (act(observation, action_mask) on whole "
                                 f"batches, tt_env.batch.agents): give a name ('greedy-v0', 'random-v0', a network "
                                 f"checkpoint) or a batched agent; for scalar agent objects use "
                                 f"gymnasium.make_vec(..., vectorization_mode='sync')")
            if not isinstance(o, str):
                check_agent_rules(o, self.rules)  # (as make_agent checks the scalar envs' agent objects)
        self.opponents: list[BatchAgent] = [
            make_batch_agent(o, self.rules, self.device, seed=opponent_seed(seed, k)) if isinstance(o, str) else o
            for k, o in enumerate(opponents)]
        self.num_envs = num_envs
        self.seat_mode = seat
        self.illegal_action = illegal_action
        low, high = observation_bounds(n, self.rules.max_turns_per_round, self.rules.num_decks)
        self.single_observation_space = gymnasium.spaces.Box(low, high, dtype=np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self._seat_seed32 = seed_words(seed)
        self._rows = torch.arange(num_envs, device=self.device)
        self._episodes = torch.zeros(num_envs, dtype=torch.int64, device=self.device)
        self.seat = torch.zeros(num_envs, dtype=torch.int64, device=self.device)
        self.final_seat = torch.zeros(num_envs, dtype=torch.int64, device=self.device)
        self._ts: TimeStep | None = None
        self._obs: torch.Tensor | None = None
        self._mask = torch.zeros(num_envs, NUM_ACTIONS, dtype=torch.bool, device=self.device)

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        self._check_open("reset")
        seed = checked_seed(seed)
        if seed is not None:  # the same episodes again: the seats' draws and the opponents' restart
            seat_seed32 = seed_words(seed)  # (every seed derived first: a refused one changes nothing)
            seeds = [opponent_seed(seed, k) for k in range(len(self.opponents))]
            self._seat_seed32 = seat_seed32
            self._episodes.zero_()
            for agent, agent_seed in zip(self.opponents, seeds, strict=True):
                if hasattr(agent, "reseed"):
                    agent.reseed(agent_seed)
        every = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self._start_episodes(every)
        ts = self.game.reset(seed=seed)
        info = self._blank_info()
        # rewards earned before the learner's first move (only possible with tiny turn limits), as
        # tt_env.gym_env; a game the opponents ended meanwhile was not an episode: its rewards are dropped
        before = torch.zeros(self.num_envs, device=self.device)
        ended = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        ts, pending = self._play_opponents(ts, info, ended, before, episodes=False)
        self._pending = torch.where(ended, pending, before + pending)
        return self._out_obs(ts, info)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict]:
        self._check_open("step")
        if self._ts is None:
            raise RuntimeError("step() called before reset(): call reset() first")
        acts = checked_actions(actions, self.num_envs, self.device)
        inside = (acts >= 0) & (acts < NUM_ACTIONS)
        legal = inside & self._mask.gather(1, acts.clamp(0, NUM_ACTIONS - 1).unsqueeze(1)).squeeze(1)
        info = self._blank_info()
        reward = self._pending.clone()
        illegal = ~legal
        if bool(illegal.any()):  # host: the wrapper checks its caller's actions (outside BatchGame.step)
            if self.illegal_action == "raise":
                i = int(illegal.nonzero()[0])  # host: only on the way to raising
                raise ValueError(f"illegal action {int(acts[i])} at table {i}: legal actions are "
                                 f"{self._mask[i].nonzero().flatten().tolist()}")  # host: raising
            info["illegal_action"] = self._array(illegal)
        rows = self._rows
        ts = self.game.step(torch.where(legal, acts, 0), active=legal, final_seat=self.seat)
        reward += ts.rewards[rows, self.seat]
        self._events(ts, info, torch.zeros_like(ts.game_over))
        done = ts.game_over.clone()
        final_obs = ts.final_observation.clone()
        self._start_episodes(ts.game_over)
        ts, pending = self._play_opponents(ts, info, done, reward, final_obs)
        reward = torch.where(illegal, ILLEGAL_ACTION_REWARD, reward)
        if bool(illegal.any()):  # host: as above
            final_obs = torch.where(illegal.unsqueeze(1), self._obs, final_obs)
            ts = self.game.reset_tables(illegal)
            self._start_episodes(illegal)
            ts, more = self._play_opponents(ts, info, done | illegal)
            pending = torch.where(illegal, more, pending)
        self._pending = pending
        terminated = done | illegal
        info["final_seat"] = self._array(torch.where(terminated, self.final_seat, self.seat))
        info["final_obs"] = self._array(final_obs)
        info["_final_obs"] = self._array(terminated)
        obs, info = self._out_obs(ts, info)
        trunc = torch.zeros_like(terminated)
        return obs, self._array(reward.float()), self._array(terminated), self._array(trunc), info

    def action_masks(self) -> Any:
        """(B, 54) bool: the learner's legal actions at each table."""
        return self._array(self._mask)

    def close_extras(self, **kwargs: Any) -> None:
        """Free the tables and the opponents (a GPU's memory, with ``device="cuda"``)."""
        self.game, self.opponents, self._ts, self._obs = None, [], None, None

    def _check_open(self, call: str) -> None:
        if self.closed:
            raise gymnasium.error.ClosedEnvironmentError(
                f"{call}() called after close(): the env's tables are freed; make a new env")

    # ------------------------------------------------------------------ internals
    def _start_episodes(self, mask: torch.Tensor) -> None:
        """Pick the learner's seat at the tables starting an episode (``mask``), as ``tt_env.gym_env``
        does per env: an int stays, ``"rotate"`` counts episodes, ``"random"`` draws."""
        n = self.rules.num_players
        self.final_seat = torch.where(mask, self.seat, self.final_seat)
        if self.seat_mode == "rotate":
            self.seat = torch.where(mask, self._episodes % n, self.seat)
        elif self.seat_mode == "random":
            # per table from (seed, table, episode): the same seats whatever the batch's size
            drawn = uniform_below(stream_base(self._seat_seed32, self._rows, self._episodes), n, _SEAT_SALT)
            self.seat = torch.where(mask, drawn, self.seat)
        else:
            self.seat = torch.full_like(self.seat, int(self.seat_mode))
        self._episodes += mask.long()

    def _play_opponents(self, ts: TimeStep, info: dict, done: torch.Tensor,
                        reward: torch.Tensor | None = None, final_obs: torch.Tensor | None = None,
                        episodes: bool = True) -> tuple[TimeStep, torch.Tensor]:
        """Let the other seats act until the learner is to move at every table.

        Rewards go to ``reward`` until a table's episode ends (``done``), then to the next
        episode's pending reward (dropped if that game, too, ends before the learner moves: tiny
        turn limits); a game that ends during these moves sets ``done`` and its learner's ``final_obs``.
        ``episodes``: whether the tables not ``done`` are episodes the learner has moved in (at
        ``reset`` none is: a game that ends there changes no seat, as in ``tt_env.gym_env``)."""
        n = self.rules.num_players
        rows = self._rows
        pending = torch.zeros(self.num_envs, device=self.device)
        reward = torch.zeros(self.num_envs, device=self.device) if reward is None else reward
        while True:
            waiting = ts.seat != self.seat
            if not bool(waiting.any()):  # host: the opponents move until the learner is to move again
                break
            which = (ts.seat - self.seat - 1) % n
            actions = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
            for k, agent in enumerate(self.opponents):
                mine = waiting & (which == k)
                if self.device.type == "cpu":
                    idx = mine.nonzero().squeeze(1)  # host: CPU only (device.type == "cpu")
                    if idx.numel():
                        actions[idx] = agent.act(ts.observation[idx], ts.action_mask[idx]).to(self.device)
                else:
                    actions = torch.where(mine, agent.act(ts.observation, ts.action_mask), actions)
            ts = self.game.step(actions, active=waiting, final_seat=self.seat)
            got = ts.rewards[rows, self.seat]
            reward += torch.where(done, 0.0, got)
            # a game that ends before the learner's first move in it was no episode: its rewards go
            pending = torch.where(done & ts.game_over, 0.0, pending + torch.where(done, got, 0.0))
            if final_obs is not None:
                final_obs.copy_(torch.where((ts.game_over & ~done).unsqueeze(1), ts.final_observation, final_obs))
            # an episode that ends here starts the next one; a game the opponents end before the
            # learner's first move in it is none: the seat, its count and final_seat stay, and (at
            # reset) its events go, those of the next game count (as gym_env's reset)
            if episodes:
                self._events(ts, info, done)
                self._start_episodes(ts.game_over & ~done)
            else:
                self._events(ts, info, torch.zeros_like(done))
                self._forget_events(info, ts.game_over)
            done |= ts.game_over
        return ts, pending

    def _events(self, ts: TimeStep, info: dict, done: torch.Tensor) -> None:
        """Record this engine step's round and game events of the episodes still running."""
        live = ~done
        ended = ts.round_over & live
        info["_went_out"] = torch.where((ts.went_out >= 0) & live, ts.went_out, info["_went_out"])
        info["_round_number"] = torch.where(ended, ts.ended_round, info["_round_number"])
        info["_round_points"] = torch.where(ended.unsqueeze(1), ts.round_points, info["_round_points"])
        info["_final_scores"] = torch.where((ts.game_over & live).unsqueeze(1), ts.scores, info["_final_scores"])

    def _forget_events(self, info: dict, over: torch.Tensor) -> None:
        """Set the events of the tables ``over`` back to "nothing happened" (:meth:`_blank_info`)."""
        for key, blank in self._blank_info().items():
            if key.startswith("_"):
                info[key] = torch.where(over.view(-1, *[1] * (blank.dim() - 1)), blank, info[key])

    def _blank_info(self) -> dict:
        b, n, dev = self.num_envs, self.rules.num_players, self.device
        return {"_went_out": torch.full((b,), -1, dtype=torch.int64, device=dev),
                "_round_number": torch.zeros(b, dtype=torch.int64, device=dev),
                "_round_points": torch.zeros(b, n, dtype=torch.int64, device=dev),
                "_final_scores": torch.zeros(b, n, dtype=torch.int64, device=dev),
                "illegal_action": self._array(torch.zeros(b, dtype=torch.bool, device=dev))}

    def _out_obs(self, ts: TimeStep, info: dict) -> tuple[Any, dict]:
        self._ts = ts
        self._obs = ts.observation
        self._mask = ts.action_mask
        for key in ("went_out", "round_number", "round_points", "final_scores"):
            info[key] = self._array(info.pop("_" + key))
        info["action_mask"] = self._array(self._mask.to(torch.int8))
        info["seat"] = self._array(self.seat.clone())
        return self._array(ts.observation), info

    def _array(self, t: torch.Tensor) -> Any:
        return t if self.as_tensors else t.cpu().numpy()  # host: Gymnasium's numpy arrays (no device=)
