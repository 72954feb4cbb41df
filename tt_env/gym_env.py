# noqa: D212, D415
"""
# Three Thirteen, single-agent

| Make               | `gymnasium.make("tt_env/ThreeThirteen-v0", opponents=["greedy-v0"])` |
|--------------------|----------------------------------------------------------------------|
| Class              | `tt_env.gym_env.ThreeThirteenGymEnv`                                 |
| Action Space       | `Discrete(54)`                                                       |
| Observation Space  | `Box(0, high, (107 * N + 80,), float32)`: 294 for 2 players          |
| Action mask        | `env.action_masks()` (sb3-contrib's MaskablePPO) and `info["action_mask"]` |
| Import             | `import tt_env` registers the id                                     |

The learner holds one seat of a Three Thirteen game (the PettingZoo AEC environment
`tt_env.three_thirteen_v0.raw_env`, whose docstring documents the rules, the observation
layout and the rewards); the other seats are played by agents (`tt_env.agents`: a registry
name such as `"greedy-v0"`, a checkpoint path, or any object with
`act(observation, action_mask, rng)`). Each `step` plays one action of the learner, then lets
the opponents play until it is the learner's turn again or the game ends.

## Arguments

``` python
gymnasium.make("tt_env/ThreeThirteen-v0", opponents=("greedy-v0",), seat=0,
               illegal_action="terminate", reward_mode="relative", render_mode=None,
               num_players=None, rules=None, **rule_options)
```

| argument | meaning |
|---|---|
| `opponents` | agents for the other seats, in seat order from the learner's left; one agent is repeated for every other seat; the player count is `len(opponents) + 1` unless `num_players` says more |
| `seat` | the learner's seat: an int (numpy integers too), `"rotate"` (0, 1, ..., N-1 over successive episodes, back to 0 when `reset` gets a seed) or `"random"` (drawn from the seeded generator at each reset) |
| `illegal_action` | `"terminate"` or `"raise"` (below) |
| `reward_mode`, `render_mode`, rule options | those of the AEC environment (`decks`, `aces`, `rounds`, `discard_drawn_discard`, `max_turns_per_round`, `meld_needs_natural`) |
| `rules` | a `Rules` object instead of the rule options (its `num_players` too): the env is `raw_env.from_rules(rules, ...)` |

## Observation, actions

The observation is the AEC environment's `"observation"` vector for the learner's seat (its
layout: `tt_env.observation.layout_table(N)`); the AEC `"action_mask"` (int8, 54) is
`info["action_mask"]` and `env.action_masks()` (bool). Actions: 0 draws from the stock, 1
takes the top of the discard pile, `2 + c` discards card `c` (going out when that leaves the
hand fully melded).

## Rewards

| event | reward |
|---|---|
| a step | everything the learner earned in the AEC environment since its previous step (its own action and the opponents' that followed), per `reward_mode` |
| illegal action, `illegal_action="terminate"` | `ILLEGAL_ACTION_REWARD = -1.0`, and the episode ends (`terminated=True`, `info["illegal_action"] = True`); the game is abandoned |
| illegal action, `illegal_action="raise"` | `ValueError` naming the legal actions (use it to catch masking bugs) |

An integer action outside `0..53` counts as illegal. An action that is not an integer
(`True`, `1.7`, `"0"`, `None`, a 1-element array) raises `TypeError` naming the allowed
values in both modes: a Python int, a numpy integer scalar or a 0-d numpy integer array. It
is a bug in the caller, not a move. `step` before `reset` or after the episode ended raises
`RuntimeError` (call `reset`); `reset(seed=-1)` raises `ValueError` naming the seed.

## Info

`reset` and every `step` return an info dict with the same keys and types, always:

| key | type | value |
|---|---|---|
| `action_mask` | int8 array (54,) | the learner's legal actions now (all 0 once the episode is over); `env.action_masks()` is the same as bool |
| `seat` | int | the learner's seat this episode |
| `illegal_action` | bool | whether this step's action was illegal (`illegal_action="terminate"`) |
| `went_out` | int | the seat that went out since the learner's previous step; -1 if nobody |
| `round_number` | int | the round that ended since the learner's previous step; 0 if none |
| `round_points` | list of N ints | that round's points per seat; all 0 if no round ended |
| `final_scores` | list of N ints | the game's totals per seat once it is over; all 0 before |

The last four are the AEC environment's infos (its docstring), gathered over the learner's
action and the opponents' actions that followed; with a tiny `max_turns_per_round` two
rounds can end between two learner steps, and then they hold the later one (the reward
counts both). With Gymnasium's vector envs (autoreset on the next step), a finished
episode's last `info["action_mask"]` is all zeros: the action of the step that resets it is
ignored.

## Episode end

The episode is the whole game: `terminated=True` after the last round is scored (or after an
illegal action under `"terminate"`); it is never truncated.

## Seeding

`reset(seed=s)` seeds the environment's generator, from which each game's deal and the
opponents' random generator are drawn, so a seeded episode replays exactly.
"""  # noqa: E501  (markdown tables: one row a line)

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from .agents import Agent, make_agent
from .engine.game import ACTION_TYPES_TEXT, NUM_ACTIONS, as_action
from .engine.rules import Rules
from .env_checks import ILLEGAL_ACTION_MODES as ILLEGAL_ACTION_MODES  # re-exported, owned by env_checks
from .env_checks import is_batched_agent, learner_table
from .three_thirteen_v0 import ILLEGAL_ACTION_REWARD, checked_seed, raw_env

MAX_GAMES_WITHOUT_A_MOVE = 1000
"""``reset`` deals again while the opponents end whole games before the learner's first move (a
``max_turns_per_round`` below the player count); this many in a row means it may never move."""


class ThreeThirteenGymEnv(gymnasium.Env):
    """One learner against scripted or learned opponents; the module docstring documents it."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(self, opponents: Sequence[str | Agent] | str | Agent = ("greedy-v0",), seat: int | str = 0,
                 illegal_action: str = "terminate", reward_mode: str = "relative",
                 render_mode: str | None = None, num_players: int | None = None, rules: Rules | None = None,
                 **rule_options: Any) -> None:
        opponents, seat, n = learner_table(opponents, seat, illegal_action, num_players, rules, rule_options,
                                           agent_kinds="a registry name, a checkpoint path or an agent object")
        for agent in opponents:
            if not isinstance(agent, str) and is_batched_agent(agent):
                raise ValueError(f"opponent {agent!r} is a batched agent (act(observation, action_mask) on whole "
                                 f"batches): this env plays one table; give a scalar agent or a name, or use the "
                                 f"batched env, gymnasium.make_vec(..., vectorization_mode='vector_entry_point')")
        if rules is not None:
            self.aec = raw_env.from_rules(rules, reward_mode=reward_mode, render_mode=render_mode)
        else:
            self.aec = raw_env(num_players=n, reward_mode=reward_mode, render_mode=render_mode, **rule_options)
        self.rules = self.aec.rules
        self.opponents: list[Agent] = [make_agent(o, self.rules) for o in opponents]
        self.seat_mode = seat
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.observation_space = self.aec.observation_spaces["player_0"]["observation"]
        self.action_space = gymnasium.spaces.Discrete(NUM_ACTIONS)
        self.seat = seat if isinstance(seat, int) else 0
        self._episodes = 0
        self._agent = f"player_{self.seat}"
        self._opponent_of_seat: dict[int, Agent] = {}
        self._opponent_rng = np.random.default_rng()
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._done = True
        self._pending = 0.0

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        seed = checked_seed(seed)
        super().reset(seed=seed)
        n = self.rules.num_players
        if seed is not None:
            self._episodes = 0
        if self.seat_mode == "rotate":
            self.seat = self._episodes % n
        elif self.seat_mode == "random":
            self.seat = int(self.np_random.integers(n))
        self._episodes += 1
        self._agent = f"player_{self.seat}"
        self._opponent_of_seat = {(self.seat + k) % n: self.opponents[k - 1] for k in range(1, n)}
        for _ in range(MAX_GAMES_WITHOUT_A_MOVE):
            self.aec.reset(seed=int(self.np_random.integers(2**63)))
            self._opponent_rng = np.random.default_rng(int(self.np_random.integers(2**63)))
            self._done = False
            # rewards earned before the learner's first move (only possible with tiny turn limits)
            self._pending, info = self._play_opponents(self._blank_info())
            if not self.aec.game_state.game_over:
                return self._observe(info)
            # the whole game ended before the learner's first move (tiny turn limits): not an
            # episode of the learner's, so another game is dealt
        raise RuntimeError(f"{MAX_GAMES_WITHOUT_A_MOVE} games in a row ended before seat {self.seat} moved "
                           f"(max_turns_per_round={self.rules.max_turns_per_round}, {self.rules.num_players} "
                           f"players): raise max_turns_per_round so that every seat gets a turn")

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._done:
            if self.aec.game_state is None:
                raise RuntimeError("step() called before reset(): call reset() first")
            raise RuntimeError("step() called on a finished episode: call reset() first")
        if type(action) is int:
            a = action
        elif action is None:
            raise TypeError(f"action None is not an action: use {ACTION_TYPES_TEXT}")
        else:
            a = as_action(action)
        if not (0 <= a < NUM_ACTIONS and self._mask[a]):
            if self.illegal_action == "raise":
                raise ValueError(f"illegal action {action!r}: legal actions are "
                                 f"{np.flatnonzero(self._mask).tolist()}")
            self._done = True
            info = self._blank_info()
            info["illegal_action"] = True
            obs, info = self._observe(info)
            return obs, ILLEGAL_ACTION_REWARD, True, False, info
        aec = self.aec
        aec.step(a)
        reward = float(aec.rewards[self._agent]) + self._pending
        self._pending = 0.0
        info = self._event_info(self._blank_info())
        more, info = self._play_opponents(info)
        reward += more
        self._done = aec.game_state.game_over
        obs, info = self._observe(info)
        return obs, reward, self._done, False, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (all False once the episode is over)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()

    # ------------------------------------------------------------------ internals
    def _blank_info(self) -> dict:
        """An info dict with every key of the docstring's table at its "nothing happened" value."""
        n = self.rules.num_players
        return {"went_out": -1, "round_number": 0, "round_points": [0] * n, "final_scores": [0] * n,
                "illegal_action": False}

    def _play_opponents(self, info: dict) -> tuple[float, dict]:
        """Let the other seats act until the learner is to move or the game is over."""
        aec, state = self.aec, self.aec.game_state
        reward = 0.0
        while not state.game_over and state.current_player != self.seat:
            agent = aec.agent_selection
            seen = aec.observe(agent)
            opponent = self._opponent_of_seat[state.current_player]
            aec.step(int(opponent.act(seen["observation"], seen["action_mask"], self._opponent_rng)))
            reward += float(aec.rewards[self._agent])
            self._event_info(info)
        return reward, info

    def _event_info(self, info: dict) -> dict:
        """Copy the learner's event infos (went_out, round points, final scores) of the last AEC step."""
        src = self.aec.infos.get(self._agent)
        if src is not None:
            if src["went_out"] >= 0:
                info["went_out"] = src["went_out"]
            if src["round_number"]:
                info["round_number"] = src["round_number"]
                info["round_points"] = src["round_points"]
                info["final_scores"] = src["final_scores"]
        return info

    def _observe(self, info: dict) -> tuple[np.ndarray, dict]:
        seen = self.aec.observe(self._agent)
        self._mask = seen["action_mask"] if not self._done else np.zeros(NUM_ACTIONS, dtype=np.int8)
        info["action_mask"] = self._mask
        info["seat"] = self.seat
        return seen["observation"], info
