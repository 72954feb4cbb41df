"""TorchRL ``EnvBase`` on the batched engine: self-play over every seat, tensors on the device.

:class:`ThreeThirteenTorchRLEnv` (``batch_size=[B]``) steps ``B`` tables of
:class:`~tt_env.batch.game.BatchGame`. Each step takes one action per table for its seat to
move; the tensordict carries that seat's ``observation``, its ``action_mask`` (TorchRL's
``ActionMask`` transform reads it), the ``seat``, and ``reward`` for every seat (``(B, N)``, the
engine's rewards, so a self-play learner credits each seat). ``done``/``terminated`` mark the end
of a game; reset (TorchRL's partial resets included) starts new games. It imports TorchRL, so it
is loaded on its own: ``from tt_env.batch.torchrl_env import ThreeThirteenTorchRLEnv``.
"""

from __future__ import annotations

import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from ..engine.game import NUM_ACTIONS
from ..engine.rules import Rules
from ..env_checks import table_count
from ..observation import observation_bounds
from .devices import checked_device
from .game import BatchGame, TimeStep


class ThreeThirteenTorchRLEnv(EnvBase):
    """``num_tables`` self-play tables as a TorchRL environment (module docstring)."""

    def __init__(self, rules: Rules | None = None, num_tables: int = 1, device: str | torch.device = "cpu",
                 seed: int = 0, reward_mode: str = "relative", cuda_graphs: bool = False) -> None:
        """``cuda_graphs``: the engine's steps replayed as CUDA graphs (``BatchGame(cuda_graphs=True)``;
        CUDA only). Stepping every table keeps the engine in lockstep, which they need."""
        rules = rules or Rules()
        device = checked_device(device)
        num_tables = table_count(num_tables, "num_tables")
        super().__init__(device=device, batch_size=torch.Size([num_tables]))
        self.rules = rules
        self.cuda_graphs = cuda_graphs
        self.game = BatchGame(rules, num_tables, device=device, seed=seed, reward_mode=reward_mode, autoreset=False,
                              cuda_graphs=cuda_graphs)
        n = rules.num_players
        low, high = observation_bounds(n, rules.max_turns_per_round, rules.num_decks)
        shape = torch.Size([num_tables])
        dev = self.game.device
        self.observation_spec = Composite(
            observation=Bounded(low=torch.as_tensor(low, device=dev).expand(num_tables, -1),
                                high=torch.as_tensor(high, device=dev).expand(num_tables, -1),
                                shape=shape + (len(low),), dtype=torch.float32, device=dev),
            action_mask=Binary(n=NUM_ACTIONS, shape=shape + (NUM_ACTIONS,), dtype=torch.bool, device=dev),
            seat=Categorical(n=n, shape=shape, dtype=torch.int64, device=dev),
            shape=shape, device=dev)
        self.action_spec = Categorical(n=NUM_ACTIONS, shape=shape, dtype=torch.int64, device=dev)
        self.reward_spec = Unbounded(shape=shape + (n,), dtype=torch.float32, device=dev)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs) -> TensorDictBase:
        partial = None if tensordict is None else tensordict.get("_reset", None)
        if partial is None or self.game._mask is None:
            ts = self.game.reset()
        else:
            ts = self.game.reset_tables(partial.reshape(-1))
        return self._out(ts, with_reward=False)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        # finished tables wait for their reset and ignore their actions; stepping every table keeps
        # the engine's lockstep (BatchGame.step), which skips the work no table needs
        action = tensordict.get("action", None)
        if action is None:
            raise ValueError(f"the tensordict has no 'action': set td['action'] to a ({self.game.num_tables},) "
                             f"integer tensor of action ids, legal under td['action_mask'] (env.rand_action(td) "
                             f"draws legal ones)")
        ts = self.game.step(action.reshape(-1))
        return self._out(ts, with_reward=True)

    def _set_seed(self, seed: int | None) -> None:
        """TorchRL's ``set_seed``: the tables' next games are dealt from ``seed`` (None: 0)."""
        self.game = BatchGame(self.rules, self.game.num_tables, device=self.game.device,
                              seed=0 if seed is None else int(seed),
                              reward_mode=self.game.reward_mode, autoreset=False, cuda_graphs=self.cuda_graphs)

    def _out(self, ts: TimeStep, with_reward: bool) -> TensorDictBase:
        done = ts.game_over.unsqueeze(-1) if with_reward else torch.zeros_like(ts.game_over).unsqueeze(-1)
        out = {"observation": ts.observation, "action_mask": ts.action_mask, "seat": ts.seat,
               "done": done, "terminated": done.clone()}
        if with_reward:
            out["reward"] = ts.rewards
        # a masked action spec: its rand() (check_env_specs, random rollouts) draws legal actions only;
        # a finished table, which has none and ignores its action until its reset, allows any
        waiting = ~ts.action_mask.any(dim=-1, keepdim=True)
        self.action_spec.update_mask(ts.action_mask | waiting)
        return TensorDict(out, batch_size=self.batch_size, device=self.game.device)
