"""Self-play PPO on Ray RLlib, from one laptop to a cluster with the same config.

    pip install -e ".[rllib]"
    python -m training.train_rllib --config configs/rllib_default.yaml --iterations 20 --env-runners 2
    python -m training.train_rllib --config configs/rllib_default.yaml --address auto --env-runners 16
    python -m training.evaluate runs/rllib/final.pt greedy-v0          # no Ray needed

Configuration: the fields of :class:`RLlibConfig`, from ``--config`` (YAML; unknown keys are an
error), then ``--set key=value`` (repeatable, value parsed as YAML: ``--set rules.rounds=[11]``),
then the four direct flags ``--iterations``, ``--env-runners``, ``--address``, ``--out``. The
resolved config is written to ``OUT/config.yaml``.

What runs: RLlib's default API stack (RLModule, Learner, EnvRunners, connectors); our AEC env
through RLlib's PettingZoo wrapper (``training/rllib/env.py``); one shared masked policy for every
seat (``training/rllib/masking.py``), optionally facing fixed opponents from ``tt_env.agents`` in
a share of the episodes (``opponent_mix``). A crashed env runner fails the run (RLlib's default is
to restart it and carry on, possibly sampling nothing), and an iteration that sampled no step is
an error. Every ``export_every`` iterations and at the end, the policy is exported to our
checkpoint format: ``OUT/iter_NNNNNN.pt`` and ``OUT/final.pt``, each with its ``.json``.

Files: ``OUT/run.lock`` while the run lives (``training.common.run_lock``: a second run into the same
folder is refused meanwhile); ``OUT/config.yaml``; ``OUT/metrics.jsonl``, one line per iteration (sampled env steps,
seconds, steps per second, episodes ended, mean episode length, and the mean return summed over
the seats the shared policy held, which is 0 in zero-sum self-play); the checkpoints;
``OUT/rllib/`` (RLlib's log folder, instead of ``~/ray_results``) and, for a local Ray,
``OUT/ray/`` (Ray's session files, instead of ``/tmp/ray``; a fresh temp folder when that path is
too long for Ray's sockets). A local Ray gets a login token for this run only, so nothing is
written to ``~/.ray`` either.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from training.common.config import (MAX_ROLLOUT, RUN_NAME, ConfigError, RunConfig, check_network_size,
                                    config_arg_parser, dump_config, load_config)
from training.common.run_lock import RunFolderError, RunLock
from tt_env import jsonio
from tt_env.cli_checks import output_dir_problem

MAX_TEMP_DIR_LEN = 40  # Ray's socket paths (temp dir + ~65 chars) must fit in 107 characters


@dataclass
class RLlibConfig(RunConfig):
    """``training/train_rllib.py``: PPO on Ray RLlib, one shared policy for every seat.

    The keys every trainer has (``name``, ``run_dir``, ``seed``, ``num_players``, ``rules``,
    ``reward_mode``, ``num_envs``, ``learning_rate``, ``gamma``, ``gae_lambda``, ``ent_coef``,
    ``torch_threads``) come from :class:`training.common.config.RunConfig`; RLlib's own follow.
    The step budget, evaluations, device and saves of the PPO trainers' ``BaseConfig`` are not
    keys here: RLlib trains ``iterations``, exports every ``export_every`` and stays on the CPU.
    ``torch_threads`` are the driver's (the learner and, with 0 env runners, the sampler); Ray
    gives each EnvRunner one thread (``OMP_NUM_THREADS=1``).
    """

    name: str = "rllib"
    num_envs: int = 4
    """Environments stepped together by each EnvRunner (one batched forward pass for all)."""
    out: str | None = None
    """Run folder (``--out``); None: ``<run_dir>/<name>``."""
    network: str = "mlp"
    """A network of ``models.networks`` (``mlp``; ``cardnet`` works but computes its features on the CPU)."""
    network_kwargs: dict = field(default_factory=lambda: {"hidden_sizes": [128, 128]})
    iterations: int = 10
    """Training iterations; each samples ``train_batch_size`` env steps, then updates."""
    env_runners: int = 0
    """Remote EnvRunner actors (0: sample in the driver process)."""
    address: str | None = None
    """Ray cluster to join (``auto`` or ``host:port``); None: a local Ray, stopped at the end."""
    num_cpus: int | None = None
    """CPUs of a local Ray (None: all of them)."""
    export_every: int = 10
    """Iterations between exports of ``iter_NNNNNN.pt`` (0: only ``final.pt``)."""
    opponent_mix: float = 0.0
    """Share of episodes where one seat is the learner and the others are fixed ``opponents``."""
    opponents: list = field(default_factory=lambda: ["greedy-v0"])
    """Fixed opponents: ``tt_env.agents`` names or checkpoint paths (used when ``opponent_mix > 0``)."""
    train_batch_size: int = 4000
    minibatch_size: int = 256
    update_epochs: int = 4
    clip_coef: float = 0.2
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    fail_at_step: int | None = None
    """For tests: every environment raises at this step (the run must fail)."""

    def validate(self) -> None:
        checks = [
            (isinstance(self.name, str) and RUN_NAME.match(self.name) and len(self.name) <= 100, "name",
             "a folder name of letters, digits, '.', '_' and '-' that does not start with '.' (it is created "
             "inside run_dir)"),
            (2 <= self.num_players <= 8, "num_players", "an int from 2 to 8"),
            (self.reward_mode in ("relative", "penalty", "win"), "reward_mode",
             "one of ['relative', 'penalty', 'win']"),
            (1 <= self.iterations <= 10 ** 7, "iterations", "an int from 1 to 10000000"),
            (0 <= self.env_runners <= 1024, "env_runners", "an int from 0 to 1024"),
            (1 <= self.num_envs <= 1024, "num_envs", "an int from 1 to 1024"),
            (self.num_cpus is None or 1 <= self.num_cpus <= 4096, "num_cpus", "an int from 1 to 4096 or null"),
            (self.export_every >= 0, "export_every", "an int >= 0"),
            (0 <= self.opponent_mix <= 1, "opponent_mix", "a float in [0, 1]"),
            (self.opponent_mix == 0 or bool(self.opponents), "opponents", "a non-empty list of agents"),
            (1 <= self.train_batch_size <= MAX_ROLLOUT, "train_batch_size", f"an int from 1 to {MAX_ROLLOUT}"),
            (1 <= self.minibatch_size <= self.train_batch_size, "minibatch_size",
             "an int from 1 to train_batch_size"),
            (1 <= self.update_epochs <= 10_000, "update_epochs", "an int from 1 to 10000"),
            (1 <= self.torch_threads <= 1024, "torch_threads", "an int from 1 to 1024"),
            (self.learning_rate > 0, "learning_rate", "a float > 0"),
            (0 < self.gamma <= 1, "gamma", "a float in (0, 1]"),
            (0 <= self.gae_lambda <= 1, "gae_lambda", "a float in [0, 1]"),
            (self.fail_at_step is None or self.fail_at_step >= 1, "fail_at_step", "an int >= 1 or null"),
        ]
        for ok, key, allowed in checks:
            if not ok:
                raise ConfigError(f"{key}={getattr(self, key)!r} is not allowed: use {allowed}")
        from models.networks import NETWORKS

        if self.network not in NETWORKS:
            raise ConfigError(f"network={self.network!r} is not allowed: use one of {sorted(NETWORKS)}")
        if "num_players" in self.network_kwargs:
            raise ConfigError("network_kwargs: set num_players at the top level, not in network_kwargs")
        check_network_size(self.network, {"num_players": self.num_players, **self.network_kwargs}, "network_kwargs")
        self.check_rules()
        if self.opponent_mix > 0:
            from tt_env.agents import list_agents

            known = list_agents()
            for name in self.opponents:
                if name not in known and not Path(name).is_file():
                    raise ConfigError(f"opponents: {name!r} is neither a registered agent {known} nor a file")

    def full_network_kwargs(self) -> dict[str, Any]:
        """``network_kwargs`` completed with the player count (and, for ``cardnet``, the rules it needs)."""
        kwargs = {**self.network_kwargs, "num_players": self.num_players}
        if self.network == "cardnet":
            rules = self.train_rules()
            from models.networks import CardNet  # torch only where a CardNet is asked for

            for key, value in CardNet.rule_kwargs(rules).items():
                kwargs.setdefault(key, value)
        return kwargs

    @property
    def run_path(self) -> Path:
        return Path(self.out) if self.out else Path(self.run_dir) / self.name


# ================================================================================ Ray and RLlib
def start_ray(cfg: RLlibConfig, run_path: Path) -> bool:
    """Connect to Ray; True when this call started a local Ray (to be stopped at the end)."""
    import ray

    if ray.is_initialized():  # e.g. tests sharing one Ray
        return False
    if cfg.address:
        ray.init(address=cfg.address)
        return False
    # Without a token, a local Ray writes a new one to ~/.ray/auth_token: give it one for this run.
    if not any(k in os.environ for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")):
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    temp_dir = run_path.resolve() / "ray"
    if len(str(temp_dir)) > MAX_TEMP_DIR_LEN:
        temp_dir = Path(tempfile.mkdtemp(prefix="tt-ray-"))
    ray.init(num_cpus=cfg.num_cpus, include_dashboard=False, _temp_dir=str(temp_dir))
    print(f"local Ray started, session files in {temp_dir}", flush=True)
    return True


def ppo_class(logdir: Path) -> type:
    """RLlib's PPO, its log folder (by default a new folder in ``~/ray_results``) set to ``logdir``."""
    from ray.rllib.algorithms.ppo import PPO

    class PPOInRunDir(PPO):
        def _setup_logdir(self) -> None:  # Trainable's hook; PPO leaves it empty
            self._logdir = str(logdir)
            os.makedirs(self._logdir, exist_ok=True)

    return PPOInRunDir


def build_config(cfg: RLlibConfig, run_path: Path) -> Any:
    """The ``PPOConfig`` of ``cfg``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from training.rllib.env import LEARNER_POLICY, SeatPolicyMapping, ThreeThirteenRLlibEnv, fixed_policy_id
    from training.rllib.masking import FixedAgentModule, MaskedPPOModule

    rules = cfg.train_rules().to_dict()
    env_config = {"num_players": cfg.num_players, "reward_mode": cfg.reward_mode, "rules": dict(cfg.rules),
                  "fail_at_step": cfg.fail_at_step}
    opponents = tuple(dict.fromkeys(cfg.opponents)) if cfg.opponent_mix > 0 else ()
    specs = {LEARNER_POLICY: RLModuleSpec(module_class=MaskedPPOModule, model_config={
        "network": cfg.network, "network_kwargs": cfg.full_network_kwargs()})}
    for i, name in enumerate(opponents):
        specs[fixed_policy_id(name)] = RLModuleSpec(module_class=FixedAgentModule, model_config={
            "agent": name, "rules": rules, "seed": cfg.seed * 1000 + i})
    return (
        PPOConfig(algo_class=ppo_class(run_path / "rllib"))
        # RLlib's env check plays random actions, which our mask-checking env refuses; the env
        # has its own PettingZoo API tests.
        .environment(ThreeThirteenRLlibEnv, env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=cfg.env_runners, num_envs_per_env_runner=cfg.num_envs,
                     num_cpus_per_env_runner=1)
        .multi_agent(policies=set(specs), policies_to_train=[LEARNER_POLICY],
                     policy_mapping_fn=SeatPolicyMapping(cfg.num_players, cfg.opponent_mix, opponents))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(train_batch_size=cfg.train_batch_size, minibatch_size=cfg.minibatch_size,
                  num_epochs=cfg.update_epochs, lr=cfg.learning_rate, gamma=cfg.gamma, lambda_=cfg.gae_lambda,
                  entropy_coeff=cfg.ent_coef, clip_param=cfg.clip_coef, vf_loss_coeff=cfg.vf_coef,
                  grad_clip=cfg.max_grad_norm)
        # Fail loudly: by default RLlib restarts a crashed env runner and carries on.
        .fault_tolerance(restart_failed_env_runners=False, ignore_env_runner_failures=False,
                         restart_failed_sub_environments=False)
        .debugging(seed=cfg.seed)
    )


def export(algo: Any, cfg: RLlibConfig, path: Path, iteration: int, env_steps: int) -> Path:
    """Export the learner's shared policy as our checkpoint ``path`` (see ``training/rllib/export.py``)."""
    from training.rllib.env import LEARNER_POLICY
    from training.rllib.export import export_policy

    state = algo.learner_group.get_weights([LEARNER_POLICY])[LEARNER_POLICY]
    return export_policy(state, path, network=cfg.network, network_kwargs=cfg.full_network_kwargs(),
                         rules=cfg.train_rules().to_dict(), training_steps=env_steps,
                         extra={"trainer": "training/train_rllib.py", "rllib_iteration": iteration,
                                "config": cfg.to_dict()})


# ================================================================================ training loop
def sampled_steps(result: dict[str, Any]) -> int:
    """Environment steps sampled in one ``algo.train()`` result."""
    return int(result.get("env_runners", {}).get("num_env_steps_sampled", 0) or 0)


def _number(x: Any) -> float | None:
    """A finite float for metrics.jsonl (RLlib reports NaN when no episode ended), else None."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def train(cfg: RLlibConfig) -> dict[str, Any]:
    """Run ``cfg.iterations`` PPO iterations and export; returns a summary (steps, times, paths).

    The run holds its folder's lock (``training.common.run_lock``) throughout: a second run into the
    same folder while this one lives is refused, naming this one.
    """
    import torch

    torch.set_num_threads(cfg.torch_threads)
    run_path = cfg.run_path
    lock = RunLock(run_path)
    lock.check_free("a second run would write the same files")
    problem = output_dir_problem(run_path)
    if problem:
        raise RunFolderError(f"run folder {str(run_path)!r} cannot be used: {problem}")
    run_path.mkdir(parents=True, exist_ok=True)
    lock.acquire("a second run would write the same files")
    try:
        return _train(cfg, run_path)
    finally:
        lock.release()


def _train(cfg: RLlibConfig, run_path: Path) -> dict[str, Any]:
    import ray

    dump_config(cfg, run_path / "config.yaml")
    started_ray = start_ray(cfg, run_path)
    summary: dict[str, Any] = {"iterations": [], "env_steps": 0}
    try:
        algo = build_config(cfg, run_path).build_algo()
        try:
            with open(run_path / "metrics.jsonl", "w") as metrics:
                for it in range(1, cfg.iterations + 1):
                    t0 = time.perf_counter()
                    result = algo.train()
                    dt = time.perf_counter() - t0
                    steps = sampled_steps(result)
                    if steps <= 0:
                        raise RuntimeError(f"iteration {it} sampled no environment step: an env runner or "
                                           f"environment is broken (see the errors above)")
                    summary["env_steps"] += steps
                    runners = result.get("env_runners", {})
                    row = {"iteration": it, "env_steps": steps, "env_steps_total": summary["env_steps"],
                           "seconds": round(dt, 3), "steps_per_second": round(steps / dt, 1),
                           "episodes": int(_number(runners.get("num_episodes")) or 0),
                           "episode_len_mean": _number(runners.get("episode_len_mean")),
                           "shared_policy_return_mean": _number(
                               runners.get("module_episode_returns_mean", {}).get("shared"))}
                    metrics.write(jsonio.dumps(row) + "\n")
                    metrics.flush()
                    summary["iterations"].append(row)
                    print(f"iter {it}/{cfg.iterations}: {steps} steps in {dt:.1f}s "
                          f"({row['steps_per_second']}/s), {row['episodes']} episodes", flush=True)
                    if cfg.export_every and it % cfg.export_every == 0 and it < cfg.iterations:
                        export(algo, cfg, run_path / f"iter_{it:06d}.pt", it, summary["env_steps"])
            summary["final"] = export(algo, cfg, run_path / "final.pt", cfg.iterations, summary["env_steps"])
            print(f"policy exported to {summary['final']}", flush=True)
        finally:
            algo.stop()
    finally:
        if started_ray:
            ray.shutdown()
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = config_arg_parser(__doc__.split("\n\n")[0], RLlibConfig, prog="python -m training.train_rllib")
    parser.add_argument("--iterations", type=int, help="training iterations")
    parser.add_argument("--env-runners", type=int, help="remote EnvRunner actors (0: sample in this process)")
    parser.add_argument("--address", help="Ray cluster to join: 'auto' or host:port (default: a local Ray)")
    parser.add_argument("--out", help="run folder (default: <run_dir>/<name>)")
    args = parser.parse_args(argv)
    overrides = list(args.overrides)
    for key in ("iterations", "env_runners", "address", "out"):
        value = getattr(args, key)
        if value is not None:
            overrides.append(f"{key}={json.dumps(value)}")
    try:
        cfg = load_config(RLlibConfig, args.config, overrides)
        train(cfg)
    except (ConfigError, RunFolderError) as exc:
        parser.error(str(exc))


if __name__ == "__main__":
    main()
