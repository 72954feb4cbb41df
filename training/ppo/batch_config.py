"""``BatchPPOConfig``: the config of ``training/batch_ppo.py`` (PPO on the batched engine).

Keys mean what :class:`training.common.config.SelfPlayConfig`'s mean where the idea is the same
(``name``, ``run_dir``, ``total_steps``, ``eval_every``, ``network``, ``network_kwargs``,
``learning_rate``, ``pool_size``, ``snapshot_every`` ...): both configs take those of our PPO from
:class:`training.common.config.PPOBaseConfig`. What differs:

* ``num_tables`` replaces ``num_envs``: tables of one :class:`tt_env.batch.BatchGame`;
* ``rollout_steps`` counts moves of *every table* per rollout (CleanRL's ``num_steps``): an
  update learns from about ``num_tables * rollout_steps * (learner share of the moves)``
  learner decisions; ``total_steps`` still counts learner decisions;
* ``opponents`` is a mix: the fraction of tables whose other seats are ``self`` (every seat is
  the learner), ``pool`` (past versions of this run), ``greedy-v0``, ``random-v0`` or
  ``expert-v0`` (the scalar agent, one row at a time on the CPU: it has no batched form);
* ``device``: ``auto`` (CUDA when there is one), ``cpu``, ``cuda`` or ``cuda:K``;
* ``privileged_critic``: the value comes from a separate critic that reads the global state
  (every hand) during training only; the policy, and so every checkpoint, reads the observation;
* ``cuda_graphs``: the engine's steps replayed as CUDA graphs (on a CUDA device).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from training.common.config import PPOBaseConfig
from training.common.device import DEVICE_PATTERN
from training.common.value_checks import check as _check
from training.common.value_checks import check_mlp_size

TABLE_KINDS = ("self", "pool", "greedy-v0", "random-v0", "expert-v0")
"""Who holds the non-learner seats of a table (``self``: nobody, every seat is the learner). New kinds
go at the end: a table's kind follows this order, so a run's tables keep their kinds."""
MAX_TABLES = 1 << 20
MAX_MOVES = 1 << 22
"""Most moves one rollout may hold (``rollout_steps * num_tables``): a learner move keeps its
network input and legal mask, with the privileged critic also the global state (2.5 to 10 kB,
twice that while the rollout's parts are joined), so this many take 10 to 80 GB, a large GPU's
memory (a CPU run meets its memory well before: 2**20 moves are several GB)."""
DEVICE = DEVICE_PATTERN
"""The allowed ``device`` values (``training.common.device``, shared by every trainer)."""


@dataclass
class BatchPPOConfig(PPOBaseConfig):
    """``training/batch_ppo.py``: PPO with rollouts from thousands of batched tables on one device."""

    UNLISTED_KEYS: ClassVar[frozenset[str]] = frozenset({"num_envs"})
    """selfplay's key, tolerated at its default but not offered: this trainer has num_tables."""

    name: str = "batch_ppo"
    total_steps: int = 100_000
    device: str = "auto"
    """``auto`` (CUDA when available, else CPU), ``cpu``, ``cuda`` or ``cuda:K``: where the games,
    the networks and the update run."""
    num_tables: int = 128
    """Tables played side by side (one BatchGame)."""
    rollout_steps: int = 32
    """Moves of every table per rollout (learner decisions per update: about num_tables x this x the
    learner's share of the moves)."""
    num_minibatches: int = 8
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 over the window [anneal_start_step, anneal_end_step]."""
    anneal_start_step: int = 0
    """Learner step where the decay starts (learning_rate until then)."""
    anneal_end_step: int | None = None
    """Learner step where the rate reaches 0 (null: total_steps). A long run trained in chunks sets
    it, since each chunk's total_steps is only that chunk's end. With anneal_lr, total_steps may not
    pass it: the steps after it would learn nothing."""
    opponents: dict = field(default_factory=lambda: {"self": 0.3, "pool": 0.2, "greedy-v0": 0.25,
                                                     "random-v0": 0.25})
    """Fraction of the tables whose other seats are each kind (TABLE_KINDS); they sum to 1."""
    snapshot_every: int = 10
    """Updates between snapshots added to the pool (it starts with the initial network)."""
    privileged_critic: bool = False
    """PerfectDou's critic: the value reads the global state (every hand) plus the seat, in training only."""
    critic_hidden_sizes: list = field(default_factory=lambda: [256, 256])
    """Hidden layers of the privileged critic's MLP (used only with privileged_critic)."""
    cuda_graphs: bool = False
    """Replay the engine's steps as CUDA graphs (``BatchGame(cuda_graphs=True)``; a CUDA device only):
    a rollout moves every table at every step, so its steps stay in lockstep. The games are the same."""

    def validate(self) -> None:
        _check(self.num_envs == 8, "num_envs", self.num_envs,
               "the default: batch_ppo plays num_tables tables (set num_tables instead)")
        super().validate()
        from tt_env.batch.game import MAX_BATCH_DECKS
        from tt_env.observation.state import state_size

        _check(1 <= self.num_tables <= MAX_TABLES, "num_tables", self.num_tables, f"an int from 1 to {MAX_TABLES}")
        moves = self.rollout_steps * self.num_tables
        _check(self.num_minibatches <= moves <= MAX_MOVES, "rollout_steps", self.rollout_steps,
               f"an int with rollout_steps * num_tables (moves per rollout) from num_minibatches "
               f"({self.num_minibatches}) to {MAX_MOVES}: each move takes several kB of memory")
        _check(self.train_rules().num_decks <= MAX_BATCH_DECKS, "rules", self.rules,
               f"rules of at most {MAX_BATCH_DECKS} decks (the batched engine's limit)")
        mix = self.opponents
        _check(isinstance(mix, dict) and mix and set(mix) <= set(TABLE_KINDS), "opponents", mix,
               f"a mapping from {list(TABLE_KINDS)} to fractions of the tables, e.g. {{self: 0.5, greedy-v0: 0.5}}")
        for kind, share in mix.items():
            _check(isinstance(share, (int, float)) and not isinstance(share, bool) and math.isfinite(share)
                   and 0 <= share <= 1, f"opponents.{kind}", share, "a fraction in [0, 1]")
        _check(abs(sum(mix.values()) - 1.0) < 1e-6, "opponents", mix, "fractions that sum to 1")
        check_mlp_size("critic_hidden_sizes", "the privileged critic", state_size(self.num_players) + self.num_players,
                       self.critic_hidden_sizes)
        _check(self.anneal_start_step >= 0, "anneal_start_step", self.anneal_start_step, "an int >= 0")
        end = self.anneal_end()
        _check(end > self.anneal_start_step, "anneal_end_step" if self.anneal_end_step is not None else "total_steps",
               end, f"an int > anneal_start_step ({self.anneal_start_step}): the decay window must not be empty")
        _check(not self.anneal_lr or self.total_steps <= end, "total_steps", self.total_steps,
               f"an int up to anneal_end_step ({end}) with anneal_lr: the learning rate is 0 from there, so later "
               f"steps would learn nothing (raise anneal_end_step, or set anneal_lr=false)")

    def anneal_end(self) -> int:
        """The learner step where the annealed learning rate reaches 0."""
        return self.total_steps if self.anneal_end_step is None else self.anneal_end_step

    def learning_rate_at(self, step: int) -> float:
        """The learning rate of the update that starts at learner step ``step``: ``learning_rate``
        before ``anneal_start_step`` (always, without ``anneal_lr``), then linear down to 0 at
        :meth:`anneal_end`."""
        if not self.anneal_lr:
            return self.learning_rate
        start, end = self.anneal_start_step, self.anneal_end()
        return self.learning_rate * min(max((end - step) / (end - start), 0.0), 1.0)

    def table_counts(self) -> dict[str, int]:
        """Tables of each kind (largest remainders, in TABLE_KINDS order; they sum to num_tables)."""
        exact = {k: self.opponents.get(k, 0.0) * self.num_tables for k in TABLE_KINDS}
        counts = {k: int(math.floor(v)) for k, v in exact.items()}
        left = self.num_tables - sum(counts.values())
        for k in sorted(TABLE_KINDS, key=lambda k: (-(exact[k] - counts[k]), TABLE_KINDS.index(k)))[:left]:
            counts[k] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.pop("num_envs", None)  # selfplay's key; this trainer has num_tables
        return out
