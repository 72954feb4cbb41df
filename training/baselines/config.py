"""The baselines benchmark's config (``configs/baselines.yaml``): budget, seeds, evaluation, hyperparameters.

Keys are the fields of :class:`BaselinesConfig`; an unknown key, a bad value or an unknown
algorithm stops the benchmark before it starts with one line naming what is allowed (the
loader is ``training.common.config``'s, shared with the training scripts). ``hyperparameters`` holds
one section per algorithm, each checked by :func:`check_hyperparameters` against the keys its
framework takes (for an algorithm whose package is not installed, only that it is a mapping).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from training.common.config import ConfigError
from training.common.value_checks import check_agents_fit

from . import ALGOS, missing_modules
from .common import RunContext

DEFAULT_OPPONENTS = ["random-v0", "greedy-v0", "expert-v0"]
CPU_ONLY = {
    "openspiel-nfsp": "OpenSpiel's PyTorch NFSP builds its inputs with torch.FloatTensor(..., device=...), which "
                      "accepts only the CPU",
    "rlcard-dmc": "its actors are CPU processes filling shared-memory CPU buffers",
    "rllib-ppo": "RLlib places its learners itself (num_gpus_per_learner), not through a device",
}
"""Algorithms whose library gives this benchmark no device, and why: they train on the CPU (``device: auto``
runs them there; an explicit ``cuda`` is refused for them)."""
EVAL_SEED_BASE = 10_000
"""Run seed ``s`` is evaluated on the deals of seed ``EVAL_SEED_BASE + s`` (as ``selfplay.py`` does), the same
deals for every algorithm."""


@dataclass
class BaselinesConfig:
    """``benchmarks/baselines.py``: which algorithms, how long, how evaluated, with which hyperparameters."""

    steps: int = 200_000
    """Environment steps per run (``training.baselines.common``: one decision of a policy being trained)."""
    seeds: list = field(default_factory=lambda: [0, 1, 2])
    algos: list = field(default_factory=lambda: list(ALGOS))
    num_players: int = 2
    eval_points: int = 5
    """Evaluations per run, at steps * k / eval_points for k = 1..eval_points."""
    eval_deals: int = 50
    """Duplicate deals per opponent at each evaluation (each played once per seating)."""
    eval_opponents: list = field(default_factory=lambda: list(DEFAULT_OPPONENTS))
    eval_batch_size: int = 256
    torch_threads: int = 1
    device: str = "auto"
    """``auto`` (CUDA when ``torch.cuda.is_available()``, else CPU), ``cpu``, ``cuda`` or ``cuda:K``: where the
    algorithms whose library allows a device train (``ppo``, ``batch-ppo``, ``sb3-maskable-ppo``, ``openspiel-dqn``,
    ``rlcard-dqn``, ``tianshou-dqn``); the others (:data:`CPU_ONLY`) train on the CPU."""
    hyperparameters: dict = field(default_factory=dict)
    """One section per algorithm: its framework's own keyword arguments (see each trainer's module)."""

    def validate(self) -> None:
        def check(ok: bool, key: str, allowed: str) -> None:
            if not ok:
                raise ConfigError(f"{key}={getattr(self, key)!r} is not allowed: use {allowed}")

        check(self.steps >= 1, "steps", "an int >= 1")
        check(bool(self.seeds) and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2 ** 20
                                       for s in self.seeds) and len(set(self.seeds)) == len(self.seeds),
              "seeds", "a non-empty list of distinct ints from 0 to 1048575")
        check(bool(self.algos) and all(a in ALGOS for a in self.algos) and len(set(self.algos)) == len(self.algos),
              "algos", f"a non-empty list of distinct names from {list(ALGOS)}")
        check(2 <= self.num_players <= 4, "num_players", "an int from 2 to 4")
        check(self.eval_points >= 1, "eval_points", "an int >= 1")
        check(self.eval_deals >= 2, "eval_deals", "an int >= 2 (an interval needs two deals)")
        check(self.eval_batch_size >= 1, "eval_batch_size", "an int >= 1")
        check(self.torch_threads >= 1, "torch_threads", "an int >= 1")
        from training.common.device import check_device

        check_device(self.device)
        from tt_env.agents import list_agents

        known = list_agents()
        check(bool(self.eval_opponents) and all(o in known for o in self.eval_opponents), "eval_opponents",
              f"a non-empty list of registered agents {known}")
        from tt_env.engine.rules import Rules

        # the games of training.baselines.runner's evaluation: refused now, not at the first evaluation
        check_agents_fit("eval_opponents", self.eval_opponents, Rules(num_players=self.num_players))
        unknown = sorted(set(self.hyperparameters) - set(ALGOS))
        if unknown:
            raise ConfigError(f"hyperparameters: unknown algorithm(s) {unknown}: allowed are {list(ALGOS)}")
        for algo, section in self.hyperparameters.items():
            if not isinstance(section, dict):
                raise ConfigError(f"hyperparameters.{algo} must be a mapping of keys to values, got {section!r}")

    def params(self, algo: str) -> dict[str, Any]:
        """The hyperparameter section of ``algo`` (empty: the defaults)."""
        return dict(self.hyperparameters.get(algo) or {})

    def eval_steps(self) -> list[int]:
        """The steps at which every run is evaluated."""
        return sorted({math.ceil(self.steps * k / self.eval_points) for k in range(1, self.eval_points + 1)})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


FROZEN = ("steps", "num_players", "eval_points", "eval_deals", "eval_opponents", "hyperparameters")
"""What ``--resume`` may not change: the runs already finished were made with them (algos and seeds may)."""


def algo_device(cfg: BaselinesConfig, algo: str) -> str:
    """The device ``algo`` trains on (``training.common.device`` resolves ``cfg.device``); :class:`ConfigError` if this
    machine lacks it, or if it is an explicit CUDA device and ``algo``'s library gives no device (:data:`CPU_ONLY`)."""
    from training.common.device import resolve_device

    device = resolve_device(cfg.device)
    if algo in CPU_ONLY:
        if device.type != "cpu" and cfg.device != "auto":
            raise ConfigError(f"device={cfg.device!r} is not allowed for {algo}: it trains on the CPU only "
                              f"({CPU_ONLY[algo]}): use auto (it then runs on the CPU) or cpu, or leave {algo} "
                              f"out of algos")
        return "cpu"
    return str(device)


def check_hyperparameters(cfg: BaselinesConfig, work_dir: Path) -> None:
    """Check every selected, installed algorithm's section and device now, before hours of training find a typo."""
    for algo in cfg.algos:
        if missing_modules(algo):
            continue
        ctx = RunContext(seed=0, num_players=cfg.num_players, work_dir=work_dir, torch_threads=cfg.torch_threads,
                         device=algo_device(cfg, algo))
        params = cfg.params(algo)
        if algo == "ppo":
            from .ours import selfplay_config

            selfplay_config(params, ctx, cfg.steps)
        elif algo == "batch-ppo":
            from .ours import batch_ppo_config

            batch_ppo_config(params, ctx, cfg.steps)
        elif algo == "sb3-maskable-ppo":
            from .ours import sb3_config

            sb3_config(params, ctx, cfg.steps)
        elif algo == "rllib-ppo":
            from .ours import rllib_config

            rllib_config(params, ctx, cfg.steps, cfg.eval_points)
        elif algo in ("openspiel-dqn", "openspiel-nfsp"):
            from .openspiel_algos import agent_kwargs

            agent_kwargs(algo, params, cfg.steps, cfg.num_players)
        elif algo == "rlcard-dqn":
            from .rlcard_algos import dqn_kwargs

            dqn_kwargs(params, cfg.steps)
        elif algo == "rlcard-dmc":
            from .rlcard_algos import dmc_params

            dmc_params(params)
        elif algo == "tianshou-dqn":
            from .tianshou_algo import tianshou_params

            tianshou_params(params, cfg.steps)
