"""sb3-contrib MaskablePPO against scripted opponents, through the Gymnasium environment.

The learner holds one seat of ``gymnasium.make("tt_env/ThreeThirteen-v0", opponents=...)``
(a random seat each game); the environment's ``action_masks()`` feeds MaskablePPO's masked
distribution. Parallel environments run in ``SubprocVecEnv`` (``vec_env: subproc``).
Periodically the policy is copied into our :class:`models.networks.MLPPolicy` (same layers:
``Linear``/``Tanh`` actor and critic), evaluated in duplicate format and saved in our
checkpoint format, so it plays anywhere a scripted agent does.

    python training/train_sb3.py --config configs/sb3_default.yaml --set total_steps=20000

Writes ``runs/<name>/``: config.yaml, tb/ (TensorBoard), checkpoints/, eval.json and
learning_curve.png.
"""

from __future__ import annotations

import time

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

import tt_env  # noqa: F401  (registers the environment id)
from models.agent_loader import CheckpointAgent
from models.checkpoint import save_checkpoint
from models.networks import MLPPolicy
from training.config import SB3Config, config_arg_parser, dump_config, load_config
from training.run_utils import RunDir, evaluate_agent, format_results
from tt_env.observation import OBS_VERSION


# ======================================================================== environments
def make_env(cfg: SB3Config, index: int):
    """A thunk building env ``index`` (picklable for SubprocVecEnv): learner seat random per game."""
    options = {k: v for k, v in cfg.train_rules().to_dict().items() if k != "num_players"}

    def thunk() -> gymnasium.Env:
        env = gymnasium.make("tt_env/ThreeThirteen-v0", opponents=list(cfg.opponents), seat="random",
                             num_players=cfg.num_players, reward_mode=cfg.reward_mode, **options)
        env.reset(seed=cfg.seed * 1000 + index)
        return env

    return thunk


# ======================================================================== export to our format
def to_mlp_policy(model: MaskablePPO, cfg: SB3Config) -> MLPPolicy:
    """Copy the SB3 policy into an :class:`MLPPolicy` (identical layers, identical outputs)."""
    net = MLPPolicy(cfg.num_players, hidden_sizes=cfg.hidden_sizes)
    sb3 = model.policy.state_dict()
    ours = {}
    depth = len(cfg.hidden_sizes)
    for head, src, out in (("actor", "policy_net", "action_net"), ("critic", "value_net", "value_net")):
        for i in range(depth):
            for p in ("weight", "bias"):
                ours[f"{head}.{2 * i}.{p}"] = sb3[f"mlp_extractor.{src}.{2 * i}.{p}"]
        for p in ("weight", "bias"):
            ours[f"{head}.{2 * depth}.{p}"] = sb3[f"{out}.{p}"]
    net.load_state_dict(ours)
    return net.eval()


class EvalCallback(BaseCallback):
    """Every ``eval_every`` steps (and at the end): duplicate evaluation, learning curve, checkpoint."""

    def __init__(self, cfg: SB3Config, run: RunDir) -> None:
        super().__init__()
        self.cfg, self.run = cfg, run
        self.next_eval = cfg.eval_every or cfg.total_steps
        self.eval_seconds = 0.0

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_eval:
            self.evaluate("latest")
            self.next_eval += self.cfg.eval_every or self.cfg.total_steps
        return True

    def evaluate(self, tag: str) -> None:
        t0 = time.perf_counter()
        cfg, step = self.cfg, self.num_timesteps
        net = to_mlp_policy(self.model, cfg)
        results = evaluate_agent(CheckpointAgent(net, name=cfg.name), cfg.eval_opponents, cfg.eval_rules(),
                                 cfg.eval_deals, seed=cfg.seed + 10_000)
        self.run.record_eval(step, results)
        for r in results:
            self.logger.record(f"eval/{r.opponent}/score_diff", r.score_diff)
            self.logger.record(f"eval/{r.opponent}/win_rate", r.win_rate)
        evaluation = {"step": step, "deals": cfg.eval_deals, "full_game": True,
                      "results": [r.to_dict() for r in results]}
        for name in (f"step_{step}.pt", f"{tag}.pt"):
            save_checkpoint(self.run.checkpoints / name, net, obs_version=OBS_VERSION,
                            rules=cfg.train_rules().to_dict(), training_steps=step, evaluation=evaluation,
                            extra={"trainer": "training/train_sb3.py", "config": cfg.to_dict()})
        print(f"step {step}: {format_results(results)}", flush=True)
        self.eval_seconds += time.perf_counter() - t0


# ======================================================================== run
def train(cfg: SB3Config) -> RunDir:
    """Train MaskablePPO as configured; returns the run directory."""
    torch.set_num_threads(cfg.torch_threads)
    run = RunDir(cfg.run_dir, cfg.name)
    dump_config(cfg, run.path / "config.yaml")
    thunks = [make_env(cfg, i) for i in range(cfg.num_envs)]
    vec = SubprocVecEnv(thunks) if cfg.vec_env == "subproc" else DummyVecEnv(thunks)
    vec = VecMonitor(vec)
    vec.seed(cfg.seed)
    model = MaskablePPO(
        "MlpPolicy", vec, learning_rate=cfg.learning_rate, n_steps=cfg.n_steps, batch_size=cfg.batch_size,
        n_epochs=cfg.n_epochs, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range,
        ent_coef=cfg.ent_coef, seed=cfg.seed, tensorboard_log=str(run.tb), verbose=0,
        policy_kwargs={"net_arch": {"pi": list(cfg.hidden_sizes), "vf": list(cfg.hidden_sizes)},
                       "activation_fn": torch.nn.Tanh})
    callback = EvalCallback(cfg, run)
    start = time.perf_counter()
    model.learn(total_timesteps=cfg.total_steps, callback=callback, progress_bar=cfg.progress, tb_log_name="ppo")
    learn_seconds = time.perf_counter() - start - callback.eval_seconds
    if not run.history or run.history[-1]["step"] != model.num_timesteps:
        callback.evaluate("final")
    else:
        for suffix in (".pt", ".json"):
            (run.checkpoints / f"final{suffix}").write_bytes((run.checkpoints / f"latest{suffix}").read_bytes())
    vec.close()
    run.learn_sps = model.num_timesteps / max(learn_seconds, 1e-9)
    print(f"steps/s during learning: {run.learn_sps:.0f}")
    print(f"checkpoint: {run.checkpoints / 'final.pt'}\nlearning curve: {run.curve_png}")
    return run


def main(argv: list[str] | None = None) -> None:
    parser = config_arg_parser(__doc__.split("\n\n")[0], SB3Config)
    args = parser.parse_args(argv)
    cfg = load_config(SB3Config, args.config, args.overrides)
    train(cfg)


if __name__ == "__main__":
    main()
