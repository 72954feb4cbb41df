"""The tables of ``training/batch_ppo.py``: one ``BatchGame``, who holds each seat, and the rollouts.

Tables are of a fixed kind (``BatchPPOConfig.opponents``, by table index): on ``self`` tables
the learner plays every seat; on the others it plays one seat, drawn anew for every game, and
the other seats are ``greedy-v0``, ``random-v0`` (the batched agents of
:mod:`tt_env.batch.agents`), ``expert-v0`` (the scalar agent, which has no batched form: its rows
go to the CPU and it decides one at a time) or a past version of the network from the pool (one
drawn per game). Every step moves every table: the learner decides for all its rows in one
forward pass, each kind of opponent for its rows in one call. All random draws come from one generator on
the device, so a rollout is a function of the saved state (``--resume`` is exact).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from models.distributions import MaskedCategorical
from models.networks import NUM_ACTIONS, PolicyValueNet
from training.ppo.batch_config import TABLE_KINDS, BatchPPOConfig
from training.ppo.batch_critic import PrivilegedCritic
from training.ppo.batch_rollout import Trajectories
from tt_env.agents import Agent, make_agent
from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchGreedy, BatchNetwork, BatchRandom
from tt_env.batch.global_state import encode_states
from tt_env.batch.observe import legal_mask, observe

SELF, POOL, GREEDY, RANDOM, EXPERT = range(5)


@dataclass
class Rollout:
    """The learner's decisions of one rollout (M rows, on the device), ready for the update."""

    x: torch.Tensor            # (M, input_size) network inputs (observation + features)
    mask: torch.Tensor         # (M, 54) bool legal actions
    action: torch.Tensor       # (M,)
    logprob: torch.Tensor      # (M,)
    value: torch.Tensor        # (M,)
    advantage: torch.Tensor    # (M,)
    ret: torch.Tensor          # (M,)
    critic_x: torch.Tensor | None  # (M, S + N) privileged critic inputs, or None

    def __len__(self) -> int:
        return int(self.action.shape[0])


def policy_step(net: PolicyValueNet, x: torch.Tensor, mask: torch.Tensor, generator: torch.Generator | None = None,
                action: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(action, log-prob, entropy, value) of inputs ``x`` under the legal ``mask``: illegal actions
    have probability 0 (never sampled) and the log-prob is of the masked distribution."""
    logits, value = net.logits_and_value(x)
    dist = MaskedCategorical(logits, mask.to(logits.device))
    if action is None:
        action = dist.sample(generator)
    return action, dist.log_prob(action), dist.entropy(), value


def scalar_actions(agent: Agent, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """A scalar agent's choices for rows of observations, one row at a time on the CPU, back on
    ``obs``'s device. Only for agents that draw no random numbers (``expert-v0``): the fixed ``rng``
    they are given keeps a run a function of its saved state."""
    rows, legal = obs.cpu().numpy(), masks.cpu().numpy()
    rng = np.random.default_rng(0)
    chosen = [agent.act(rows[i], legal[i], rng) for i in range(len(rows))]
    return torch.tensor(chosen, dtype=torch.int64, device=obs.device)


class BatchTables:
    """The tables of one run, the opponent pool and the rollout loop."""

    def __init__(self, cfg: BatchPPOConfig, net: PolicyValueNet, critic: PrivilegedCritic | None,
                 device: torch.device) -> None:
        self.cfg, self.net, self.critic, self.device = cfg, net, critic, device
        self.rules = rules = cfg.train_rules()
        self.n = rules.num_players
        b = self.num_tables = cfg.num_tables
        self.game = BatchGame(rules, b, device=device, seed=cfg.seed, reward_mode=cfg.reward_mode,
                              cuda_graphs=cfg.cuda_graphs)
        self.generator = torch.Generator(device=device).manual_seed(cfg.seed + 2)
        counts = cfg.table_counts()
        self.kind = torch.cat([torch.full((counts[k],), i, dtype=torch.int64) for i, k in enumerate(TABLE_KINDS)]
                              ).to(device)
        self.greedy = BatchGreedy(rules)
        self.random = BatchRandom(rules, device=device)
        self.random.generator = self.generator
        self.expert = make_agent("expert-v0", rules) if counts["expert-v0"] else None
        self.pool: list[PolicyValueNet] = []
        self.snapshot()
        self.learner_seat = torch.zeros(b, dtype=torch.int64, device=device)
        self.pool_member = torch.zeros(b, dtype=torch.int64, device=device)
        self.game_return = torch.zeros(b, self.n, device=device)
        self.finished: dict[str, list[float]] = {k: [] for k in TABLE_KINDS}
        self.ts = self.game.reset()
        self._draw_seats(torch.ones(b, dtype=torch.bool, device=device))

    # ---------------------------------------------------------------- seats and pool
    def _draw_seats(self, new_game: torch.Tensor) -> None:
        """Draw the learner's seat and the pool member of the tables starting a game."""
        seats = torch.randint(self.n, (self.num_tables,), generator=self.generator, device=self.device)
        members = torch.randint(len(self.pool), (self.num_tables,), generator=self.generator, device=self.device)
        self.learner_seat = torch.where(new_game & (self.kind != SELF), seats, self.learner_seat)
        self.pool_member = torch.where(new_game, members, self.pool_member)

    def snapshot(self) -> None:
        """Add a frozen copy of the network to the pool (the oldest beyond ``pool_size`` dropped)."""
        self.pool.append(copy.deepcopy(self.net).eval())
        if len(self.pool) > self.cfg.pool_size:
            self.pool.pop(0)

    def learner_rows(self, seat: torch.Tensor) -> torch.Tensor:
        """(B,) bool: the tables where the seat to move is the learner's."""
        return (self.kind == SELF) | (seat == self.learner_seat)

    # ---------------------------------------------------------------- rollout
    @torch.no_grad()
    def collect(self, steps: int, gamma: float, lam: float) -> Rollout:
        """Move every table ``steps`` times; the learner's decisions with their advantages."""
        b, dev, net, critic = self.num_tables, self.device, self.net, self.critic
        traj = Trajectories(b, self.n, steps, dev)
        parts: dict[str, list[torch.Tensor]] = {k: [] for k in ("pos", "x", "mask", "action", "logprob", "critic_x")}
        for t in range(steps):
            ts = self.ts
            learner = self.learner_rows(ts.seat)
            actions = torch.zeros(b, dtype=torch.int64, device=dev)
            rows = learner.nonzero().squeeze(1)
            if rows.numel():
                mask = ts.action_mask[rows]
                x = net.as_input(ts.observation[rows], mask)
                action, logprob, _, value = policy_step(net, x, mask, self.generator)
                if critic is not None:
                    cx = critic.inputs(self._states()[rows], ts.seat[rows])
                    value = critic(cx)
                    parts["critic_x"].append(cx)
                parts["pos"].append(traj.decide(t, rows, ts.seat[rows], value))
                for key, v in (("x", x), ("mask", mask), ("action", action), ("logprob", logprob)):
                    parts[key].append(v)
                actions[rows] = action
            self._opponents_act(ts, ~learner, actions)
            self.ts = ts = self.game.step(actions)
            traj.earn(ts.rewards, ts.game_over)
            self._track_returns(ts.rewards, ts.game_over)
        self._cut(traj)
        adv, ret = traj.advantages(gamma, lam)
        if not parts["pos"]:  # no learner decision in this rollout (a few moves of a few tables): no rows
            empty = torch.zeros(0, device=dev)
            return Rollout(x=empty.view(0, 0), mask=torch.zeros(0, NUM_ACTIONS, dtype=torch.bool, device=dev),
                           action=empty.long(), logprob=empty, value=empty, advantage=empty, ret=empty,
                           critic_x=empty.view(0, 0) if critic is not None else None)
        pos = torch.cat(parts["pos"])
        return Rollout(x=torch.cat(parts["x"]), mask=torch.cat(parts["mask"]), action=torch.cat(parts["action"]),
                       logprob=torch.cat(parts["logprob"]), value=traj.value[pos], advantage=adv[pos], ret=ret[pos],
                       critic_x=torch.cat(parts["critic_x"]) if critic is not None else None)

    def _states(self) -> torch.Tensor:
        return encode_states(self.game.state, self.game.round_number, self.rules.max_turns_per_round)

    def _opponents_act(self, ts, others: torch.Tensor, actions: torch.Tensor) -> None:
        """Fill ``actions`` at the ``others`` rows from their kind of opponent."""
        obs, masks = ts.observation, ts.action_mask
        for kind, agent in ((GREEDY, self.greedy), (RANDOM, self.random)):
            rows = (others & (self.kind == kind)).nonzero().squeeze(1)
            if rows.numel():
                actions[rows] = agent.act(obs[rows], masks[rows])
        if self.expert is not None:
            rows = (others & (self.kind == EXPERT)).nonzero().squeeze(1)
            if rows.numel():
                actions[rows] = scalar_actions(self.expert, obs[rows], masks[rows])
        pool_rows = others & (self.kind == POOL)
        for k, member in enumerate(self.pool):
            rows = (pool_rows & (self.pool_member == k)).nonzero().squeeze(1)
            if rows.numel():
                agent = BatchNetwork(member, greedy=False)
                agent.generator = self.generator
                actions[rows] = agent.act(obs[rows], masks[rows])

    def _track_returns(self, rewards: torch.Tensor, over: torch.Tensor) -> None:
        """Sum each learner seat's game return; record those of finished games by table kind."""
        seats = torch.arange(self.n, device=self.device)
        plays = (self.kind == SELF).unsqueeze(1) | (seats.unsqueeze(0) == self.learner_seat.unsqueeze(1))
        self.game_return += torch.where(plays, rewards.float(), 0.0)
        if bool(over.any()):
            done = plays & over.unsqueeze(1)
            kinds = self.kind.unsqueeze(1).expand_as(done)[done].tolist()
            for kind, value in zip(kinds, self.game_return[done].tolist(), strict=True):
                self.finished[TABLE_KINDS[kind]].append(value)
            self.game_return[over] = 0.0
            self._draw_seats(over)

    def _cut(self, traj: Trajectories) -> None:
        """Bootstrap the decisions still open from their seats' values now (their own views)."""
        rows, seats = traj.open_decisions()
        if rows.numel() == 0:
            return
        if self.critic is not None:
            values = self.critic(self.critic.inputs(self._states()[rows], seats))
        else:
            s = self.game.state.rows(rows)
            obs = observe(s, self.game.round_number[rows], self.game.shoe_size, self.rules.max_turns_per_round, seats)
            mask = legal_mask(s, self.rules.discard_drawn_discard) & (s.current == seats).unsqueeze(1)
            values = self.net.get_value(obs, mask)
        traj.cut(rows, seats, values)

    # ---------------------------------------------------------------- resume
    def state_dict(self) -> dict[str, torch.Tensor | list]:
        """Tensors of everything a rollout depends on (the games, the seats, the generator, the pool):
        copies, which the next steps leave as they are (a CPU step changes the games in place)."""
        out: dict = {f"game.{k}": v.to("cpu", copy=True) for k, v in self.game.state.fields().items()}
        out.update({"learner_seat": self.learner_seat.cpu(), "pool_member": self.pool_member.cpu(),
                    "game_return": self.game_return.cpu(), "generator": self.generator.get_state(),
                    "pool": [{k: v.cpu() for k, v in net.state_dict().items()} for net in self.pool]})
        return out

    def load_state_dict(self, saved: dict) -> None:
        """Restore :meth:`state_dict`'s output (the current TimeStep is recomputed from the games)."""
        # the games first (their checks raise before anything changed); the lockstep, which a save
        # between a draw and a discard leaves in the discard phase, is read again from the tables
        self.ts = self.game.load_state({name: saved[f"game.{name}"] for name in self.game.state.fields()})
        self.learner_seat = saved["learner_seat"].to(self.device)
        self.pool_member = saved["pool_member"].to(self.device)
        self.game_return = saved["game_return"].to(self.device)
        self.generator.set_state(saved["generator"])
        self.pool = []
        for weights in saved["pool"]:
            member = copy.deepcopy(self.net)
            member.load_state_dict(weights)
            self.pool.append(member.eval())
