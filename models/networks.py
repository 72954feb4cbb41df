"""Policy-value networks: ``(observation, action_mask) -> masked action distribution, value``.

Two architectures, both usable for any player count (the observation layout is
``tt_env.observation``, 107 * N + 80 floats):

* :class:`MLPPolicy`: separate actor and critic MLPs (Tanh) on the flat observation. Its
  ``state_dict`` keys (``actor.0.weight`` ... ``critic.4.bias``) match SB3's
  ``MlpPolicy`` layers, and the RLlib module (``training/rllib/masking.py``) wraps it directly.
* :class:`CardNet`: uses the card structure. Every 52-card block of the observation becomes
  a suit-by-rank ``(4, 13)`` plane; convolutions along the rank axis see runs, means over the
  suit axis see sets, and the discard logits come out per card from the same weights, so
  what it learns about one card carries over to the others. Optional meld-solver features
  (:mod:`models.features`) add the exact penalty left by each discard; with them, two learned
  direct paths (weights started at 1) make a discard less likely by one logit per
  ``PRIOR_UNIT`` points it leaves over the best discard, and taking the top discard more likely
  by one logit per ``PRIOR_UNIT`` points it saves, so training starts from a soft one-step
  greedy player and learns what that misses (draw odds, the opponent's needs, the score);
  with ``solver_shortcuts=False`` those paths start at 0 and the start knows nothing of greedy
  play. ``lookahead_features`` adds pure solver quantities one draw ahead
  (:mod:`models.lookahead_features`: the expected penalty after the next draw of each
  discard, the chance to go out with it, the same for the stock draw), no scripted agent in
  them, and two direct paths on them started at 0.

The interface is CleanRL's ``get_action_and_value(obs, mask, action=None) -> (action,
logprob, entropy, value)``; the mask lives in :class:`MaskedCategorical`. ``obs`` may be the
raw observation or, to compute the solver features once per step during training, the
output of :meth:`PolicyValueNet.preprocess`.
"""

from __future__ import annotations

import abc
import inspect
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from tt_env.engine.rules import MAX_DECKS, Rules
from tt_env.observation.sizes import NUM_ACTIONS, observation_size

from .batch_features import solver_features_torch
from .distributions import MaskedCategorical
from .expert_features import EXPERT_SCALE, NUM_EXPERT_PLANES, NUM_EXPERT_SCALARS, ExpertFeaturizer
from .features import (NUM_SOLVER_PLANES, NUM_SOLVER_SCALARS, PENALTY_SCALE, VALUE_PLANE, card_blocks,
                       solver_features, split_observation)
from .lookahead_features import NUM_LOOKAHEAD_PLANES, NUM_LOOKAHEAD_SCALARS
from .lookahead_features import lookahead_features as one_draw_lookahead

PRIOR_UNIT = 5.0
"""Points of penalty per unit of logit on CardNet's direct solver paths, at their initial weight."""
EXPERT_UNIT = 2.0
"""Points of expert-v0's score per unit of logit on CardNet's direct expert paths, at their initial weight."""
GO_OUT_LOGITS = 20.0
"""Logits added, at the initial weight, to a discard that goes out (expert features)."""


def layer_init(layer: nn.Module, std: float = 2 ** 0.5, bias: float = 0.0) -> nn.Module:
    """Orthogonal weights with gain ``std`` and constant bias (CleanRL)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class PolicyValueNet(nn.Module, metaclass=abc.ABCMeta):
    """Base class: input handling, the masked distribution and the rebuild config."""

    obs_size: int
    input_size: int

    def __init__(self, num_players: int) -> None:
        super().__init__()
        if not isinstance(num_players, int) or not 2 <= num_players <= 8:
            raise ValueError(f"num_players={num_players!r} is not allowed: use an int from 2 to 8")
        self.num_players = num_players
        self.obs_size = observation_size(num_players)
        self.input_size = self.obs_size
        self.num_actions = NUM_ACTIONS

    # -- each network defines these -----------------------------------------------------------
    @abc.abstractmethod
    def logits_and_value(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked logits ``(B, 54)`` and values ``(B,)`` of preprocessed inputs."""

    @abc.abstractmethod
    def config(self) -> dict[str, Any]:
        """Constructor keyword arguments that rebuild this network."""

    # -- shared ------------------------------------------------------------------------------
    def preprocess(self, obs: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Network input for a batch of raw observations (``(B, obs_size)`` float32).

        ``mask`` (``(B, 54)``, the legal actions) is for networks whose features depend on
        what is legal; the others ignore it.
        """
        return np.asarray(obs, dtype=np.float32).reshape(-1, self.obs_size)

    def preprocess_tensor(self, obs: torch.Tensor) -> torch.Tensor | None:
        """:meth:`preprocess` of a ``(B, obs_size)`` float32 tensor on its own device, or None where
        this network's features are only computed on numpy (then :meth:`as_input` goes through numpy)."""
        return None

    def as_input(self, obs: np.ndarray | torch.Tensor, mask: np.ndarray | torch.Tensor | None = None
                 ) -> torch.Tensor:
        """A float tensor ``(B, input_size)`` from raw observations (with their masks) or preprocessed inputs."""
        device = next(self.parameters()).device
        if isinstance(obs, torch.Tensor):
            if obs.dim() == 1:
                obs = obs.unsqueeze(0)
            if obs.shape[-1] == self.input_size:
                return obs.to(device=device, dtype=torch.float32)
            if obs.shape[-1] == self.obs_size:
                flat = obs.detach().to(device=device, dtype=torch.float32).reshape(-1, self.obs_size)
                x = self.preprocess_tensor(flat)
                if x is not None:
                    return x
            obs = obs.detach().cpu().numpy()
        arr = np.asarray(obs, dtype=np.float32)
        if arr.ndim == 1:
            arr = arr[None]
        if arr.shape[-1] == self.obs_size:
            if isinstance(mask, torch.Tensor):
                mask = mask.detach().cpu().numpy()
            arr = self.preprocess(arr, None if mask is None else np.asarray(mask).reshape(len(arr), -1))
        elif arr.shape[-1] != self.input_size:
            raise ValueError(f"observation of length {arr.shape[-1]} does not fit this network: it takes "
                             f"{self.num_players}-player observations of length {self.obs_size}")
        return torch.as_tensor(arr, device=device)

    def forward(self, obs: np.ndarray | torch.Tensor, mask: np.ndarray | torch.Tensor
                ) -> tuple[MaskedCategorical, torch.Tensor]:
        """The masked action distribution and the value of each observation."""
        logits, value = self.logits_and_value(self.as_input(obs, mask))
        mask_t = torch.as_tensor(np.asarray(mask) if not isinstance(mask, torch.Tensor) else mask,
                                 device=logits.device).reshape(logits.shape)
        return MaskedCategorical(logits, mask_t), value

    def value_head_parameters(self) -> list[nn.Parameter]:
        """The parameters only the value depends on (``critic.*``, ``value_head.*``): what a critic
        warm-up trains while the policy stays exactly as it is."""
        return [p for name, p in self.named_parameters() if name.startswith(("critic.", "value_head."))]

    def get_value(self, obs: np.ndarray | torch.Tensor, mask: np.ndarray | torch.Tensor | None = None
                  ) -> torch.Tensor:
        return self.logits_and_value(self.as_input(obs, mask))[1]

    def get_action_and_value(self, obs: np.ndarray | torch.Tensor, mask: np.ndarray | torch.Tensor,
                             action: torch.Tensor | None = None, *, deterministic: bool = False,
                             generator: torch.Generator | None = None
                             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(action, logprob, entropy, value)``; samples (or takes the mode) when ``action`` is None."""
        dist, value = self(obs, mask)
        if action is None:
            action = dist.mode() if deterministic else dist.sample(generator)
        return action, dist.log_prob(action), dist.entropy(), value


class RowwiseLinear(nn.Linear):
    """A linear layer whose every output row is computed on its own: a product and a sum over the
    inputs (same parameters and ``state_dict`` keys as :class:`torch.nn.Linear`).

    For layers with very few outputs, CPU matrix products may round a row by its position in
    the batch (with torch 2.13 on Intel Sapphire Rapids, a 64-input, 2-output layer did in every
    8-row pass: ``models/batch_policy.py`` then had to run one row per pass). A reduction over
    each row's inputs does not: its result is bitwise the same in a batch of any size, at any
    position (``tests/test_eval_batch.py``). Used for CardNet's 2-logit draw head.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.unsqueeze(-2) * self.weight).sum(-1) + self.bias


class PointwiseConv2d(nn.Conv2d):
    """A 1x1 convolution computed as one matrix product over the channels (same parameters and
    ``state_dict`` keys as :class:`torch.nn.Conv2d` with ``kernel_size=1``).

    CPU convolution kernels pay a fixed cost per call that a 1x1 kernel over a 4x13 card grid
    never earns back: as an ``einsum`` CardNet's training step on 256 rows is about a quarter
    faster on 2 threads (``benchmarks/bench_training.py``).
    """

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__(in_channels, out_channels, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight.view(self.out_channels, self.in_channels)
        return torch.einsum("bchw,oc->bohw", x, weight) + self.bias.view(1, -1, 1, 1)


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer and not a bool (``True`` would build a layer of width 1)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _mlp(n_in: int, hidden: Sequence[int], n_out: int, out_std: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [layer_init(nn.Linear(n_in, h)), nn.Tanh()]
        n_in = h
    layers.append(layer_init(nn.Linear(n_in, n_out), std=out_std))
    return nn.Sequential(*layers)


class MLPPolicy(PolicyValueNet):
    """Separate actor and critic MLPs (Tanh) on the flat observation."""

    def __init__(self, num_players: int = 2, hidden_sizes: Sequence[int] = (256, 256)) -> None:
        super().__init__(num_players)
        if (not isinstance(hidden_sizes, (list, tuple)) or not hidden_sizes
                or not all(is_int(h) and h >= 1 for h in hidden_sizes)):
            raise ValueError(f"hidden_sizes={hidden_sizes!r} is not allowed: use a non-empty list of "
                             f"positive ints")
        self.hidden_sizes = [int(h) for h in hidden_sizes]
        self.actor = _mlp(self.obs_size, self.hidden_sizes, NUM_ACTIONS, out_std=0.01)
        self.critic = _mlp(self.obs_size, self.hidden_sizes, 1, out_std=1.0)

    def logits_and_value(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.actor(x), self.critic(x).squeeze(-1)

    def config(self) -> dict[str, Any]:
        return {"num_players": self.num_players, "hidden_sizes": list(self.hidden_sizes)}


class _CardBlock(nn.Module):
    """Residual block: convolution along ranks (runs) + mixing of the suit mean (sets)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.run = layer_init(nn.Conv2d(channels, channels, (1, 5), padding=(0, 2)))
        self.set = layer_init(PointwiseConv2d(channels, channels))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + torch.relu(self.run(h) + self.set(h.mean(dim=2, keepdim=True)))


class CardNet(PolicyValueNet):
    """Suit-by-rank convolutional policy-value net with per-card discard logits."""

    def __init__(self, num_players: int = 2, channels: int = 32, blocks: int = 0, hidden: int = 64,
                 solver_features: bool = True, aces_high: bool = False,
                 meld_needs_natural: bool = False, expert_features: bool = False,
                 exact_last_turn: bool = False, lookahead_features: bool = False,
                 solver_shortcuts: bool = True, decks: int | None = None) -> None:
        super().__init__(num_players)
        if decks is not None and (isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS):
            raise ValueError(f"decks={decks!r} is not allowed: use None (the automatic count for "
                             f"{num_players} players) or an int from 1 to {MAX_DECKS}")
        self.decks = decks
        for name, value in (("channels", channels), ("blocks", blocks), ("hidden", hidden)):
            if not is_int(value) or value < (0 if name == "blocks" else 1):
                raise ValueError(f"{name}={value!r} is not allowed: use "
                                 f"{'an int from 0' if name == 'blocks' else 'a positive int'}")
        flags = {"solver_features": solver_features, "aces_high": aces_high, "meld_needs_natural": meld_needs_natural,
                 "expert_features": expert_features, "exact_last_turn": exact_last_turn,
                 "lookahead_features": lookahead_features, "solver_shortcuts": solver_shortcuts}
        for name, flag in flags.items():
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name}={flag!r} is not allowed: use true or false")
        self.channels, self.blocks, self.hidden = int(channels), int(blocks), int(hidden)
        self.solver_features = bool(solver_features)
        self.aces_high, self.meld_needs_natural = bool(aces_high), bool(meld_needs_natural)
        self.expert_features = bool(expert_features)
        if self.expert_features and not self.solver_features:
            raise ValueError("expert_features=True needs solver_features=True")
        self.exact_last_turn = bool(exact_last_turn)
        if self.exact_last_turn and not self.expert_features:
            raise ValueError("exact_last_turn=True needs expert_features=True")
        self.lookahead_features = bool(lookahead_features)
        if self.lookahead_features and not self.solver_features:
            raise ValueError("lookahead_features=True needs solver_features=True")
        self.solver_shortcuts = bool(solver_shortcuts)
        # the copies of each card in play: the lookahead's unseen-card weights and the batched
        # solver's bound read it (the rules' deck count where it is not the automatic one)
        self.num_decks = Rules(num_players=num_players).num_decks if decks is None else decks
        k = card_blocks(num_players)
        self.num_globals = self.obs_size - 52 * k
        extra_planes = NUM_SOLVER_PLANES if self.solver_features else 0
        extra_scalars = NUM_SOLVER_SCALARS if self.solver_features else 0
        if self.expert_features:
            extra_planes += NUM_EXPERT_PLANES
            extra_scalars += NUM_EXPERT_SCALARS
            self._expert = ExpertFeaturizer(num_players, self.aces_high, self.meld_needs_natural,
                                            self.exact_last_turn)
        if self.lookahead_features:
            extra_planes += NUM_LOOKAHEAD_PLANES
            extra_scalars += NUM_LOOKAHEAD_SCALARS
        self.input_size = self.obs_size + 52 * extra_planes + extra_scalars
        self.in_planes = k + 2 + extra_planes  # blocks, wild-rank plane, card-value plane, solver
        g = self.num_globals + extra_scalars
        self.register_buffer("value_plane", torch.as_tensor(VALUE_PLANE).view(1, 1, 4, 13), persistent=False)
        self.embed = layer_init(nn.Conv2d(self.in_planes, channels, (1, 5), padding=(0, 2)))
        self.embed_set = layer_init(PointwiseConv2d(self.in_planes, channels))
        self.rank_bias = nn.Parameter(torch.zeros(1, channels, 1, 13))
        self.glob = layer_init(nn.Linear(g, channels))
        self.trunk = nn.Sequential(*[_CardBlock(channels) for _ in range(blocks)])
        self.mix = layer_init(PointwiseConv2d(channels, channels))  # per-card layer, cheap next to the blocks
        self.card_head = layer_init(PointwiseConv2d(channels + self.in_planes, 1), std=0.01)
        self.draw_head = nn.Sequential(layer_init(nn.Linear(2 * channels + g, hidden)), nn.ReLU(),
                                       layer_init(RowwiseLinear(hidden, 2), std=0.01))
        self.value_head = nn.Sequential(layer_init(nn.Linear(2 * channels + g, hidden)), nn.ReLU(),
                                        layer_init(nn.Linear(hidden, 1), std=1.0))
        if self.solver_features:
            # learned weights of two direct paths, started at 1: the logit of discarding a card falls
            # with the penalty it leaves (relative to the best discard), and the logit of taking the
            # discard rises with what taking it saves, both in units of PRIOR_UNIT points
            # (started at 0 with expert features, whose paths then decide alone: expert-v0's play)
            # (and at 0 without solver_shortcuts: nothing of the greedy player in the start)
            start_at = 0.0 if self.expert_features or not self.solver_shortcuts else 1.0
            self.prior = nn.Parameter(torch.full((2,), start_at))
        if self.expert_features:
            # three more, started at 1: discard logits fall with expert-v0's relative score (in
            # EXPERT_UNIT points), a discard that goes out gains GO_OUT_LOGITS, and taking the
            # discard gains by how much better the expert values it than the stock
            self.expert_prior = nn.Parameter(torch.ones(3))
        if self.lookahead_features:
            # two more, started at 0 (learned from nothing): discard logits fall with the expected
            # penalty after the next draw relative to the best discard, and taking the discard
            # gains by how much its penalty is below a stock draw's expected one, in PRIOR_UNIT
            # points per logit once the weight reaches 1 (a direct path learns in about 1 /
            # learning_rate optimiser steps what a 0.01-scaled output layer takes far longer to)
            self.lookahead_prior = nn.Parameter(torch.zeros(2))

    def preprocess(self, obs: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        obs = super().preprocess(obs)
        if not self.solver_features:
            return obs
        planes, scalars = solver_features(obs, self.num_players, self.aces_high, self.meld_needs_natural)
        parts = [obs, planes.reshape(len(obs), -1)]
        tail = [scalars]
        if self.expert_features:
            e_planes, e_scalars = self._expert(obs, mask)
            parts.append(e_planes.reshape(len(obs), -1))
            tail.append(e_scalars)
        if self.lookahead_features:
            l_planes, l_scalars = one_draw_lookahead(obs, mask, self.num_players, self.num_decks, self.aces_high,
                                                     self.meld_needs_natural)
            parts.append(l_planes.reshape(len(obs), -1))
            tail.append(l_scalars)
        return np.concatenate(parts + tail, axis=1)

    def preprocess_tensor(self, obs: torch.Tensor) -> torch.Tensor | None:
        """The solver features computed on ``obs``'s device (:mod:`models.batch_features`), bitwise
        :meth:`preprocess`'s; None with expert or lookahead features, which are numpy only, and on a
        CPU, where numpy reads the tensor in place and the scalar solver per hand is the faster
        (a 150-row batch of 2-player play: 1.0 ms against 1.5 ms for the batched solve)."""
        if self.expert_features or self.lookahead_features or obs.device.type == "cpu":
            return None
        if not self.solver_features:
            return obs
        planes, scalars = solver_features_torch(obs, self.num_players, self.aces_high, self.meld_needs_natural,
                                                decks=self.num_decks)
        return torch.cat([obs, planes.reshape(len(obs), -1), scalars], dim=1)

    def logits_and_value(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch = x.shape[0]
        obs = x[:, :self.obs_size]
        planes, glob = split_observation(obs, self.num_players)
        wild = glob[:, :13]  # the wild-rank one-hot opens the global features
        parts = [planes, wild.view(batch, 1, 1, 13).expand(batch, 1, 4, 13),
                 self.value_plane.expand(batch, 1, 4, 13)]
        n_planes = (NUM_SOLVER_PLANES + (NUM_EXPERT_PLANES if self.expert_features else 0)
                    + (NUM_LOOKAHEAD_PLANES if self.lookahead_features else 0))
        if self.solver_features:
            extra = x[:, self.obs_size:]
            parts.append(extra[:, :52 * n_planes].reshape(batch, n_planes, 4, 13))
            glob = torch.cat([glob, extra[:, 52 * n_planes:]], dim=1)
        inp = torch.cat(parts, dim=1)
        if inp.device.type == "cpu":
            # channels-last planes: CPU (oneDNN) convolutions then skip a layout reorder each way,
            # about a fifth off a training step; the values are the same up to float rounding
            inp = inp.contiguous(memory_format=torch.channels_last)
        h = self.embed(inp) + self.embed_set(inp.mean(dim=2, keepdim=True)) + self.rank_bias
        h = torch.relu(h + self.glob(glob).view(batch, -1, 1, 1))
        h = self.trunk(h)
        h = torch.relu(self.mix(h))
        card_logits = self.card_head(torch.cat([h, inp], dim=1)).view(batch, 52)
        pooled = torch.cat([h.mean(dim=(2, 3)), h.amax(dim=(2, 3)), glob], dim=1)
        draw_logits = self.draw_head(pooled)
        if self.solver_features:
            scale = PENALTY_SCALE / PRIOR_UNIT
            relative = extra[:, 52 * (NUM_SOLVER_PLANES - 1):52 * NUM_SOLVER_PLANES]
            card_logits = card_logits - self.prior[0] * scale * relative
            scalars = extra[:, 52 * n_planes:]
            saving = scalars[:, 2:3]
            take = self.prior[1] * scale * saving
            if self.expert_features:
                base = 52 * NUM_SOLVER_PLANES
                e_scale = EXPERT_SCALE / EXPERT_UNIT
                card_logits = (card_logits - self.expert_prior[0] * e_scale * extra[:, base + 52:base + 104]
                               + self.expert_prior[1] * GO_OUT_LOGITS * extra[:, base + 104:base + 156])
                take = take + self.expert_prior[2] * e_scale * scalars[:, NUM_SOLVER_SCALARS:NUM_SOLVER_SCALARS + 1]
            if self.lookahead_features:
                base = 52 * (n_planes - NUM_LOOKAHEAD_PLANES)
                first = NUM_SOLVER_SCALARS + (NUM_EXPERT_SCALARS if self.expert_features else 0)
                card_logits = card_logits - self.lookahead_prior[0] * scale * extra[:, base + 52:base + 104]
                take = take - self.lookahead_prior[1] * scale * scalars[:, first + 1:first + 2]
            draw_logits = draw_logits + torch.cat([torch.zeros_like(take), take], dim=1)
        logits = torch.cat([draw_logits, card_logits], dim=1)
        return logits, self.value_head(pooled).squeeze(-1)

    def config(self) -> dict[str, Any]:
        return {"num_players": self.num_players, "channels": self.channels, "blocks": self.blocks,
                "hidden": self.hidden, "solver_features": self.solver_features, "aces_high": self.aces_high,
                "meld_needs_natural": self.meld_needs_natural, "expert_features": self.expert_features,
                "exact_last_turn": self.exact_last_turn, "lookahead_features": self.lookahead_features,
                "solver_shortcuts": self.solver_shortcuts, "decks": self.decks}

    def play_under(self, rules: Rules) -> None:
        """Compute the features for the game ``rules`` a loaded network plays (its turn limit, decks
        and ``discard_drawn_discard`` may differ from those it was built for, its scoring not):
        the expert's and the lookahead's inputs then describe the game on the table."""
        if self.expert_features:
            self._expert = ExpertFeaturizer(self.num_players, self.aces_high, self.meld_needs_natural,
                                            self.exact_last_turn, rules=rules)
        self.num_decks = rules.num_decks

    @staticmethod
    def rule_kwargs(rules: Rules) -> dict[str, Any]:
        """The constructor arguments that follow the game's rules: the ace rule, ``meld_needs_natural``
        and ``decks`` (None where the rules play the automatic count of a full game)."""
        auto = Rules(num_players=rules.num_players).num_decks
        return {"aces_high": rules.aces_high, "meld_needs_natural": rules.meld_needs_natural,
                "decks": None if rules.num_decks == auto else rules.num_decks}


NETWORKS: dict[str, type[PolicyValueNet]] = {"mlp": MLPPolicy, "cardnet": CardNet}
_CLASS_NAMES = {cls.__name__: name for name, cls in NETWORKS.items()}


def build_network(name: str, **kwargs: Any) -> PolicyValueNet:
    """A network by registry name (``"mlp"``, ``"cardnet"``) or class name, with its keyword arguments."""
    key = _CLASS_NAMES.get(name, name)
    if key not in NETWORKS:
        raise ValueError(f"unknown network {name!r}: use one of {sorted(NETWORKS)}")
    cls = NETWORKS[key]
    allowed = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(kwargs) - set(allowed), key=repr)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for network {key!r}: allowed are {allowed}")
    return cls(**kwargs)
