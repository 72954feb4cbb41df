"""Batched agents: one call chooses an action for every table, from the same tensors.

Each agent's ``act(observation, action_mask) -> (B,) int64`` reads the observations and masks a
:class:`~tt_env.batch.game.TimeStep` holds (or any stack of them) and answers on their device.

- :class:`BatchGreedy` is ``greedy-v0`` (:mod:`tt_env.agents.greedy`): the same choices, tie
  breaks included, with the batched meld solver.
- :class:`BatchRandom` is ``random-v0``: uniform over the legal actions.
- :class:`BatchNetwork` wraps any policy network: one forward pass for all the tables.
- :func:`make_batch_agent` builds one from an agent name or a checkpoint path.
"""

from __future__ import annotations

import numbers
from typing import Any, Protocol

import numpy as np
import torch

from ..engine.game import DISCARD_BASE, DRAW_STOCK, NUM_ACTIONS, TAKE_DISCARD
from ..agents.registry import checked_rules
from ..engine.rules import Rules
from ..env_checks import checked_flag
from ..observation import get_layout, observation_size
from .devices import checked_device
from .kernels import c_nth_legal as _c_nth_legal
from .kernels import use_c
from .solver import least_penalty

MAX_DISTINCT = 14
"""Most distinct cards a hand holds in play (13 dealt in round 11, plus one drawn)."""


class BatchAgent(Protocol):
    """What the batched loops call: an action per row, on the rows' device."""

    name: str

    def act(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor: ...


def agent_seed(seed: Any) -> int:
    """``seed`` of a batched agent's generator as an int: 0..2**64-1 (what torch's generators take),
    numpy's ints too; ``ValueError`` naming it otherwise (torch's own error comes at the first draw)."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)) and 0 <= seed < 2 ** 64:
        return int(seed)
    raise ValueError(f"seed={seed!r} is not allowed: a batched agent's seed is an integer 0..2**64-1")


def agent_rules(rules: Any) -> Rules:
    """``rules`` of a batched agent (None: ``Rules()``); ``TypeError`` naming it unless a ``Rules``
    (:func:`tt_env.agents.registry.checked_rules`, as every agent's)."""
    return Rules() if rules is None else checked_rules(rules)


def checked_rows(observation: torch.Tensor, action_mask: torch.Tensor, num_players: int | None) -> None:
    """``ValueError`` unless ``action_mask`` is (B, 54) and ``observation`` (B, width), where the width
    is the ``num_players`` observation's (None: any width). Shapes only: no wait on the device."""
    width = None if num_players is None else observation_size(num_players)
    if not isinstance(action_mask, torch.Tensor) or action_mask.dim() != 2 or action_mask.shape[1] != NUM_ACTIONS:
        raise ValueError(f"action_mask must be a (B, {NUM_ACTIONS}) tensor (TimeStep.action_mask), got "
                         f"{_shape_of(action_mask)}")
    b = action_mask.shape[0]
    if not isinstance(observation, torch.Tensor) or observation.dim() != 2 or observation.shape[0] != b \
            or (width is not None and observation.shape[1] != width):
        wanted = f"({b}, {width}) tensor (the {num_players}-player observation)" if width else f"({b}, width) tensor"
        raise ValueError(f"observation must be a {wanted}, one row per row of action_mask, got "
                         f"{_shape_of(observation)}")


def _shape_of(value: Any) -> str:
    return f"shape {tuple(value.shape)}" if isinstance(value, torch.Tensor) else f"a {type(value).__name__}"


def masked_penalties(counts: torch.Tensor, wild: torch.Tensor, valid: torch.Tensor, rules: Rules) -> torch.Tensor:
    """Least penalties of the rows of ``counts`` (M, 52) where ``valid``; other rows get 0.

    On a CPU only the valid rows are solved; on other devices every row is (no wait on the host)."""
    if counts.device.type == "cpu":
        out = torch.zeros(counts.shape[0], dtype=torch.int64)
        rows = valid.nonzero().squeeze(1)  # host: CPU tensors only, where picking rows costs no wait
        if rows.numel():
            out[rows] = least_penalty(counts[rows], wild[rows], rules, check=False).long()
        return out
    return torch.where(valid, least_penalty(counts, wild, rules, check=False).long(), 0)


def card_values(rules: Rules, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(52,) value of each card unmelded as a natural, and (52,) its rank (1..13)."""
    ranks = torch.arange(52, device=device) % 13 + 1
    values = ranks.clamp(max=10)
    values = torch.where(ranks == 1, 15 if rules.aces_high else 1, values)
    return values, ranks


class BatchGreedy:
    """``greedy-v0`` for a batch: least penalty now (see :mod:`tt_env.agents.greedy`)."""

    name = "greedy-v0"

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = agent_rules(rules)

    def __repr__(self) -> str:
        return f"BatchGreedy({self.rules!r})"

    def act(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        checked_rows(observation, action_mask, self.rules.num_players)  # the layout read below is this count's
        lay = get_layout(self.rules.num_players)
        dev = observation.device
        b = observation.shape[0]
        rows = torch.arange(b, device=dev)
        hand = observation[:, lay.hand:lay.hand + 52].round().to(torch.int16)
        wild = observation[:, lay.wild_rank:lay.wild_rank + 13].argmax(dim=1) + 1
        top_block = observation[:, lay.discard_top:lay.discard_top + 52]
        has_top = top_block.amax(dim=1) > 0
        top = top_block.argmax(dim=1)
        mask = action_mask.bool()
        can_stock, can_take = mask[:, DRAW_STOCK], mask[:, TAKE_DISCARD]
        drawing = can_stock | can_take

        # draw: take the top when holding it and discarding best leaves less than the hand now
        weigh = drawing & can_stock & can_take & has_top
        held = hand > 0
        allowed = held
        if not self.rules.discard_drawn_discard:  # the top, once taken, may not be discarded
            allowed = held & (torch.arange(52, device=dev) != top.unsqueeze(1))
        slots, cards = _slots(allowed & weigh.unsqueeze(1))
        grown = hand.clone()
        grown[rows, top] += weigh.to(hand.dtype)
        after = masked_penalties(_without(grown, cards), wild.repeat_interleave(MAX_DISTINCT),
                                 slots.flatten(), self.rules).view(b, MAX_DISTINCT)
        best_after = torch.where(slots, after, 1 << 30).amin(dim=1)
        now = masked_penalties(hand, wild, weigh, self.rules)
        take = can_take & (~can_stock | (weigh & slots.any(dim=1) & (best_after < now)))

        # discard: the legal card leaving the least penalty; ties to high value, natural, high card
        legal = mask[:, DISCARD_BASE:]
        slots, cards = _slots(legal)
        left = masked_penalties(_without(hand, cards), wild.repeat_interleave(MAX_DISTINCT), slots.flatten(),
                                self.rules).view(b, MAX_DISTINCT)
        values, ranks = card_values(self.rules, dev)
        is_wild = ranks[cards] == wild.unsqueeze(1)
        value = torch.where(is_wild, ranks[cards].clamp(max=10), values[cards])
        key = left * 10_000 + (20 - value) * 200 + is_wild.long() * 100 + (51 - cards)
        best = cards[rows, torch.where(slots, key, 1 << 40).argmin(dim=1)]
        action = torch.where(drawing, torch.where(take, TAKE_DISCARD, DRAW_STOCK), DISCARD_BASE + best)
        return torch.where(mask.any(dim=1), action, 0)  # 0 for a row with no legal action, as BatchRandom


def _slots(allowed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(valid (B, K), card (B, K)): the first :data:`MAX_DISTINCT` cards of each row of ``allowed``."""
    order = torch.arange(52, 0, -1, device=allowed.device)
    score, cards = (allowed.long() * order).topk(MAX_DISTINCT, dim=1)
    return score > 0, cards


def _without(hand: torch.Tensor, cards: torch.Tensor) -> torch.Tensor:
    """(B*K, 52) each hand less one copy of each of its K slot cards (invalid slots: may go negative, unused)."""
    b = hand.shape[0]
    rows = torch.arange(b * MAX_DISTINCT, device=hand.device)
    out = hand.repeat_interleave(MAX_DISTINCT, dim=0).clone()
    out[rows, cards.flatten()] -= 1
    return out.clamp(min=0)


class BatchRandom:
    """``random-v0`` for a batch: uniform over each row's legal actions, from a seeded generator."""

    name = "random-v0"

    def __init__(self, rules: Rules | None = None, seed: int = 0, device: str | torch.device = "cpu") -> None:
        self.rules = agent_rules(rules)
        self.seed = agent_seed(seed)
        self.generator = torch.Generator(device=checked_device(device)).manual_seed(self.seed)

    def __repr__(self) -> str:
        return f"BatchRandom(seed={self.seed}, device={str(self.generator.device)!r})"

    def reseed(self, seed: int) -> None:
        """Restart the draws as from ``BatchRandom(seed=seed)`` (the vector env's ``reset(seed=)``)."""
        self.seed = agent_seed(seed)
        self.generator.manual_seed(self.seed)

    def act(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        """The ``u``-th legal action of each row, ``u`` uniform below its count (one draw per row)."""
        checked_rows(observation, action_mask, None)
        mask = action_mask.bool()
        u = torch.rand(mask.shape[0], generator=self.generator, device=mask.device)
        return nth_legal(mask, u)


def nth_legal(mask: torch.Tensor, u: torch.Tensor, *, backend: str = "auto") -> torch.Tensor:
    """(B,) int64: each row's ``k``-th legal action (from 0) of ``mask`` ((B, 54) bool), where ``k``
    is ``u`` ((B,) float32 in [0, 1)) times the row's count of legal actions, rounded down in
    float32; 0 for a row with none.

    ``backend``: ``"torch"`` the tensor code (any device), ``"c"`` one C loop over the rows
    (CPU tensors, the built extension; several times faster there than a cumulative count and a
    binary search), ``"auto"`` C where it can run. Both give the same actions."""
    if use_c(_c_nth_legal, mask.device, backend):
        actions = torch.empty(mask.shape[0], dtype=torch.int64)
        _c_nth_legal(mask.bool().contiguous().numpy(), u.float().contiguous().numpy(),  # host: CPU tensors
                     actions.numpy())  # host: CPU tensor, written in place
        return actions
    seen = mask.cumsum(dim=1, dtype=torch.int32)  # legal actions up to each column
    legal = seen[:, -1]
    pick = (u * legal).int().clamp(max=(legal - 1).clamp(min=0))
    # the first column where more than ``pick`` legal actions are seen (rows sorted: a binary search)
    action = torch.searchsorted(seen, (pick + 1).unsqueeze(1)).squeeze(1)
    return torch.where(legal > 0, action, 0)


class BatchNetwork:
    """A policy network acting for every row at once: one forward pass, masked argmax or sample.

    ``net`` is a :class:`models.networks.PolicyValueNet` (anything with ``as_input(obs, mask)`` and
    ``logits_and_value(x)``) or a plain callable ``net(obs, mask) -> logits``.
    """

    def __init__(self, net: Any, name: str = "network", greedy: bool = True, seed: int = 0) -> None:
        self.net = net
        self.name = name
        self.greedy = checked_flag(greedy, "greedy")
        self.generator: torch.Generator | None = None
        self.seed = agent_seed(seed)

    def __repr__(self) -> str:
        return f"BatchNetwork(name={self.name!r}, greedy={self.greedy}, seed={self.seed})"

    def reseed(self, seed: int) -> None:
        """Restart the samples as from ``seed`` (the vector env's ``reset(seed=)``; greedy: no draws)."""
        self.seed = agent_seed(seed)
        self.generator = None

    @torch.inference_mode()
    def act(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        checked_rows(observation, action_mask, None)  # the network checks its observation's width
        mask = action_mask.bool()
        if hasattr(self.net, "logits_and_value"):
            logits = self.net.logits_and_value(self.net.as_input(observation, mask))[0]
        else:
            logits = self.net(observation, mask)
        logits = torch.where(mask.to(logits.device), logits.float(), float("-inf"))
        if self.greedy:
            return logits.argmax(dim=1).to(observation.device)
        if self.generator is None:
            self.generator = torch.Generator(device=logits.device).manual_seed(self.seed)
        # a row with no legal action (a finished table, autoreset=False) samples from even odds and
        # plays 0, as the greedy argmax and BatchRandom do: no NaN, no wait on the device
        some = mask.any(dim=1, keepdim=True).to(logits.device)
        probs = torch.where(some, logits, 0.0).softmax(dim=1)
        sampled = torch.multinomial(probs, 1, generator=self.generator)
        return torch.where(some, sampled, 0).squeeze(1).to(observation.device)


def make_batch_agent(spec: str, rules: Rules, device: str | torch.device = "cpu", *, seed: int = 0,
                     greedy: bool = True) -> BatchAgent:
    """A batched agent from ``"greedy-v0"``, ``"random-v0"`` or a network agent name or checkpoint path.

    Networks come from the agent registry (:func:`tt_env.agents.make_agent`, which loads
    checkpoints safely) and are moved to ``device``. ``device``, ``seed`` and ``greedy`` are
    checked whatever the agent (greedy-v0 uses none of them)."""
    device = checked_device(device)
    seed = agent_seed(seed)
    greedy = checked_flag(greedy, "greedy")
    if spec == "greedy-v0":
        return BatchGreedy(rules)
    if spec == "random-v0":
        return BatchRandom(rules, seed=seed, device=device)
    from ..agents import make_agent

    agent = make_agent(spec, rules)
    net = getattr(agent, "net", None)
    if net is None:
        raise ValueError(f"agent {spec!r} has no batched version: use greedy-v0, random-v0, or a network agent "
                         f"(a shipped checkpoint name or a checkpoint path)")
    return BatchNetwork(net.to(device), name=getattr(agent, "name", spec), greedy=greedy, seed=seed)
