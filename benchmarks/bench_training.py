"""Training throughput: our training scripts next to sb3-contrib MaskablePPO on RLCard gin rummy.

    python benchmarks/bench_training.py                      # ~3 x (3 contenders x 20000 steps)
    python benchmarks/bench_training.py --steps 10000 --repeats 3
    python benchmarks/bench_training.py --contenders selfplay,batch_ppo --steps 20000   # batched vs per-table
    python benchmarks/bench_training.py --contenders batch_ppo --device cuda --tables 4096 --steps 2000000

Contenders, run round-robin inside each repetition (so load from other jobs hits them alike):

* ``selfplay``: ``training/selfplay.py`` with ``configs/selfplay_default.yaml``;
* ``batch_ppo``: ``training/batch_ppo.py`` (the batched engine) with selfplay_default.yaml's network,
  PPO settings (epochs, minibatches of about the same size, learning rate) and opponents, as a
  mix of tables (selfplay_prob of the tables self-play; of the others pool_prob pool tables and
  the rest split between the scripted opponents), ``--tables`` tables moved ``--table-steps``
  times per rollout, on ``--device``; the ratio to ``selfplay`` is printed;
* ``batch_ppo_graphs``: the same with ``cuda_graphs: true`` (the engine's steps replayed as CUDA
  graphs; ``--device cuda`` only); the ratio to ``batch_ppo`` is printed;
* ``train_sb3``: ``training/train_sb3.py`` with ``configs/sb3_default.yaml`` (SubprocVecEnv);
* ``train_sb3_batched``: the same with ``vec_env: batched`` (64 tables of the batched engine x 32
  steps: the same 2,048-step rollout);
* ``rlcard_gin_maskableppo``: sb3-contrib ``MaskablePPO("MlpPolicy", env)`` with its default
  hyper-parameters on one minimal masked Gymnasium wrapper of ``rlcard.make("gin-rummy")``
  (the learner is player 0; a uniformly random legal opponent plays player 1 inside ``step``).

A rate is **learner environment steps per second of training** (collection and updates;
the evaluations of our scripts are excluded; a learner step includes the opponent moves
that follow it, for every contender). Each contender's own CPU time is not separable
(subprocesses), so only wall time is reported: quote the medians and the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

import gymnasium
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt_rate, print_header, print_table, summarize  # noqa: E402


class GinRummyMasked(gymnasium.Env):
    """RLCard gin rummy for one learner (player 0) against a random legal opponent, with masks."""

    def __init__(self, seed: int = 0) -> None:
        import rlcard

        self.env = rlcard.make("gin-rummy", config={"seed": seed})
        self.n_actions = self.env.num_actions
        shape = int(np.prod(self.env.state_shape[0]))
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, (shape,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(self.n_actions)
        self.rng = np.random.default_rng(seed)
        self.state: dict = {}

    def _opponents(self, state: dict, pid: int) -> tuple[dict, int]:
        while pid != 0 and not self.env.is_over():
            legal = list(state["legal_actions"])
            state, pid = self.env.step(legal[int(self.rng.integers(len(legal)))])
        return state, pid

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        state, pid = self._opponents(*self.env.reset())
        self.state = state
        return state["obs"].reshape(-1).astype(np.float32), {}

    def step(self, action: int):
        state, pid = self._opponents(*self.env.step(int(action)))
        self.state = state
        done = self.env.is_over()
        reward = float(self.env.get_payoffs()[0]) if done else 0.0
        return state["obs"].reshape(-1).astype(np.float32), reward, done, False, {}

    def action_masks(self) -> np.ndarray:
        mask = np.zeros(self.n_actions, dtype=bool)
        mask[list(self.state["legal_actions"])] = True
        return mask


def bench_rlcard(steps: int, seed: int) -> float:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    model = MaskablePPO("MlpPolicy", GinRummyMasked(seed), seed=seed, verbose=0)
    model.set_logger(Logger(None, []))  # SB3's default logger makes a folder in /tmp at every learn()
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (time.perf_counter() - start)


def bench_selfplay(steps: int, seed: int, tmp: str, threads: int = 1) -> float:
    from training.common.config import SelfPlayConfig, load_config
    from training.selfplay import train

    cfg = load_config(SelfPlayConfig, ROOT / "configs" / "selfplay_default.yaml",
                      [f"total_steps={steps}", f"seed={seed}", f"run_dir={tmp}", "name=bench_selfplay",
                       "eval_deals=1", "eval_opponents=[greedy-v0]", "eval_every=0", "progress=false",
                       f"torch_threads={threads}"])
    return float(train(cfg, overwrite=True).learn_sps)  # each repetition replaces the last


def batch_overrides(steps: int, seed: int, tmp: str, tables: int, table_steps: int, device: str,
                    threads: int) -> list[str]:
    """``--set`` items that make ``training/batch_ppo.py`` train like ``configs/selfplay_default.yaml``."""
    from training.common.config import SelfPlayConfig, load_config

    sp = load_config(SelfPlayConfig, ROOT / "configs" / "selfplay_default.yaml")
    rest = 1.0 - sp.selfplay_prob
    mix = {"self": sp.selfplay_prob, "pool": rest * sp.pool_prob}
    for name in sp.opponents:
        mix[name] = mix.get(name, 0.0) + rest * (1 - sp.pool_prob) / len(sp.opponents)
    per_rollout = tables * table_steps * (sp.selfplay_prob + rest / sp.num_players)
    minibatch = sp.rollout_steps // sp.num_minibatches
    mix_text = "{" + ", ".join(f"{k}: {v!r}" for k, v in mix.items()) + "}"
    return [f"total_steps={steps}", f"seed={seed}", f"run_dir={tmp}", "name=bench_batch_ppo", "eval_deals=1",
            "eval_opponents=[greedy-v0]", "eval_every=0", "save_every=0", "progress=false", f"device={device}",
            f"num_tables={tables}", f"rollout_steps={table_steps}", f"opponents={mix_text}",
            f"network={sp.network}", f"network_kwargs={sp.network_kwargs!r}", f"learning_rate={sp.learning_rate}",
            f"update_epochs={sp.update_epochs}", f"num_minibatches={max(1, round(per_rollout / minibatch))}",
            f"num_players={sp.num_players}", f"torch_threads={threads}"]


def bench_batch_ppo(steps: int, seed: int, tmp: str, tables: int, table_steps: int, device: str,
                    threads: int, cuda_graphs: bool = False) -> float:
    from training.batch_ppo import train
    from training.common.config import load_config
    from training.ppo.batch_config import BatchPPOConfig

    overrides = batch_overrides(steps, seed, tmp, tables, table_steps, device, threads)
    cfg = load_config(BatchPPOConfig, None, overrides + [f"cuda_graphs={str(cuda_graphs).lower()}"])
    return float(train(cfg, overwrite=True).learn_sps)


SB3_BATCHED = ["vec_env=batched", "num_envs=64", "n_steps=32"]
"""``train_sb3_batched``: sb3_default.yaml's rollout of 2,048 steps as 64 batched tables x 32 steps."""


def bench_sb3(steps: int, seed: int, tmp: str, extra: list[str] | None = None) -> float:
    from training.common.config import SB3Config, load_config
    from training.train_sb3 import train

    cfg = load_config(SB3Config, ROOT / "configs" / "sb3_default.yaml",
                      [f"total_steps={steps}", f"seed={seed}", f"run_dir={tmp}", "name=bench_sb3",
                       "eval_deals=1", "eval_opponents=[greedy-v0]", "eval_every=0", "progress=false",
                       *(extra or [])])
    return float(train(cfg, overwrite=True).learn_sps)  # each repetition replaces the last


def main(argv: list[str] | None = None) -> dict[str, list[float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20000, help="learner steps per contender and repetition")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--contenders", default="selfplay,train_sb3,rlcard",
                        help="comma-separated subset of selfplay, batch_ppo, batch_ppo_graphs (its engine steps "
                             "as CUDA graphs: --device cuda), train_sb3, train_sb3_batched, rlcard")
    parser.add_argument("--tables", type=int, default=256, help="batch_ppo: tables (num_tables)")
    parser.add_argument("--table-steps", type=int, default=16, help="batch_ppo: moves per table per rollout")
    parser.add_argument("--device", default="cpu", help="batch_ppo: auto | cpu | cuda | cuda:K")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of selfplay and batch_ppo")
    args = parser.parse_args(argv)
    names = [c.strip() for c in args.contenders.split(",") if c.strip()]
    allowed = ("selfplay", "batch_ppo", "batch_ppo_graphs", "train_sb3", "train_sb3_batched", "rlcard")
    bad = [c for c in names if c not in allowed]
    if bad or min(args.steps, args.repeats, args.tables, args.table_steps, args.threads) < 1:
        parser.error(f"--contenders must be a subset of {list(allowed)}; --steps, --repeats, --tables, "
                     f"--table-steps and --threads >= 1")
    if "batch_ppo_graphs" in names and not args.device.startswith("cuda"):
        parser.error(f"--contenders batch_ppo_graphs needs --device cuda (CUDA graphs), not --device {args.device}")
    print_header("Training throughput: learner env steps/s during learning", vars(args))
    labels = {"selfplay": "ours: training/selfplay.py (selfplay_default.yaml)",
              "batch_ppo": f"ours: training/batch_ppo.py ({args.tables} tables, {args.device})",
              "batch_ppo_graphs": f"ours: training/batch_ppo.py ({args.tables} tables, {args.device}, CUDA graphs)",
              "train_sb3": "ours: training/train_sb3.py (sb3_default.yaml)",
              "train_sb3_batched": "ours: training/train_sb3.py (vec_env: batched, 64 tables)",
              "rlcard": "sb3-contrib MaskablePPO, RLCard gin-rummy vs random"}
    rates: dict[str, list[float]] = {n: [] for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeats):
            for name in names:
                seed = args.seed + rep
                with contextlib.redirect_stdout(io.StringIO()):  # the scripts' own reports
                    if name == "rlcard":
                        rate = bench_rlcard(args.steps, seed)
                    elif name == "selfplay":
                        rate = bench_selfplay(args.steps, seed, tmp, args.threads)
                    elif name in ("batch_ppo", "batch_ppo_graphs"):
                        rate = bench_batch_ppo(args.steps, seed, tmp, args.tables, args.table_steps, args.device,
                                               args.threads, cuda_graphs=name == "batch_ppo_graphs")
                    elif name == "train_sb3_batched":
                        rate = bench_sb3(args.steps, seed, tmp, SB3_BATCHED)
                    else:
                        rate = bench_sb3(args.steps, seed, tmp)
                rates[name].append(rate)
                print(f"rep {rep + 1}/{args.repeats}  {labels[name]:<55} {fmt_rate(rate):>8} steps/s", flush=True)
    print()
    rows = []
    for name in names:
        med, lo, hi = summarize(rates[name])
        rows.append([labels[name], fmt_rate(med), fmt_rate(lo), fmt_rate(hi)])
    print_table(["contender", "median steps/s", "min", "max"], rows)
    if "selfplay" in names and "batch_ppo" in names:
        print(f"\nbatch_ppo / selfplay: {summarize(rates['batch_ppo'])[0] / summarize(rates['selfplay'])[0]:.2f}x "
              f"(medians)")
    if "batch_ppo" in names and "batch_ppo_graphs" in names:
        print(f"\nbatch_ppo with CUDA graphs / without: "
              f"{summarize(rates['batch_ppo_graphs'])[0] / summarize(rates['batch_ppo'])[0]:.2f}x (medians)")
    if "train_sb3" in names and "train_sb3_batched" in names:
        print(f"\ntrain_sb3 batched / subproc: "
              f"{summarize(rates['train_sb3_batched'])[0] / summarize(rates['train_sb3'])[0]:.2f}x (medians)")
    if "rlcard" in names:
        base = summarize(rates["rlcard"])[0]
        print()
        for name in names:
            if name != "rlcard":
                print(f"{name} / rlcard MaskablePPO: {summarize(rates[name])[0] / base:.2f}x")
    return rates


if __name__ == "__main__":
    main()
