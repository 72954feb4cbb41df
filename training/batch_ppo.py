"""PPO on the batched engine: thousands of tables at once, everything on one device.

Rollouts come from one :class:`tt_env.batch.BatchGame` (``training.ppo.batch_collect``): the
learner plays every seat of the ``self`` tables and one seat of the others, against past
versions of itself (the pool), ``greedy-v0`` or ``random-v0``, mixed per table. Each (table,
seat) is its own trajectory (``training.ppo.batch_rollout``); the update is CleanRL's clipped PPO
with masks, on the device. With ``privileged_critic`` the value comes from a critic that reads
every hand (``training.ppo.batch_critic``), in training only; checkpoints act from the observation.

    python -m training.batch_ppo --config configs/batch_ppo_default.yaml --set total_steps=20000

Writes ``runs/<name>/`` as ``training/selfplay.py`` does: config.yaml, tb/ (TensorBoard),
checkpoints/ (``models.checkpoint`` format, loadable by ``models.agent_loader.load_agent``),
eval.json and learning_curve.png (duplicate evaluation against ``eval_opponents``).
``--resume`` continues from ``checkpoints/latest.pt``; on a CPU the resumed run is
bit-identical to one that never stopped.
"""

from __future__ import annotations

import numpy as np
import torch

from models.checkpoint import load_checkpoint
from models.networks import PolicyValueNet
from training.common.config import ConfigError
from training.common.device import check_resume_device, cuda_rng_state, resolve_device, restore_cuda_rng
from training.common.evaluations import EvalSchedule
from training.common.resume import FROZEN, check_resumable, is_count, is_str, load_latest, restoring, save_latest
from training.common.run_utils import RunDir
from training.common.trainer_cli import trainer_main
from training.ppo.batch_collect import BatchTables, Rollout, policy_step
from training.ppo.batch_config import TABLE_KINDS, BatchPPOConfig
from training.ppo.batch_critic import PrivilegedCritic
from training.ppo.loop import build_net
from training.ppo.losses import clipped_ppo_losses
from training.ppo.run_loop import Progress, UpdateResult, run_updates
from tt_env.observation import OBS_VERSION

TRAINER = "training/batch_ppo.py"
BATCH_FROZEN = FROZEN + ("num_tables", "opponents", "privileged_critic", "critic_hidden_sizes")
"""Keys a resumed run keeps: :data:`training.common.resume.FROZEN` and what its tables and critic were built from."""
STATE_KEYS = {"update": is_count, "device_type": is_str}
TENSOR_KEYS = ("optimizer", "torch_rng", "update_rng", "tables")


def ppo_update(net: PolicyValueNet, critic: PrivilegedCritic | None, optimizer: torch.optim.Optimizer,
               data: Rollout, cfg: BatchPPOConfig, gen: torch.Generator) -> dict[str, float]:
    """Clipped PPO on one rollout (``training.ppo.losses``, on the rollout's device, no host sync per minibatch);
    the value comes from ``critic`` when there is one (then the network's value head is unused)."""
    n = len(data)
    mb = max(1, n // cfg.num_minibatches)
    params = list(net.parameters()) + (list(critic.parameters()) if critic is not None else [])
    stats: dict[str, list[torch.Tensor]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl",
                                                            "clipfrac")}
    for _ in range(cfg.update_epochs):
        order = torch.randperm(n, generator=gen).to(data.x.device)
        for start in range(0, n - mb + 1, mb):
            idx = order[start:start + mb]
            _, logprob, entropy, value = policy_step(net, data.x[idx], data.mask[idx], action=data.action[idx])
            if critic is not None:
                value = critic(data.critic_x[idx])
            losses = clipped_ppo_losses(logprob, data.logprob[idx], data.advantage[idx], entropy, value,
                                        data.value[idx], data.ret[idx], cfg.clip_coef)
            pg_loss, v_loss, ent = losses.policy, losses.value, losses.entropy
            stats["approx_kl"].append(losses.approx_kl)
            stats["clipfrac"].append(losses.clipfrac)
            loss = pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            optimizer.step()
            stats["policy_loss"].append(pg_loss.detach())
            stats["value_loss"].append(v_loss.detach())
            stats["entropy"].append(ent.detach())
    out = {k: float(torch.stack(v).mean()) if v else float("nan") for k, v in stats.items()}
    var_y = float(data.ret.var()) if n > 1 else 0.0
    out["explained_variance"] = float("nan") if var_y == 0 else 1 - float((data.ret - data.value).var()) / var_y
    return out


def train(cfg: BatchPPOConfig, *, resume: bool = False, overwrite: bool = False,
          command: str | None = None) -> RunDir:
    """Run batched PPO as configured; returns the run directory (same rules as ``training.selfplay.train``:
    a new run needs an empty folder or ``overwrite``; ``resume`` continues from ``latest.pt``)."""
    run = RunDir(cfg.run_dir, cfg.name)
    try:
        return _train(cfg, run, resume=resume, overwrite=overwrite, command=command)
    finally:
        run.release()


def _train(cfg: BatchPPOConfig, run: RunDir, *, resume: bool, overwrite: bool, command: str | None) -> RunDir:
    # ---- seeding: everything derived from cfg.seed (a resumed run restores the states)
    device = resolve_device(cfg.device)
    if cfg.cuda_graphs and device.type != "cuda":
        raise ConfigError(f"cuda_graphs=true is not allowed on device={cfg.device!r} (here {device.type}): CUDA graphs "
                          f"need a CUDA device; use cuda_graphs=false, or device=cuda on a machine with a GPU")
    torch.set_num_threads(cfg.torch_threads)
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    if resume:
        run.check_can_resume()
        tensors, saved = load_latest(run, TRAINER, STATE_KEYS, TENSOR_KEYS)
        check_resumable(saved["config"], cfg, BATCH_FROZEN)
        check_resume_device(saved["device_type"], device, cfg.device)
    else:
        run.check_can_start(overwrite)
    net = build_net(cfg, init=not resume).to(device)
    critic = PrivilegedCritic(cfg.num_players, cfg.critic_hidden_sizes).to(device) if cfg.privileged_critic else None
    params = list(net.parameters()) + (list(critic.parameters()) if critic is not None else [])
    optimizer = torch.optim.Adam(params, lr=cfg.learning_rate, eps=1e-5)
    tables = BatchTables(cfg, net, critic, device)
    step, update, evals = 0, 0, EvalSchedule.start(cfg.eval_every)
    if resume:
        latest, _ = load_checkpoint(run.latest, num_players=cfg.num_players, obs_version=OBS_VERSION)
        with restoring(run):
            net.load_state_dict(latest.state_dict())
            if critic is not None:
                critic.load_state_dict(tensors["critic"])
            optimizer.load_state_dict(tensors["optimizer"])
            tables.load_state_dict(tensors["tables"])
            torch.set_rng_state(tensors["torch_rng"])
            restore_cuda_rng(tensors, device)
            gen.set_state(tensors["update_rng"])
        step, update, evals = saved["step"], saved["update"], EvalSchedule.resumed(cfg.eval_every, saved)
        run.history = saved["history"]
        if cfg.total_steps < min(step, saved["config"].get("total_steps", step)):  # a rollout may overshoot
            raise ConfigError(f"total_steps={cfg.total_steps} is below what the run has trained ({step} steps): "
                              f"give a larger total_steps to train it longer")
    progress = Progress(step, update, evals)

    def save_state() -> None:
        extra = {"critic": {k: v.cpu() for k, v in critic.state_dict().items()}} if critic is not None else {}
        save_latest(run, net, cfg, step=progress.step, trainer=TRAINER, state={
            "update": progress.update, **progress.evals.state(), "device_type": device.type},
            tensors={"optimizer": optimizer.state_dict(), "torch_rng": torch.get_rng_state(),
                     "update_rng": gen.get_state(), "tables": tables.state_dict(), **cuda_rng_state(device), **extra})

    def update_once() -> UpdateResult:
        optimizer.param_groups[0]["lr"] = cfg.learning_rate_at(progress.step)
        net.eval()
        data = tables.collect(cfg.rollout_steps, cfg.gamma, cfg.gae_lambda)
        net.train()
        stats = ppo_update(net, critic, optimizer, data, cfg, gen) if len(data) else {}
        net.eval()
        scalars: dict[str, float] = {}
        returns = [v for k in TABLE_KINDS for v in tables.finished[k]]
        if returns:
            scalars["episodic_return"] = float(np.mean(returns))
        for k in TABLE_KINDS:
            if tables.finished[k]:
                scalars[f"episodic_return_{k}"] = float(np.mean(tables.finished[k]))
            tables.finished[k].clear()
        if progress.update % cfg.snapshot_every == 0:
            tables.snapshot()
        return UpdateResult(len(data), stats, optimizer.param_groups[0]["lr"], scalars)

    return run_updates(cfg, run, net, progress, resume=resume, overwrite=overwrite, trainer=TRAINER, command=command,
                       save_state=save_state, update_once=update_once, done=lambda: progress.step >= cfg.total_steps)


def main(argv: list[str] | None = None) -> None:
    trainer_main(argv, description=__doc__.split("\n\n")[0], config_cls=BatchPPOConfig,
                 prog="python -m training.batch_ppo", train=train)


if __name__ == "__main__":
    main()
