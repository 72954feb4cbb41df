"""The baselines benchmark (``benchmarks/baselines.py``): standard RL algorithms trained from scratch on Three Thirteen.

- :mod:`.common`: the trainer interface, what an environment step is, the agent adapter;
- :mod:`.config`: the benchmark's YAML config (``configs/baselines.yaml``), validated;
- :mod:`.ours`, :mod:`.openspiel_algos`, :mod:`.rlcard_algos`, :mod:`.tianshou_algo`: one trainer per algorithm;
- :mod:`.runner`: train, evaluate at fixed steps, save each run's result as it goes;
- :mod:`.report`: the JSON, the picture and the table.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from .common import STEP_DEFINITION, RunContext, Trainer

ALGOS: dict[str, tuple[str, ...]] = {
    "ppo": ("torch",),
    "batch-ppo": ("torch",),
    "sb3-maskable-ppo": ("sb3_contrib",),
    "rllib-ppo": ("ray",),
    "openspiel-dqn": ("pyspiel",),
    "openspiel-nfsp": ("pyspiel",),
    "rlcard-dmc": ("rlcard",),
    "rlcard-dqn": ("rlcard",),
    "tianshou-dqn": ("tianshou",),
}
"""Every algorithm of the benchmark, in the order they run, with the modules it needs."""


def missing_modules(algo: str) -> list[str]:
    """The modules ``algo`` needs that are not installed (empty: it can run)."""
    return [m for m in ALGOS[algo] if importlib.util.find_spec(m) is None]


def make_trainer(algo: str, params: dict[str, Any], ctx: RunContext, budget: int, points: int) -> Trainer:
    """The trainer of ``algo`` for one run (``budget`` steps, evaluated at ``points`` points)."""
    if algo == "ppo":
        from .ours import SelfPlayTrainer

        return SelfPlayTrainer(params, ctx)
    if algo == "batch-ppo":
        from .ours import BatchPPOTrainer

        return BatchPPOTrainer(params, ctx)
    if algo == "sb3-maskable-ppo":
        from .ours import SB3Trainer

        return SB3Trainer(params, ctx)
    if algo == "rllib-ppo":
        from .ours import RLlibTrainer

        return RLlibTrainer(params, ctx, budget, points)
    if algo in ("openspiel-dqn", "openspiel-nfsp"):
        from .openspiel_algos import OpenSpielTrainer

        return OpenSpielTrainer(params, ctx, budget, algo.split("-")[1])
    if algo == "rlcard-dqn":
        from .rlcard_algos import RLCardDQNTrainer

        return RLCardDQNTrainer(params, ctx, budget)
    if algo == "rlcard-dmc":
        from .rlcard_algos import RLCardDMCTrainer

        return RLCardDMCTrainer(params, ctx)
    if algo == "tianshou-dqn":
        from .tianshou_algo import TianshouDQNTrainer

        return TianshouDQNTrainer(params, ctx, budget)
    raise ValueError(f"unknown algorithm {algo!r}: use one of {list(ALGOS)}")


__all__ = ["ALGOS", "STEP_DEFINITION", "RunContext", "Trainer", "make_trainer", "missing_modules"]
