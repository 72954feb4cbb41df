"""The self-play trainer's tables: the games in progress, who controls each seat (the learner,
a scripted agent or a past network from the opponent pool), the batched rollout into the PPO
buffer, and their resume state. ``training/selfplay.py`` runs them (and re-exports these names).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch

from models.checkpoint import CheckpointError
from models.networks import PolicyValueNet
from training.common.config import SelfPlayConfig
from training.ppo.update import Buffer
from training.common.resume import rng_from_json, rng_to_json
from tt_env import three_thirteen_v0
from tt_env.agents import make_agent

LEARNER = -1  # controller id of a learner seat; >= 0 indexes the pool; scripted seats hold the agent


# ======================================================================== tables and rollout
@dataclass
class Table:
    """One game in progress, who controls each seat, and each learner seat's open transition."""

    env: three_thirteen_v0.raw_env
    controllers: list = field(default_factory=list)
    open_idx: list = field(default_factory=list)    # buffer index of the seat's last transition, or -1
    consumed: list = field(default_factory=list)    # reward already credited to it (rollout cut)
    game_return: list = field(default_factory=list)
    seed: int = 0                                   # the game's seed and its actions so far: a resumed
    actions: list = field(default_factory=list)     # run replays them to rebuild the game exactly

    def play(self, action: int) -> None:
        self.actions.append(action)
        self.env.step(action)


class SelfPlay:
    """The tables, the opponent pool and the rollout buffer of one run."""

    def __init__(self, cfg: SelfPlayConfig, net: PolicyValueNet, rng: np.random.Generator) -> None:
        self.cfg, self.net, self.rng = cfg, net, rng
        rules = cfg.train_rules()
        self.rules = rules
        self.n = cfg.num_players
        self.scripted = [make_agent(name, rules) for name in cfg.opponents]
        self.pool: list[PolicyValueNet] = []
        self.tables = [Table(three_thirteen_v0.raw_env.from_rules(rules, reward_mode=cfg.reward_mode))
                       for _ in range(cfg.num_envs)]
        self.finished_returns: list[float] = []
        for t in self.tables:
            self._new_game(t)

    def _new_game(self, t: Table) -> None:
        t.seed, t.actions = int(self.rng.integers(2 ** 31)), []
        t.env.reset(seed=t.seed)
        n, cfg = self.n, self.cfg
        if self.rng.random() < cfg.selfplay_prob or not self.scripted and not self.pool:
            t.controllers = [LEARNER] * n
        else:
            t.controllers = []
            for _ in range(n):
                if self.pool and self.rng.random() < cfg.pool_prob:
                    t.controllers.append(int(self.rng.integers(len(self.pool))))
                else:
                    t.controllers.append(self.scripted[int(self.rng.integers(len(self.scripted)))])
            t.controllers[int(self.rng.integers(n))] = LEARNER
        t.open_idx, t.consumed, t.game_return = [-1] * n, [0.0] * n, [0.0] * n

    def snapshot(self) -> None:
        """Add a frozen copy of the current network to the pool (oldest dropped)."""
        self.pool.append(copy.deepcopy(self.net).eval())
        if len(self.pool) > self.cfg.pool_size:
            self.pool.pop(0)

    def _advance(self, buf: "Buffer") -> None:
        """Play non-learner seats until every table waits for a learner decision (pool moves batched)."""
        while True:
            waiting: dict[int, list[Table]] = {}
            for t in self.tables:
                while True:
                    state = t.env.game_state
                    if state.game_over:
                        self._end_game(t, buf)
                        continue
                    ctrl = t.controllers[state.current_player]
                    if ctrl is LEARNER or isinstance(ctrl, int):
                        break
                    o = t.env.observe(t.env.agent_selection)
                    t.play(ctrl.act(o["observation"], o["action_mask"], self.rng))
                ctrl = t.controllers[t.env.game_state.current_player]
                if ctrl is not LEARNER:
                    waiting.setdefault(ctrl, []).append(t)
            if not waiting:
                return
            for k, group in waiting.items():
                obs = [t.env.observe(t.env.agent_selection) for t in group]
                with torch.no_grad():
                    actions, _, _, _ = self.pool[k].get_action_and_value(
                        np.stack([o["observation"] for o in obs]), np.stack([o["action_mask"] for o in obs]))
                for t, a in zip(group, actions.tolist(), strict=True):
                    t.play(a)

    def _end_game(self, t: Table, buf: "Buffer") -> None:
        """Close every learner seat's transition as terminal, then deal a new game."""
        for seat, ctrl in enumerate(t.controllers):
            if ctrl is LEARNER:
                reward = t.env._cumulative_rewards[f"player_{seat}"] - t.consumed[seat]
                t.game_return[seat] += reward
                if t.open_idx[seat] >= 0:
                    buf.close(t.open_idx[seat], reward, 0.0, done=True)
                self.finished_returns.append(t.game_return[seat])
        self._new_game(t)

    def collect(self, buf: "Buffer", steps: int) -> None:
        """Fill ``buf`` with ``steps`` or more learner transitions; every transition ends closed."""
        net = self.net
        while True:
            self._advance(buf)
            agents = [t.env.agent_selection for t in self.tables]
            obs = [t.env.observe(a) for t, a in zip(self.tables, agents, strict=True)]
            masks = np.stack([o["action_mask"] for o in obs])
            x = net.preprocess(np.stack([o["observation"] for o in obs]), masks)
            with torch.no_grad():
                action, logprob, _, value = net.get_action_and_value(x, masks)
            action, logprob, value_np = action.cpu(), logprob.cpu(), value.cpu().numpy()
            prev = []
            for i, (t, agent) in enumerate(zip(self.tables, agents, strict=True)):
                seat = int(agent[7:])
                reward = t.env._cumulative_rewards[agent] - t.consumed[seat]
                t.game_return[seat] += reward
                prev.append(t.open_idx[seat])
                if t.open_idx[seat] >= 0:
                    buf.close(t.open_idx[seat], reward, float(value_np[i]), done=False)
                t.open_idx[seat], t.consumed[seat] = -1, t.env._cumulative_rewards[agent]
            if len(buf) >= steps:
                self._cut(buf)
                return
            for i, t in enumerate(self.tables):
                seat = t.env.game_state.current_player
                idx = buf.add(x[i], masks[i], int(action[i]), float(logprob[i]), float(value_np[i]), prev[i])
                t.open_idx[seat], t.consumed[seat] = idx, 0.0
                t.play(int(action[i]))

    def _cut(self, buf: "Buffer") -> None:
        """Close transitions of learner seats that are not on move, bootstrapping from their view now."""
        for t in self.tables:
            for seat, idx in enumerate(t.open_idx):
                if idx < 0:
                    continue
                agent = f"player_{seat}"
                reward = t.env._cumulative_rewards[agent] - t.consumed[seat]
                t.game_return[seat] += reward
                t.consumed[seat] += reward
                with torch.no_grad():
                    o = t.env.observe(agent)
                    v = float(self.net.get_value(o["observation"][None], o["action_mask"][None])[0])
                buf.close(idx, reward, v, done=False)
                t.open_idx[seat] = -1

    # ---- resume: the state between two rollouts (no transition is open then)
    def state_dict(self) -> tuple[dict, dict]:
        """(JSON, tensors): the generator, the games in progress (seed + actions) and the pool."""
        tables = []
        for t in self.tables:
            if any(i >= 0 for i in t.open_idx):
                raise RuntimeError("the self-play state can only be saved between rollouts")
            controllers = [c if isinstance(c, int) else {"scripted": next(j for j, a in enumerate(self.scripted)
                                                                           if a is c)} for c in t.controllers]
            tables.append({"seed": t.seed, "actions": list(t.actions), "controllers": controllers,
                           "consumed": list(t.consumed), "game_return": list(t.game_return),
                           "agent_selection": t.env.agent_selection,
                           "cumulative_rewards": dict(t.env._cumulative_rewards)})
        state = {"rng": rng_to_json(self.rng), "tables": tables, "finished_returns": list(self.finished_returns)}
        return state, {"pool": [net.state_dict() for net in self.pool]}

    def load_state_dict(self, state: dict, tensors: dict) -> None:
        """Restore :meth:`state_dict`'s output: replay each game in progress to where it was."""
        if len(state["tables"]) != len(self.tables):
            raise CheckpointError(f"the resume state has {len(state['tables'])} tables, the run {len(self.tables)}")
        self.pool = []
        for weights in tensors["pool"]:
            net = copy.deepcopy(self.net)
            net.load_state_dict(weights)
            self.pool.append(net.eval())
        for i, (t, saved) in enumerate(zip(self.tables, state["tables"], strict=True)):
            t.seed, t.actions = int(saved["seed"]), []
            t.env.reset(seed=t.seed)
            for a in saved["actions"]:
                t.play(int(a))
            t.controllers = [c if isinstance(c, int) else self.scripted[c["scripted"]] for c in saved["controllers"]]
            t.open_idx, t.consumed, t.game_return = [-1] * self.n, list(saved["consumed"]), list(saved["game_return"])
            if (t.env.agent_selection != saved["agent_selection"]
                    or t.env._cumulative_rewards != saved["cumulative_rewards"]):
                raise CheckpointError(f"resume: table {i} did not replay to its saved position (did the engine "
                                      f"change since the run was saved?)")
        rng_from_json(self.rng, state["rng"])
        self.finished_returns = list(state["finished_returns"])
