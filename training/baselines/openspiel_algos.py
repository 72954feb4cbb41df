"""OpenSpiel's DQN and NFSP (their PyTorch implementations) on ``python_three_thirteen``.

The game is our OpenSpiel adapter (``tt_env.openspiel``), played through
``open_spiel.python.rl_environment.Environment`` with ``observation_type=OBSERVATION`` (the
``info_state`` the agents read is our observation, 107 N + 80 floats, not the long history
tensor). As in OpenSpiel's examples (``breakthrough_dqn.py``, ``kuhn_nfsp.py``) there is one
learning agent per seat and every seat's decision is an environment step; the rewards are the
game's terminal returns (the relative reward summed over the game). The agent of seat 0 is the
one evaluated (it plays every seat in the duplicate evaluator: the observation is seat-relative).

A config section holds the agent class's keyword arguments (``dqn.DQN`` or ``nfsp.NFSP``, whose
extra keywords go to its inner DQN), except ``player_id``, ``state_representation_size``,
``num_actions`` and ``seed``, which the benchmark sets, plus one of ours,
``epsilon_decay_fraction``: the share of the run's steps (per agent) over which the DQN's
exploration decays, which sets ``epsilon_decay_duration`` so that it scales with ``--steps``.
"""

from __future__ import annotations

import inspect
from typing import Any

from training.common.config import ConfigError

from .common import RunContext, ScoreAgent, Trainer, seed_everything, torch_scores

SET_BY_BENCHMARK = ("player_id", "state_representation_size", "num_actions", "seed", "epsilon_decay_duration",
                    "device")


def agent_kwargs(algo: str, params: dict[str, Any], budget: int, num_players: int) -> dict[str, Any]:
    """Checked keyword arguments of ``algo``'s agent class (NFSP's include its inner DQN's)."""
    from open_spiel.python.pytorch import dqn, nfsp

    cls, extra = (dqn.DQN, ()) if algo == "openspiel-dqn" else (nfsp.NFSP, (dqn.DQN,))
    kwargs = dict(params)
    taken = sorted(set(kwargs) & set(SET_BY_BENCHMARK))
    if taken:
        raise ConfigError(f"hyperparameters.{algo}: {taken} are set by the benchmark: remove them")
    fraction = kwargs.pop("epsilon_decay_fraction", 0.5)
    if not isinstance(fraction, (int, float)) or isinstance(fraction, bool) or not 0 < fraction <= 1:
        raise ConfigError(f"hyperparameters.{algo}: epsilon_decay_fraction={fraction!r} is not allowed: "
                          f"use a float in (0, 1]")
    allowed = set()
    for klass in (cls, *extra):
        allowed |= {p for p in inspect.signature(klass.__init__).parameters if p not in ("self", "kwargs")}
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise ConfigError(f"hyperparameters.{algo}: unknown key(s) {unknown}: allowed are "
                          f"{sorted(allowed - set(SET_BY_BENCHMARK)) + ['epsilon_decay_fraction']}")
    kwargs["epsilon_decay_duration"] = max(1, int(fraction * budget / num_players))
    return kwargs


class OpenSpielTrainer(Trainer):
    """``openspiel-dqn`` or ``openspiel-nfsp``: one agent per seat, trained against each other."""

    def __init__(self, params: dict[str, Any], ctx: RunContext, budget: int, kind: str) -> None:
        super().__init__(params, ctx)
        import pyspiel
        from open_spiel.python import rl_environment
        from open_spiel.python.pytorch import dqn, nfsp

        import tt_env.openspiel  # noqa: F401  (registers python_three_thirteen)

        algo = f"openspiel-{kind}"
        cls = dqn.DQN if kind == "dqn" else nfsp.NFSP
        kwargs = agent_kwargs(algo, params, budget, ctx.num_players)
        seed_everything(ctx.seed)
        game = pyspiel.load_game("python_three_thirteen", {"num_players": ctx.num_players})
        self.env = rl_environment.Environment(
            game, observation_type=rl_environment.ObservationType.OBSERVATION,
            chance_event_sampler=rl_environment.ChanceEventSampler(seed=ctx.seed))
        size = self.env.observation_spec()["info_state"][0]
        num_actions = self.env.action_spec()["num_actions"]
        try:
            device = {"device": ctx.device} if kind == "dqn" else {}  # NFSP: CPU only (config.CPU_ONLY)
            self.agents = [cls(player_id=p, state_representation_size=size, num_actions=num_actions,
                               seed=ctx.seed * 100 + p, **device, **kwargs) for p in range(ctx.num_players)]
        except (TypeError, ValueError, AssertionError) as exc:  # OpenSpiel asserts on epsilon values
            raise ConfigError(f"hyperparameters.{algo}: {exc or type(exc).__name__}") from None
        self.kind = kind
        self.time_step: Any = None

    def train_until(self, steps: int) -> None:
        import time

        start = time.perf_counter()
        while self.steps < steps:
            if self.time_step is None:
                self.time_step = self.env.reset()
            if self.time_step.last():
                for agent in self.agents:  # every agent sees the end of the game (its last transition)
                    agent.step(self.time_step)
                self.time_step = None
                continue
            player = self.time_step.observations["current_player"]
            output = self.agents[player].step(self.time_step)
            self.time_step = self.env.step([output.action])
            self.steps += 1
        self.learn_seconds += time.perf_counter() - start

    def agent(self) -> ScoreAgent:
        import copy

        first = self.agents[0]
        net = first._q_network if self.kind == "dqn" else first._avg_network
        return ScoreAgent(torch_scores(copy.deepcopy(net).cpu().eval()), name=f"openspiel-{self.kind}")

