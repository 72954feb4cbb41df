"""``tt_env.batch``: the batched engine (thousands of tables per call, on CPU or GPU)."""
from .game import BatchGame, TimeStep
from .go_out import melds_completely
from .solver import least_penalty

__all__ = ["BatchGame", "TimeStep", "least_penalty", "melds_completely"]
