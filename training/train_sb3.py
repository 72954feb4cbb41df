"""sb3-contrib MaskablePPO against scripted opponents, through the Gymnasium environment.

The learner holds one seat of ``gymnasium.make("tt_env/ThreeThirteen-v0", opponents=...)``
(a random seat each game); the environment's ``action_masks()`` feeds MaskablePPO's masked
distribution. Parallel environments run in ``SubprocVecEnv`` (``vec_env: subproc``), or as the
tables of the batched engine in this process (``vec_env: batched``, ``training.sb3.batched_vec_env``).
Periodically the policy is copied into our :class:`models.networks.MLPPolicy` (same layers:
``Linear``/``Tanh`` actor and critic), evaluated in duplicate format and saved in our
checkpoint format, so it plays anywhere a scripted agent does.

    python training/train_sb3.py --config configs/sb3_default.yaml --set total_steps=20000

Writes ``runs/<name>/``: config.yaml, tb/ (TensorBoard), checkpoints/, eval.json and
learning_curve.png. ``--resume`` continues a run from ``checkpoints/latest.pt``
(``training.common.resume``): the policy's and the optimiser's ``state_dict`` (``weights_only``
tensors; SB3's own zip, which unpickles, is never used), the step and update counters, the
random generators, the evaluation history and TensorBoard. The environments start new games
from a seed derived from the step, so a resumed run is not bit-identical to an
uninterrupted one. ``--device`` (config key ``device``: auto, cpu, cuda, cuda:K) is passed to
MaskablePPO as its ``device=`` (``docs/devices.md``).
"""

from __future__ import annotations

import random
import signal
import time

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

import tt_env  # noqa: F401  (registers the environment id)
from models.networks import MLPPolicy
from models.sb3_zip import mlp_state_from_sb3
from training.common.config import SB3Config, dump_config
from training.common.device import check_resume_device, cuda_rng_state, resolve_device, restore_cuda_rng
from training.common.evaluations import EvalSchedule, evaluate_and_save
from training.common.resume import (
    StopRequested,
    StopSignals,
    check_resumable,
    is_count,
    is_dict,
    is_list,
    load_latest,
    restoring,
    save_latest,
)
from training.common.run_utils import RunDir, format_results
from training.common.tb_writer import purging_writer, wait_past_event_files
from training.common.trainer_cli import report_end, trainer_main
from training.sb3.batched_vec_env import BatchedVecEnv

TRAINER = "training/train_sb3.py"
TB_NAME = "ppo"
STATE_KEYS = {"n_updates": is_count, "episode_num": is_count, "np_rng": is_dict, "py_rng": is_list}
"""The resume state's own keys (besides ``training.common.resume.COMMON_KEYS``), checked before it is used."""
TENSOR_KEYS = ("policy", "optimizer", "torch_rng")


# ======================================================================== environments
def make_env(cfg: SB3Config, index: int, seed: int, in_subprocess: bool = False):
    """A thunk building env ``index`` (picklable for SubprocVecEnv): learner seat random per game."""
    rules = cfg.train_rules()

    def thunk() -> gymnasium.Env:
        if in_subprocess:  # Ctrl-C reaches the whole process group: the main process saves and closes us
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        env = gymnasium.make("tt_env/ThreeThirteen-v0", opponents=list(cfg.opponents), seat="random",
                             rules=rules, reward_mode=cfg.reward_mode)
        env.reset(seed=seed * 1000 + index)
        return env

    return thunk


def make_vec_env(cfg: SB3Config, seed: int) -> VecEnv:
    """``cfg.num_envs`` environments as ``cfg.vec_env`` says: processes, this process, or the batched engine."""
    if cfg.vec_env == "batched":
        return BatchedVecEnv.build(cfg.num_envs, cfg.opponents, cfg.train_rules(), cfg.reward_mode, seed)
    subproc = cfg.vec_env == "subproc"
    thunks = [make_env(cfg, i, seed, in_subprocess=subproc) for i in range(cfg.num_envs)]
    return SubprocVecEnv(thunks) if subproc else DummyVecEnv(thunks)


# ======================================================================== export to our format
def to_mlp_policy(model: MaskablePPO, cfg: SB3Config) -> MLPPolicy:
    """Copy the SB3 policy into an :class:`MLPPolicy` (identical layers, identical outputs)."""
    net = MLPPolicy(cfg.num_players, hidden_sizes=cfg.hidden_sizes)
    net.load_state_dict(mlp_state_from_sb3(model.policy.state_dict(), len(cfg.hidden_sizes)))
    return net.eval()


class RunCallback(BaseCallback):
    """Evaluations every ``eval_every`` steps, ``latest.pt`` every ``save_every``, a stop on a signal.

    The state saved for ``--resume`` is the one at the start of a rollout (after the previous
    update): a stop in the middle of a rollout saves that, and the partial rollout is played again.
    """

    def __init__(self, cfg: SB3Config, run: RunDir, signals: StopSignals, step: int, evals: EvalSchedule) -> None:
        super().__init__()
        self.cfg, self.run, self.signals, self.evals = cfg, run, signals, evals
        self.next_save = step + (cfg.save_every or float("inf"))
        self.eval_seconds = 0.0
        self.safe: dict | None = None

    def capture(self) -> dict:
        """The counters and generator states now (between rollouts), for :meth:`save`."""
        return {"step": int(self.model.num_timesteps), "n_updates": int(self.model._n_updates),
                "episode_num": int(self.model._episode_num), **self.evals.state(),
                "history": len(self.run.history), "torch_rng": torch.get_rng_state(),
                **cuda_rng_state(self.model.device),
                "np_rng": np.random.get_state(legacy=False), "py_rng": random.getstate()}

    def save(self, safe: dict) -> None:
        np_rng = dict(safe["np_rng"], state={"key": safe["np_rng"]["state"]["key"].tolist(),
                                             "pos": int(safe["np_rng"]["state"]["pos"])})
        state = {"n_updates": safe["n_updates"], "episode_num": safe["episode_num"], "last_eval": safe["last_eval"],
                 "next_eval": safe["next_eval"], "np_rng": np_rng,
                 "py_rng": [safe["py_rng"][0], list(safe["py_rng"][1]), safe["py_rng"][2]],
                 "device_type": self.model.device.type}
        tensors = {"policy": self.model.policy.state_dict(), "optimizer": self.model.policy.optimizer.state_dict(),
                   "torch_rng": safe["torch_rng"], **({"cuda_rng": safe["cuda_rng"]} if "cuda_rng" in safe else {})}
        save_latest(self.run, to_mlp_policy(self.model, self.cfg), self.cfg, step=safe["step"], trainer=TRAINER,
                    tensors=tensors, state=state, history=self.run.history[:safe["history"]])

    def _on_rollout_start(self) -> None:
        self.safe = self.capture()
        if self.num_timesteps >= self.next_save:
            self.save(self.safe)
            self.next_save = self.num_timesteps + self.cfg.save_every

    def _on_step(self) -> bool:
        if self.signals.requested:
            return False
        if self.evals.next <= self.num_timesteps < self.model._total_timesteps:  # the last one: after the last update
            try:
                self.evaluate(final=False)
            except StopRequested:
                return False
        return True

    def evaluate(self, final: bool) -> None:
        """Duplicate evaluation now; recorded, logged and saved as ``step_N.pt`` (and ``final.pt``)."""
        t0 = time.perf_counter()
        step = self.num_timesteps
        results = evaluate_and_save(to_mlp_policy(self.model, self.cfg), self.cfg, self.run, step, final, self.signals,
                                    TRAINER)
        for r in results:
            self.logger.record(f"eval/{r.opponent}/score_diff", r.score_diff)
            self.logger.record(f"eval/{r.opponent}/win_rate", r.win_rate)
        print(f"step {step}: {format_results(results)}", flush=True)
        self.evals.evaluated(step)
        self.eval_seconds += time.perf_counter() - t0


def _restore(model: MaskablePPO, tensors: dict, saved: dict) -> None:
    """Load the saved policy, optimiser, counters and generators into a freshly built ``model``."""
    model.policy.load_state_dict(tensors["policy"])
    model.policy.optimizer.load_state_dict(tensors["optimizer"])
    model.num_timesteps, model._n_updates, model._episode_num = saved["step"], saved["n_updates"], saved["episode_num"]
    torch.set_rng_state(tensors["torch_rng"])
    restore_cuda_rng(tensors, model.device)
    np_rng = dict(saved["np_rng"], state={"key": np.asarray(saved["np_rng"]["state"]["key"], dtype=np.uint32),
                                          "pos": saved["np_rng"]["state"]["pos"]})
    np.random.set_state(np_rng)
    version, internal, gauss = saved["py_rng"]
    random.setstate((version, tuple(internal), gauss))


# ======================================================================== run
def train(cfg: SB3Config, *, resume: bool = False, overwrite: bool = False, command: str | None = None) -> RunDir:
    """Train MaskablePPO as configured (``resume``: continue the run in its folder); returns the run directory.

    From the first write on, the run holds its folder's lock (``training.common.run_lock``) until it returns.
    """
    run = RunDir(cfg.run_dir, cfg.name)
    try:
        return _train(cfg, run, resume=resume, overwrite=overwrite, command=command)
    finally:
        run.release()


def _train(cfg: SB3Config, run: RunDir, *, resume: bool, overwrite: bool, command: str | None) -> RunDir:
    device = resolve_device(cfg.device)
    torch.set_num_threads(cfg.torch_threads)
    if resume:
        run.check_can_resume()
        tensors, saved = load_latest(run, TRAINER, STATE_KEYS, TENSOR_KEYS)
        check_resumable(saved["config"], cfg)
        check_resume_device(saved.get("device_type"), device, cfg.device)
        step, evals = saved["step"], EvalSchedule.resumed(cfg.eval_every, saved)
        env_seed = int(np.random.SeedSequence([cfg.seed, step]).generate_state(1)[0] % 2 ** 31)
    else:
        run.check_can_start(overwrite)
        step, evals, env_seed = 0, EvalSchedule.start(cfg.eval_every), cfg.seed
    vec = VecMonitor(make_vec_env(cfg, env_seed))
    try:
        vec.seed(env_seed)
        model = MaskablePPO(
            "MlpPolicy", vec, learning_rate=cfg.learning_rate, n_steps=cfg.n_steps, batch_size=cfg.batch_size,
            n_epochs=cfg.n_epochs, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range,
            ent_coef=cfg.ent_coef, seed=cfg.seed, tensorboard_log=str(run.tb), verbose=0, device=device,
            policy_kwargs={"net_arch": {"pi": list(cfg.hidden_sizes), "vf": list(cfg.hidden_sizes)},
                           "activation_fn": torch.nn.Tanh})
        if resume:
            with restoring(run):  # passed check_state, but may not fit the model
                _restore(model, tensors, saved)
            run.history = saved["history"]
        with StopSignals() as signals:
            callback = RunCallback(cfg, run, signals, step, evals)
            callback.model = model  # learn() initialises the rest; saving needs only the model
            # ---- only now, with everything built, touch the disk
            if resume:
                run.acquire_for_resume()
                run.write_history()
                purging_writer(run.tb / f"{TB_NAME}_1", step + 1).close()  # drop steps after the save
                wait_past_event_files(run.tb / f"{TB_NAME}_1")  # SB3's writer, opened in learn(), is read after it
            else:
                run.create(overwrite)
                callback.save(callback.capture())
            if step >= cfg.total_steps and evals.last == step:
                print(f"{run.path}: already trained to total_steps={cfg.total_steps} ({step} steps); nothing to do "
                      f"(--set total_steps=N with a larger N trains it longer)")
                return run  # (its config.yaml still says what it was trained with)
            dump_config(cfg, run.path / "config.yaml")
            start = time.perf_counter()
            if model.num_timesteps < cfg.total_steps:
                model.learn(total_timesteps=cfg.total_steps - (model.num_timesteps if resume else 0),
                            callback=callback, progress_bar=cfg.progress, tb_log_name=TB_NAME,
                            reset_num_timesteps=not resume)
            learn_seconds = time.perf_counter() - start - callback.eval_seconds
            if callback.safe is None or model._n_updates != callback.safe["n_updates"]:
                callback.safe = callback.capture()  # learning ended after an update: now is a safe point
            if not signals.requested:
                try:
                    callback.evaluate(final=True)
                    callback.safe = callback.capture()
                except StopRequested:
                    pass
            callback.save(callback.safe)
            if signals.requested:
                run.stopped_by = signals.signum
    finally:
        vec.close()
    return report_end(run, step=model.num_timesteps, start_step=step, seconds=learn_seconds,
                      total_steps=cfg.total_steps, stopped_by=run.stopped_by, command=command, trainer=TRAINER,
                      saved_step=callback.safe["step"] if callback.safe else step)


def main(argv: list[str] | None = None) -> None:
    trainer_main(argv, description=__doc__.split("\n\n")[0], config_cls=SB3Config, prog=f"python {TRAINER}",
                 train=train)


if __name__ == "__main__":
    main()
