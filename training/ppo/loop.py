"""The parts of a PPO trainer's run that ``training/selfplay.py`` and ``training/batch_ppo.py`` share.

Both build the configured network the same way, stop on the same divergence and show the same
progress bar; only how they collect rollouts differs. Their evaluations (the schedule, the
saved ``step_N.pt`` checkpoints, the TensorBoard scalars) are ``training.common.evaluations``',
which ``train_sb3.py`` shares too; the names are re-exported here, where they used to live.
"""

from __future__ import annotations

from typing import Any

from models.checkpoint import CheckpointError, check_finite, load_checkpoint
from models.networks import CardNet, PolicyValueNet, build_network
from training.common.config import ConfigError
from training.common.evaluations import EvalSchedule, cpu_copy, evaluate_and_save, log_evaluation  # noqa: F401
from training.common.run_utils import TrainingDiverged
from tt_env.observation import OBS_VERSION


def build_net(cfg: Any, *, init: bool = True) -> PolicyValueNet:
    """The configured network (``network``, ``network_kwargs``, the rules' card counts for CardNet),
    with the weights of ``init_checkpoint`` when one is given and ``init`` is set."""
    kwargs = dict(cfg.network_kwargs)
    kwargs["num_players"] = cfg.num_players
    if cfg.network == "cardnet":
        for key, value in CardNet.rule_kwargs(cfg.train_rules()).items():
            kwargs.setdefault(key, value)
    net = build_network(cfg.network, **kwargs)
    if init and cfg.init_checkpoint:
        try:  # a new run only (a resumed run's weights are its own): before its folder is touched
            start, meta = load_checkpoint(cfg.init_checkpoint, num_players=cfg.num_players, obs_version=OBS_VERSION,
                                          rules=cfg.train_rules())  # (its scoring: refused if it learned another)
        except CheckpointError as exc:
            raise ConfigError(f"init_checkpoint={cfg.init_checkpoint!r}: {exc}") from None
        try:
            net.load_state_dict(start.state_dict())
        except RuntimeError as exc:
            raise ConfigError(f"init_checkpoint={cfg.init_checkpoint!r} does not fit network={cfg.network!r} "
                              f"{kwargs}: it holds a {meta['network']['class']} {meta['network'].get('kwargs')} "
                              f"({str(exc).splitlines()[0]})") from None
    return net


def check_not_diverged(net: PolicyValueNet, update: int) -> None:
    """Raise :class:`TrainingDiverged` if an update left a weight that is not finite."""
    try:
        check_finite(net.state_dict(), f"training diverged at update {update}")
    except CheckpointError as exc:
        raise TrainingDiverged(f"{exc}: lower learning_rate or max_grad_norm") from None


def progress_bar(cfg: Any, step: int) -> Any:
    """A tqdm bar over ``total_steps`` when ``progress`` is set, else None."""
    if not cfg.progress:
        return None
    from tqdm import tqdm

    return tqdm(total=cfg.total_steps, initial=min(step, cfg.total_steps), unit="step", desc=cfg.name,
                dynamic_ncols=True)
