"""RLCard's DMC (DouZero's Deep Monte-Carlo) and DQN on ``rlcard.make("three-thirteen")`` (``tt_env.rlcard``).

* ``rlcard-dqn``: ``rlcard.agents.DQNAgent`` in self-play, as RLCard's ``examples/run_rl.py`` trains
  it but with the agent in every seat: ``env.run(is_training=True)``, ``reorganize`` with the
  payoffs, and every seat's transitions fed to the one agent (each is an environment step).
  A section holds ``DQNAgent``'s keyword arguments except ``num_actions``, ``state_shape`` and
  ``device``, plus ``epsilon_decay_fraction`` (the share of the run's steps over which
  exploration decays; it sets ``epsilon_decay_steps``).
* ``rlcard-dmc``: RLCard's DMC pieces (``rlcard.agents.dmc_agent``): ``DMCModel`` (one Q(s, a)
  network per seat), its actor loop ``act`` in spawned worker processes, ``get_batch``,
  ``create_optimizers`` (RMSprop) and ``learn``, driven by a small learner loop here in place
  of ``DMCTrainer.start`` (which saves pickled models, has no hook between checkpoints and
  leaves its actors running). One deviation: ``create_buffers`` stores states as int8 (DouDizhu's
  are 0/1), which would zero our fractional features (hand sizes, stock, scores), so the buffers
  here are the same tensors in float32. Steps are DMC's frames: ``unroll_length * batch_size``
  learned per update, per seat. The learner loop takes the seats in turn, so ``num_buffers`` must
  hold a whole game of one seat (the actor writes a game's frames seat after seat and waits for a
  free buffer): 256 buffers of 50 frames, 15 MB a seat, hold the longest 2-player games.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import os
import signal
import time
from collections import deque
from typing import Any

import numpy as np

from training.common.config import ConfigError

from .common import RunContext, ScoreAgent, Trainer, seed_everything

DMC_DEFAULTS = {"mlp_layers": [256, 256, 256], "exp_epsilon": 0.01, "num_actors": 1, "unroll_length": 50,
                "batch_size": 8, "num_buffers": 256, "learning_rate": 1e-4, "alpha": 0.99, "momentum": 0.0,
                "epsilon": 1e-5, "max_grad_norm": 40.0}
"""``rlcard-dmc`` keys and their defaults (``DMCTrainer``'s names; defaults scaled down for 2 CPU cores)."""


def make_env(ctx: RunContext, seed: int) -> Any:
    """``rlcard.make("three-thirteen")`` at the run's player count."""
    import rlcard

    import tt_env.rlcard  # noqa: F401  (registers three-thirteen)

    return rlcard.make("three-thirteen", config={"seed": seed, "game_num_players": ctx.num_players})


def dqn_kwargs(params: dict[str, Any], budget: int) -> dict[str, Any]:
    """Checked ``DQNAgent`` keyword arguments of a ``rlcard-dqn`` section (``epsilon_decay_steps`` from the budget)."""
    from rlcard.agents import DQNAgent

    kwargs = dict(params)
    fraction = kwargs.pop("epsilon_decay_fraction", 0.5)
    if not isinstance(fraction, (int, float)) or isinstance(fraction, bool) or not 0 < fraction <= 1:
        raise ConfigError(f"hyperparameters.rlcard-dqn: epsilon_decay_fraction={fraction!r} is not allowed: use a "
                          f"float in (0, 1]")
    allowed = set(inspect.signature(DQNAgent.__init__).parameters) - {"self", "num_actions", "state_shape", "device",
                                                                       "save_path", "save_every", "epsilon_decay_steps"}
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise ConfigError(f"hyperparameters.rlcard-dqn: unknown key(s) {unknown}: allowed are "
                          f"{sorted(allowed) + ['epsilon_decay_fraction']}")
    kwargs["epsilon_decay_steps"] = max(1, int(fraction * budget))
    return kwargs


class RLCardDQNTrainer(Trainer):
    """``rlcard-dqn``: one ``DQNAgent`` in every seat."""

    def __init__(self, params: dict[str, Any], ctx: RunContext, budget: int) -> None:
        super().__init__(params, ctx)
        import torch
        from rlcard.agents import DQNAgent

        kwargs = dqn_kwargs(params, budget)
        seed_everything(ctx.seed)
        self.env = make_env(ctx, ctx.seed)
        try:
            self.dqn = DQNAgent(num_actions=self.env.num_actions, state_shape=self.env.state_shape[0],
                                device=torch.device(ctx.device), **kwargs)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"hyperparameters.rlcard-dqn: {exc}") from None
        self.env.set_agents([self.dqn] * ctx.num_players)

    def train_until(self, steps: int) -> None:
        from rlcard.utils import reorganize

        start = time.perf_counter()
        with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):  # DQNAgent prints every update
            while self.steps < steps:
                trajectories, payoffs = self.env.run(is_training=True)
                for seat in reorganize(trajectories, payoffs):
                    for transition in seat:
                        self.dqn.feed(transition)
                        self.steps += 1
        self.learn_seconds += time.perf_counter() - start

    def agent(self) -> ScoreAgent:
        import torch

        qnet = copy.deepcopy(self.dqn.q_estimator.qnet).cpu().eval()  # evaluations run on the CPU

        def score(obs: np.ndarray) -> np.ndarray:
            with torch.inference_mode():
                return qnet(torch.as_tensor(obs)).numpy()

        return ScoreAgent(score, name="rlcard-dqn")


def dmc_params(params: dict[str, Any]) -> dict[str, Any]:
    """``rlcard-dmc`` keys with defaults filled in; unknown keys or bad values raise :class:`ConfigError`."""
    unknown = sorted(set(params) - set(DMC_DEFAULTS))
    if unknown:
        raise ConfigError(f"hyperparameters.rlcard-dmc: unknown key(s) {unknown}: allowed are {sorted(DMC_DEFAULTS)}")
    out = {**DMC_DEFAULTS, **params}
    for key in ("num_actors", "unroll_length", "batch_size", "num_buffers"):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 1:
            raise ConfigError(f"hyperparameters.rlcard-dmc: {key}={out[key]!r} is not allowed: use an int >= 1")
    if out["num_buffers"] < out["batch_size"]:
        raise ConfigError(f"hyperparameters.rlcard-dmc: num_buffers={out['num_buffers']} is not allowed: use at least "
                          f"batch_size ({out['batch_size']})")
    layers = out["mlp_layers"]
    if not isinstance(layers, list) or not layers or not all(isinstance(h, int) and h > 0 for h in layers):
        raise ConfigError(f"hyperparameters.rlcard-dmc: mlp_layers={layers!r} is not allowed: "
                          f"use a non-empty list of ints")
    return out


def float_buffers(T: int, num_buffers: int, state_shape: list, action_shape: list) -> list[dict[str, list]]:
    """RLCard's ``create_buffers`` layout (one set per seat, shared memory) with float32 states."""
    import torch

    buffers = []
    for seat in range(len(state_shape)):
        specs = {"done": ((T,), torch.bool), "episode_return": ((T,), torch.float32),
                 "target": ((T,), torch.float32), "state": ((T, *state_shape[seat]), torch.float32),
                 "action": ((T, *action_shape[seat]), torch.int8)}
        buffers.append({key: [torch.empty(size, dtype=dtype).share_memory_() for _ in range(num_buffers)]
                        for key, (size, dtype) in specs.items()})
    return buffers


class RLCardDMCTrainer(Trainer):
    """``rlcard-dmc``: RLCard's DMC actors and learn step, a learner loop in this process."""

    def __init__(self, params: dict[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        import threading

        from rlcard.agents.dmc_agent.model import DMCModel
        from rlcard.agents.dmc_agent.utils import act, create_optimizers
        from torch import multiprocessing as mp

        self.p = p = dmc_params(params)
        seed_everything(ctx.seed)
        self.env = make_env(ctx, ctx.seed)
        n = ctx.num_players
        action_shape = [[self.env.num_actions] for _ in range(n)]
        self.actor_model = DMCModel(self.env.state_shape, action_shape, mlp_layers=p["mlp_layers"],
                                    exp_epsilon=p["exp_epsilon"], device="cpu")
        self.actor_model.share_memory()
        self.actor_model.eval()
        self.learner = DMCModel(self.env.state_shape, action_shape, mlp_layers=p["mlp_layers"],
                                exp_epsilon=p["exp_epsilon"], device="cpu")
        for seat in range(n):  # actors and learner start from the same weights
            self.actor_model.get_agent(seat).load_state_dict(self.learner.get_agent(seat).state_dict())
        self.optimizers = create_optimizers(n, p["learning_rate"], p["momentum"], p["epsilon"], p["alpha"],
                                            self.learner)
        self.buffers = float_buffers(p["unroll_length"], p["num_buffers"], self.env.state_shape, action_shape)
        ctx_mp = mp.get_context("spawn")
        self.free = [ctx_mp.SimpleQueue() for _ in range(n)]
        self.full = [ctx_mp.SimpleQueue() for _ in range(n)]
        for seat in range(n):
            for m in range(p["num_buffers"]):
                self.free[seat].put(m)
        self.lock = threading.Lock()
        self.return_buf = [deque(maxlen=100) for _ in range(n)]  # learn() logs mean returns here
        self.actors = []
        threads = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(ctx.torch_threads)  # a spawned actor's torch threads (default: all
        try:                                                     # cores, which contend badly on a busy machine)
            for i in range(p["num_actors"]):
                env = make_env(ctx, ctx.seed * 1000 + i)
                proc = ctx_mp.Process(target=act, args=(i, "cpu", p["unroll_length"], self.free, self.full,
                                                        self.actor_model, self.buffers, env), daemon=True)
                proc.start()
                os.kill(proc.pid, signal.SIGSTOP)  # actors run only inside train_until (below)
                self.actors.append(proc)
        finally:
            if threads is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = threads

    def train_until(self, steps: int) -> None:
        from rlcard.agents.dmc_agent.trainer import learn
        from rlcard.agents.dmc_agent.utils import get_batch

        start = time.perf_counter()
        frames = self.p["unroll_length"] * self.p["batch_size"]
        models = {"cpu": self.actor_model}
        self._signal_actors(signal.SIGCONT)
        try:
            while self.steps < steps:
                for seat in range(self.ctx.num_players):
                    self._check_actors()
                    batch = get_batch(self.free[seat], self.full[seat], self.buffers[seat], self.p["batch_size"],
                                      self.lock)
                    learn(seat, models, self.learner.get_agent(seat), batch, self.optimizers[seat], "cpu",
                          self.p["max_grad_norm"], self.return_buf, self.lock)
                    self.steps += frames
        finally:
            self._signal_actors(signal.SIGSTOP)
        self.learn_seconds += time.perf_counter() - start

    def _signal_actors(self, signum: int) -> None:
        """Pause (SIGSTOP) or continue (SIGCONT) the actors: they play only while the learner learns, so that
        no game is played during an evaluation and left out of the learning time."""
        for proc in self.actors:
            with contextlib.suppress(ProcessLookupError):  # one that died is reported by _check_actors
                os.kill(proc.pid, signum)

    def _check_actors(self) -> None:
        dead = [proc for proc in self.actors if not proc.is_alive()]
        if dead:
            raise RuntimeError(f"a DMC actor process died (exit code {dead[0].exitcode}): see its error above")

    def agent(self) -> ScoreAgent:
        import torch

        net = copy.deepcopy(self.learner.get_agent(0).net).eval()
        eye = torch.eye(self.env.num_actions)

        def score(obs: np.ndarray) -> np.ndarray:
            b, a = len(obs), self.env.num_actions
            with torch.inference_mode():
                states = torch.as_tensor(obs).repeat_interleave(a, dim=0)
                return net(states, eye.repeat(b, 1)).view(b, a).numpy()

        return ScoreAgent(score, name="rlcard-dmc")

    def close(self) -> None:
        for proc in self.actors:
            if proc.is_alive():
                proc.terminate()
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGCONT)  # a stopped process acts on SIGTERM once continued
        for proc in self.actors:
            proc.join(timeout=10)
