"""Self-play PPO for Three Thirteen, one readable file in the manner of CleanRL.

One network plays every learner seat. Each table (a ``three_thirteen_v0`` AEC env) is, per
game, either a self-play table (the current network in every seat) or a table where the
network holds one random seat and the others are scripted agents or past versions of the
network from a pool. Decisions of every table are batched through the network; each
(table, seat) is its own trajectory, rewarded with what that seat earned between its
decisions (per-round rewards of ``reward_mode``), and advantages follow each trajectory.

    python training/selfplay.py --config configs/selfplay_default.yaml --set total_steps=20000

Writes ``runs/<name>/``: config.yaml, tb/ (TensorBoard), checkpoints/ (``models.checkpoint``
format), eval.json and learning_curve.png (duplicate evaluation against ``eval_opponents``).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from models.agent_loader import CheckpointAgent
from models.checkpoint import load_checkpoint, save_checkpoint
from models.networks import PolicyValueNet, build_network
from training.config import SelfPlayConfig, config_arg_parser, dump_config, load_config
from training.run_utils import RunDir, evaluate_agent, format_results
from tt_env import three_thirteen_v0
from tt_env.agents import make_agent
from tt_env.observation import OBS_VERSION

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


class SelfPlay:
    """The tables, the opponent pool and the rollout buffer of one run."""

    def __init__(self, cfg: SelfPlayConfig, net: PolicyValueNet, rng: np.random.Generator) -> None:
        self.cfg, self.net, self.rng = cfg, net, rng
        rules = cfg.train_rules()
        self.rules = rules
        options = {k: v for k, v in rules.to_dict().items() if k != "num_players"}
        self.n = cfg.num_players
        self.scripted = [make_agent(name, rules) for name in cfg.opponents]
        self.pool: list[PolicyValueNet] = []
        self.tables = [Table(three_thirteen_v0.raw_env(num_players=self.n, reward_mode=cfg.reward_mode, **options))
                       for _ in range(cfg.num_envs)]
        self.finished_returns: list[float] = []
        for t in self.tables:
            self._new_game(t)

    def _new_game(self, t: Table) -> None:
        t.env.reset(seed=int(self.rng.integers(2 ** 31)))
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
                    t.env.step(ctrl.act(o["observation"], o["action_mask"], self.rng))
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
                for t, a in zip(group, actions.tolist()):
                    t.env.step(a)

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
            obs = [t.env.observe(a) for t, a in zip(self.tables, agents)]
            x = net.preprocess(np.stack([o["observation"] for o in obs]))
            masks = np.stack([o["action_mask"] for o in obs])
            with torch.no_grad():
                action, logprob, _, value = net.get_action_and_value(x, masks)
            value_np = value.numpy()
            prev = []
            for i, (t, agent) in enumerate(zip(self.tables, agents)):
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
                t.env.step(int(action[i]))

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
                    v = float(self.net.get_value(t.env.observe(agent)["observation"][None])[0])
                buf.close(idx, reward, v, done=False)
                t.open_idx[seat] = -1


class Buffer:
    """Learner transitions of one rollout; each knows the index of its trajectory's next one."""

    def __init__(self) -> None:
        self.x, self.mask, self.action, self.logprob, self.value = [], [], [], [], []
        self.reward, self.next_value, self.done, self.next_idx = [], [], [], []

    def __len__(self) -> int:
        return len(self.action)

    def add(self, x, mask, action, logprob, value, prev: int = -1) -> int:
        """Append a transition (open until :meth:`close`); ``prev``: its trajectory's previous one."""
        idx = len(self.action)
        for lst, v in ((self.x, x), (self.mask, mask), (self.action, action), (self.logprob, logprob),
                       (self.value, value), (self.reward, 0.0), (self.next_value, 0.0), (self.done, 1.0),
                       (self.next_idx, -1)):
            lst.append(v)
        if prev >= 0:
            self.next_idx[prev] = idx
        return idx

    def close(self, idx: int, reward: float, next_value: float, done: bool) -> None:
        self.reward[idx], self.next_value[idx], self.done[idx] = reward, next_value, float(done)

    def advantages(self, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """GAE along each trajectory (``next_idx`` links), and the returns."""
        n = len(self)
        value = np.asarray(self.value, dtype=np.float64)
        delta = (np.asarray(self.reward) + gamma * (1 - np.asarray(self.done)) * np.asarray(self.next_value)
                 - value)
        adv = np.zeros(n)
        for i in range(n - 1, -1, -1):
            j = self.next_idx[i]
            adv[i] = delta[i] + (gamma * lam * adv[j] if j >= 0 and not self.done[i] else 0.0)
        return adv.astype(np.float32), (adv + value).astype(np.float32)


# ======================================================================== PPO update
def ppo_update(net: PolicyValueNet, optimizer: torch.optim.Optimizer, buf: Buffer, cfg: SelfPlayConfig,
               gen: torch.Generator) -> dict[str, float]:
    """Clipped PPO on one rollout (CleanRL's update, with masks and per-trajectory advantages)."""
    adv_np, ret_np = buf.advantages(cfg.gamma, cfg.gae_lambda)
    x = torch.as_tensor(np.stack(buf.x))
    masks = torch.as_tensor(np.stack(buf.mask))
    actions = torch.as_tensor(buf.action)
    old_logprob = torch.as_tensor(buf.logprob, dtype=torch.float32)
    old_value = torch.as_tensor(buf.value, dtype=torch.float32)
    adv, ret = torch.as_tensor(adv_np), torch.as_tensor(ret_np)
    n = len(buf)
    mb = max(1, n // cfg.num_minibatches)
    stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")}
    for _ in range(cfg.update_epochs):
        order = torch.randperm(n, generator=gen)
        for start in range(0, n - mb + 1, mb):
            idx = order[start:start + mb]
            _, logprob, entropy, value = net.get_action_and_value(x[idx], masks[idx], actions[idx])
            log_ratio = logprob - old_logprob[idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                stats["clipfrac"].append(float(((ratio - 1.0).abs() > cfg.clip_coef).float().mean()))
            a = adv[idx]
            a = (a - a.mean()) / (a.std() + 1e-8)
            pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
            v_clipped = old_value[idx] + (value - old_value[idx]).clamp(-cfg.clip_coef, cfg.clip_coef)
            v_loss = 0.5 * torch.max((value - ret[idx]) ** 2, (v_clipped - ret[idx]) ** 2).mean()
            ent = entropy.mean()
            loss = pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            optimizer.step()
            stats["policy_loss"].append(float(pg_loss.detach()))
            stats["value_loss"].append(float(v_loss.detach()))
            stats["entropy"].append(float(ent.detach()))
    var_y = float(ret.var())
    stats_out = {k: float(np.mean(v)) for k, v in stats.items()}
    stats_out["explained_variance"] = float("nan") if var_y == 0 else 1 - float((ret - old_value).var()) / var_y
    return stats_out


# ======================================================================== run
def evaluate_and_save(net: PolicyValueNet, cfg: SelfPlayConfig, run: RunDir, step: int, tag: str) -> list:
    """Duplicate evaluation against ``eval_opponents``, recorded and saved with a checkpoint."""
    rules = cfg.eval_rules()
    agent = CheckpointAgent(copy.deepcopy(net).eval(), name=cfg.name)
    results = evaluate_agent(agent, cfg.eval_opponents, rules, cfg.eval_deals, seed=cfg.seed + 10_000)
    run.record_eval(step, results)
    evaluation = {"step": step, "deals": cfg.eval_deals, "full_game": True,
                  "results": [r.to_dict() for r in results]}
    for name in (f"step_{step}.pt", f"{tag}.pt"):
        save_checkpoint(run.checkpoints / name, net, obs_version=OBS_VERSION, rules=cfg.train_rules().to_dict(),
                        training_steps=step, evaluation=evaluation,
                        extra={"trainer": "training/selfplay.py", "config": cfg.to_dict()})
    return results


def train(cfg: SelfPlayConfig) -> RunDir:
    """Run self-play PPO as configured; returns the run directory."""
    # ---- seeding: one block, everything derived from cfg.seed
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 1)

    run = RunDir(cfg.run_dir, cfg.name)
    dump_config(cfg, run.path / "config.yaml")
    writer = SummaryWriter(str(run.tb))
    writer.add_text("config", "\n".join(f"{k}: {v}" for k, v in cfg.to_dict().items()))

    kwargs = dict(cfg.network_kwargs)
    kwargs["num_players"] = cfg.num_players
    rules = cfg.train_rules()
    if cfg.network == "cardnet":
        kwargs.setdefault("aces_high", rules.aces_high)
        kwargs.setdefault("meld_needs_natural", rules.meld_needs_natural)
    net = build_network(cfg.network, **kwargs)
    if cfg.init_checkpoint:
        init, _ = load_checkpoint(cfg.init_checkpoint, num_players=cfg.num_players, obs_version=OBS_VERSION)
        net.load_state_dict(init.state_dict())
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    play = SelfPlay(cfg, net, rng)

    num_updates = max(1, -(-cfg.total_steps // cfg.rollout_steps))
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.total_steps, unit="step", desc=cfg.name, dynamic_ncols=True)
    step, next_eval = 0, cfg.eval_every or cfg.total_steps
    start = time.perf_counter()
    for update in range(1, num_updates + 1):
        if cfg.anneal_lr:
            optimizer.param_groups[0]["lr"] = cfg.learning_rate * (1.0 - (update - 1) / num_updates)
        buf = Buffer()
        play.collect(buf, cfg.rollout_steps)
        net.train()
        stats = ppo_update(net, optimizer, buf, cfg, gen)
        net.eval()
        step += len(buf)
        sps = step / (time.perf_counter() - start)
        for k, v in stats.items():
            writer.add_scalar(f"losses/{k}", v, step)
        writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
        writer.add_scalar("charts/SPS", sps, step)
        if play.finished_returns:
            writer.add_scalar("charts/episodic_return", float(np.mean(play.finished_returns)), step)
            play.finished_returns.clear()
        if update % cfg.snapshot_every == 0:
            play.snapshot()
        if bar is not None:
            bar.update(len(buf))
            bar.set_postfix(sps=f"{sps:.0f}", ent=f"{stats['entropy']:.2f}")
        if step >= next_eval or update == num_updates:
            tag = "final" if update == num_updates else "latest"
            t_eval = time.perf_counter()
            results = evaluate_and_save(net, cfg, run, step, tag)
            start += time.perf_counter() - t_eval  # evaluation time does not count against SPS
            for r in results:
                writer.add_scalar(f"eval/{r.opponent}/score_diff", r.score_diff, step)
                writer.add_scalar(f"eval/{r.opponent}/win_rate", r.win_rate, step)
            message = f"step {step}: {format_results(results)}"
            (bar.write if bar is not None else print)(message)
            next_eval += cfg.eval_every or cfg.total_steps
    if bar is not None:
        bar.close()
    writer.close()
    run.learn_sps = step / (time.perf_counter() - start)
    print(f"steps/s during learning: {run.learn_sps:.0f}")
    print(f"checkpoint: {run.checkpoints / 'final.pt'}\nlearning curve: {run.curve_png}")
    return run


def main(argv: list[str] | None = None) -> None:
    parser = config_arg_parser(__doc__.split("\n\n")[0], SelfPlayConfig)
    args = parser.parse_args(argv)
    cfg = load_config(SelfPlayConfig, args.config, args.overrides)
    train(cfg)


if __name__ == "__main__":
    main()
