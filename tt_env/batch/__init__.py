"""``tt_env.batch``: the batched engine (thousands of tables per call, on CPU or GPU)."""
from .game import BatchGame, TimeStep
from .solver import least_penalty, melds_completely

__all__ = ["BatchGame", "TimeStep", "least_penalty", "melds_completely"]
