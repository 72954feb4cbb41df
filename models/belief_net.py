"""The belief network: per-card logits of each opponent's unknown cards, from one seat's observation.

Inputs are built per opponent (:func:`belief_inputs`), so one set of weights serves every
opponent of a table: suit-by-rank ``(4, 13)`` planes of what the seat knows (its hand, the
discard pile, the unseen copies, what this opponent took, discarded and passed over, how
recently it discarded each card, the same for the other opponents together, the wild rank,
card values) and a few numbers (round, phase, hand sizes, stock, turn, who went out, counts
of the opponent's moves). As in ``CardNet`` (``models/networks.py``), convolutions along the
ranks see runs and means over the suits see sets; a mean over the whole plane carries the
table's context. The output is one logit per card: the weight of each unseen copy in the
hand model of :mod:`models.belief_math`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from tt_env.engine.cards import card_value
from tt_env.observation import HAND_SCALE, get_layout

CARD_CHANNELS = 13
"""Planes per card: own hand, discard top, discard below, unseen copies, this opponent's taken,
discards, passed-over and recency, the other opponents' taken, discards and passed-over, wild,
value."""
NUM_SCALARS = 24
HISTORY_PIECES = ("opponent_passed", "opponent_recent")
"""Observation pieces (layout version 2) with the public history the network reads when present."""
_VALUES = np.array([card_value(c % 13 + 1) / 10.0 for c in range(52)], dtype=np.float32)


def _history(obs: np.ndarray, num_players: int, history: tuple[np.ndarray, np.ndarray] | None
             ) -> tuple[np.ndarray, np.ndarray]:
    """(passed, recent), each ``(B, opponents, 52)``: from the observation's history pieces, from
    ``history`` when given, else zeros."""
    lay = get_layout(num_players)
    opp = num_players - 1
    shape = (obs.shape[0], opp, 52)
    if history is not None:
        return np.asarray(history[0], dtype=np.float32).reshape(shape), \
            np.asarray(history[1], dtype=np.float32).reshape(shape)
    if all(name in lay.offsets for name in HISTORY_PIECES):
        return lay.view(obs, HISTORY_PIECES[0]).reshape(shape), lay.view(obs, HISTORY_PIECES[1]).reshape(shape)
    zeros = np.zeros(shape, dtype=np.float32)
    return zeros, zeros


def unseen_and_unknown(obs: np.ndarray, num_players: int, num_decks: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the unseen copies ``(B, 52)`` int and each opponent's unknown-card count ``(B, opponents)`` int."""
    lay = get_layout(num_players)
    opp = num_players - 1
    taken = lay.view(obs, "opponent_taken").reshape(-1, opp, 52)
    seen = lay.view(obs, "hand") + lay.view(obs, "discard_top") + lay.view(obs, "discard_below") + taken.sum(axis=1)
    unseen = np.maximum(num_decks - np.rint(seen).astype(np.int64), 0)
    sizes = np.rint(lay.view(obs, "hand_sizes")[:, 1:] * HAND_SCALE).astype(np.int64)
    unknown = np.maximum(sizes - np.rint(taken.sum(axis=2)).astype(np.int64), 0)
    return unseen, unknown


def belief_inputs(obs: np.ndarray, num_players: int, num_decks: int,
                  history: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Card planes ``(B * opponents, CARD_CHANNELS, 52)`` and scalars ``(B * opponents, NUM_SCALARS)``.

    Row ``b * opponents + k`` is observation ``b`` seen as a question about opponent ``k``
    (the observation's order: from the seat's left).
    """
    obs = np.asarray(obs, dtype=np.float32).reshape(-1, get_layout(num_players).size)
    lay = get_layout(num_players)
    b, opp = obs.shape[0], num_players - 1
    taken = lay.view(obs, "opponent_taken").reshape(b, opp, 52)
    discards = lay.view(obs, "opponent_discards").reshape(b, opp, 52)
    passed, recent = _history(obs, num_players, history)
    unseen, unknown = unseen_and_unknown(obs, num_players, num_decks)
    wild = lay.view(obs, "wild_rank")
    planes = np.zeros((b, opp, CARD_CHANNELS, 52), dtype=np.float32)
    planes[:, :, 0] = lay.view(obs, "hand")[:, None]
    planes[:, :, 1] = lay.view(obs, "discard_top")[:, None]
    planes[:, :, 2] = lay.view(obs, "discard_below")[:, None]
    planes[:, :, 3] = unseen[:, None]
    planes[:, :, 4] = taken
    planes[:, :, 5] = discards
    planes[:, :, 6] = passed
    planes[:, :, 7] = recent
    if opp > 1:
        planes[:, :, 8] = taken.sum(axis=1, keepdims=True) - taken
        planes[:, :, 9] = discards.sum(axis=1, keepdims=True) - discards
        planes[:, :, 10] = passed.sum(axis=1, keepdims=True) - passed
    planes[:, :, 11] = np.tile(wild, 4)[:, None]
    planes[:, :, 12] = _VALUES
    sizes = lay.view(obs, "hand_sizes")
    went = lay.view(obs, "went_out")
    scores = lay.view(obs, "scores")
    scalars = np.zeros((b, opp, NUM_SCALARS), dtype=np.float32)
    scalars[:, :, 0:11] = lay.view(obs, "round")[:, None]
    scalars[:, :, 11:13] = lay.view(obs, "phase")[:, None]
    scalars[:, :, 13] = went[:, 0:1]
    scalars[:, :, 14] = went[:, 1:]
    scalars[:, :, 15] = went[:, 1:].sum(axis=1, keepdims=True) - went[:, 1:]
    scalars[:, :, 16] = sizes[:, 0:1]
    scalars[:, :, 17] = unknown / HAND_SCALE
    scalars[:, :, 18] = lay.view(obs, "stock_size")
    scalars[:, :, 19] = lay.view(obs, "turn") * 10.0
    scalars[:, :, 20] = discards.sum(axis=2) / 20.0
    scalars[:, :, 21] = passed.sum(axis=2) / 20.0
    scalars[:, :, 22] = (scores[:, 1:] - scores[:, 0:1])
    scalars[:, :, 23] = unseen.sum(axis=1, keepdims=True) / 52.0
    return planes.reshape(b * opp, CARD_CHANNELS, 52), scalars.reshape(b * opp, NUM_SCALARS)


class _Block(nn.Module):
    """Runs (a convolution along ranks), sets (a mean over suits) and the table (a mean over cards), residual."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.runs = nn.Conv2d(width, width, kernel_size=(1, 5), padding=(0, 2))
        self.sets = nn.Linear(width, width)
        self.table = nn.Linear(width, width)

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # h: (R, W, 4, 13)
        sets = self.sets(h.mean(dim=2).transpose(1, 2)).transpose(1, 2).unsqueeze(2)  # (R, W, 1, 13)
        table = self.table(h.mean(dim=(2, 3))).unsqueeze(-1).unsqueeze(-1)  # (R, W, 1, 1)
        return h + torch.relu(self.runs(h) + sets + table)


class BeliefNet(nn.Module):
    """Per-card logits ``(R, 52)`` of the rows of :func:`belief_inputs`."""

    def __init__(self, num_players: int, width: int = 48, blocks: int = 3) -> None:
        super().__init__()
        if not isinstance(num_players, int) or not 2 <= num_players <= 8:
            raise ValueError(f"num_players={num_players!r} is not allowed: use an int from 2 to 8")
        for key, value in (("width", width), ("blocks", blocks)):
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 512:
                raise ValueError(f"{key}={value!r} is not allowed: use an int from 1 to 512")
        self.num_players, self.width, self.blocks_count = num_players, width, blocks
        self.embed = nn.Conv2d(CARD_CHANNELS, width, kernel_size=1)
        self.context = nn.Linear(NUM_SCALARS, width)
        self.blocks = nn.ModuleList(_Block(width) for _ in range(blocks))
        self.head = nn.Conv2d(width, 1, kernel_size=1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)  # an untrained net is the uniform belief

    def config(self) -> dict[str, Any]:
        return {"num_players": self.num_players, "width": self.width, "blocks": self.blocks_count}

    def forward(self, planes: torch.Tensor, scalars: torch.Tensor) -> torch.Tensor:
        h = self.embed(planes.view(-1, CARD_CHANNELS, 4, 13)) + self.context(scalars).unsqueeze(-1).unsqueeze(-1)
        h = torch.relu(h)
        for block in self.blocks:
            h = block(h)
        return self.head(h).view(-1, 52)
