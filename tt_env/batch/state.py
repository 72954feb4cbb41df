"""The batched game state: one dataclass of fixed-shape tensors, table first.

Per table it holds what :class:`tt_env.engine.game.GameState` holds, as counts where order
carries no information (hands, known-taken cards, discards, passed-over cards) and as ordered
card arrays where it does (the stock, whose top is the last of its ``stock_len`` cards, and the
discard pile, whose top is the last of its ``pile_len`` cards). ``-1`` stands for "nobody" /
"no card" in ``went_out`` and ``taken``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

COUNT_DTYPE = torch.float32
"""dtype of every count of cards: float32, the observation's own dtype, so that the observation
is built from the counts without a conversion (counts are at most 208, exact in float32)."""


@dataclass
class BatchState:
    """Every table's game, as tensors on one device (B tables, N seats, S cards in the shoe)."""

    hands: torch.Tensor          # (B, N, 52) copies of each card held
    stock: torch.Tensor          # (B, S) cards; the first stock_len are the stock, top last
    stock_len: torch.Tensor      # (B,)
    pile: torch.Tensor           # (B, S) cards; the first pile_len are the discard pile, top last
    pile_len: torch.Tensor       # (B,)
    pile_counts: torch.Tensor    # (B, 52) copies of each card in the discard pile
    known_taken: torch.Tensor    # (B, N, 52) taken from the discard pile this round and still held
    discards: torch.Tensor       # (B, N, 52) discarded this round
    passed: torch.Tensor         # (B, N, 52) top discards passed over this round
    round_index: torch.Tensor    # (B,) index into rules.rounds
    dealer: torch.Tensor         # (B,)
    current: torch.Tensor        # (B,) seat to move
    phase: torch.Tensor          # (B,) 0 draw, 1 discard
    scores: torch.Tensor         # (B, N) totals of the finished rounds
    went_out: torch.Tensor       # (B,) seat that went out this round, -1 for nobody
    turn: torch.Tensor           # (B,) turns played this round
    taken: torch.Tensor          # (B,) card just taken from the discard pile this turn, -1 for none
    game_over: torch.Tensor      # (B,) bool
    counter: torch.Tensor        # (B,) draws taken from the table's random stream

    @classmethod
    def empty(cls, num_tables: int, num_players: int, shoe_size: int, device: torch.device) -> BatchState:
        """All-zero tables (dealt by the caller)."""
        b, n = num_tables, num_players

        def zeros(*shape: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.zeros(shape, dtype=dtype, device=device)

        return cls(hands=zeros(b, n, 52, dtype=COUNT_DTYPE), stock=zeros(b, shoe_size), stock_len=zeros(b),
                   pile=zeros(b, shoe_size), pile_len=zeros(b), pile_counts=zeros(b, 52, dtype=COUNT_DTYPE),
                   known_taken=zeros(b, n, 52, dtype=COUNT_DTYPE), discards=zeros(b, n, 52, dtype=COUNT_DTYPE),
                   passed=zeros(b, n, 52, dtype=COUNT_DTYPE), round_index=zeros(b), dealer=zeros(b),
                   current=zeros(b), phase=zeros(b), scores=zeros(b, n), went_out=zeros(b) - 1,
                   turn=zeros(b), taken=zeros(b) - 1, game_over=zeros(b, dtype=torch.bool), counter=zeros(b))

    def fields(self) -> dict[str, torch.Tensor]:
        """Name -> tensor of every field."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def rows(self, index: torch.Tensor) -> BatchState:
        """The tables at ``index`` (copies)."""
        return BatchState(**{k: v[index] for k, v in self.fields().items()})

    def rows_on_read(self, index: torch.Tensor) -> RowsOnRead:
        """The tables at ``index``, each field gathered when first read: see :class:`RowsOnRead`."""
        return RowsOnRead(self, index)

    def shared(self) -> BatchState:
        """A new state holding the same tensors (no copy): for code that replaces fields and never
        writes into them, whose result :meth:`select` then takes by mask."""
        return BatchState(**self.fields())

    def select(self, mask: torch.Tensor, new: BatchState) -> None:
        """Take ``new``'s tables where ``mask`` is True (every field; same batch size; a field
        that is still this state's own tensor is left as it is)."""
        for name, value in new.fields().items():
            old = getattr(self, name)
            if value is old:
                continue
            shaped = mask.view(-1, *([1] * (old.dim() - 1)))
            setattr(self, name, torch.where(shaped, value, old))

    def memory_bytes(self) -> int:
        """Bytes the state's tensors hold."""
        return sum(t.numel() * t.element_size() for t in self.fields().values())


FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(BatchState))
COUNT_FIELDS = frozenset({"hands", "pile_counts", "known_taken", "discards", "passed"})
"""The fields that hold counts of cards (:data:`COUNT_DTYPE`)."""


def field_dtype(name: str) -> torch.dtype:
    """The dtype of the field ``name`` in the engine's own states (as :meth:`BatchState.empty` makes them)."""
    return COUNT_DTYPE if name in COUNT_FIELDS else torch.bool if name == "game_over" else torch.int64
"""Names of the fields of a :class:`BatchState`."""


class RowsOnRead(BatchState):
    """Some tables of a state for code that replaces the fields it changes and never writes into
    them (the contract of ``BatchGame._on_rows``): a field is gathered from the source on its first
    read, and :meth:`write_back` writes back only the fields that were replaced.

    Why: a round's end or a reshuffle touches a few hundred tables scattered over a large batch,
    and gathering a row is bound by memory latency, not bandwidth. Copying all 19 fields out and
    back cost a CPU step at 16,384 tables about as much as the scoring and the deal themselves.
    """

    def __init__(self, source: BatchState, index: torch.Tensor) -> None:  # not the dataclass's: fields come on read
        object.__setattr__(self, "_source", source)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_replaced", set())

    def __getattr__(self, name: str) -> torch.Tensor:
        # called only for what the instance does not hold yet: a field not read or replaced so far
        if name not in FIELD_NAMES:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = getattr(self._source, name).index_select(0, self._index)
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: torch.Tensor) -> None:
        if name not in FIELD_NAMES:
            raise AttributeError(f"{name!r} is not a field of BatchState: its fields are {sorted(FIELD_NAMES)}")
        self._replaced.add(name)
        object.__setattr__(self, name, value)

    def write_back(self) -> None:
        """Write the replaced fields over the source's tables at the index (in index order)."""
        for name in self._replaced:
            getattr(self._source, name).index_copy_(0, self._index, self.__dict__[name])
