"""A step's moves, for every table at once: the draws and discards, then the end of each turn.

:func:`apply_moves` plays each live table's action (a draw from the stock, passing over the top
discard; the top discard taken; or a discard); :func:`end_turns`, told which discards went out,
records it, ends the rounds that end and passes the turn on elsewhere.
Between them the engine asks the meld solver (:meth:`tt_env.batch.BatchGame.step`).

Three backends change the state the same way: the tensor code below (``"torch"``: any device,
the reference); on a CPU, one C loop each (``"c"``, ``tt_env/batch/_kernels_moves.c``; a few
dozen small tensor operations per step cost a CPU more than the whole loop); and one fused
Triton kernel each (``"triton"``, :mod:`tt_env.batch.moves_triton`: one launch on a GPU instead
of dozens). ``"auto"`` takes C for CPU tensors when the extension is built, Triton for CUDA
tensors when it is installed, else the tensor code. The C loops and the kernels write the
state's tensors in place; the tensor code replaces some fields (all leave the same values).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from ..engine.game import DISCARD_BASE
from . import moves_triton
from .kernels import c_apply_moves as _c_apply_moves
from .kernels import c_end_turns as _c_end_turns
from .kernels import host_view, use_c, use_triton
from .kernels import written_view as _written
from .observe import pile_top, row_items
from .state import COUNT_DTYPE, BatchState


def apply_moves(state: BatchState, actions: torch.Tensor, active: torch.Tensor | None,
                refill: Callable[[torch.Tensor], None], *, may_draw: bool = True, backend: str = "auto"
                ) -> torch.Tensor:
    """Play ``actions`` ((B,) int64, unchecked) at the live tables (not over; ``active`` ones
    only, if given) and return (B,) bool: the tables that discarded.

    ``refill(mask)`` refills the empty stocks of the tables in ``mask`` before they draw from
    them (a reshuffle, random: the engine's). ``may_draw=False`` says that no table draws this
    step (no stock to look at)."""
    if use_c(_c_apply_moves, state.hands.device, backend):
        return _apply_in_c(state, actions, active, refill)
    if use_triton(state.hands.device, backend):
        return moves_triton.apply_moves(state, actions, active, refill, may_draw)
    s = state
    b, n = s.hands.shape[0], s.hands.shape[1]
    rows = _table_rows(b, s.hands.device)
    seat = s.current
    live = ~s.game_over if active is None else active & ~s.game_over
    drawing = (s.phase == 0) & live
    stock_draw = drawing & (actions == 0)
    take = drawing & (actions == 1)
    discard = (s.phase == 1) & live
    card = (actions - DISCARD_BASE).clamp(0, 51)
    top = pile_top(s)

    # every count update below is one index_add_ on a flat view, at (table, seat, card); a table
    # draws or discards, never both, so each count changes at one card per table
    at_seat = (rows * n + seat) * 52
    at_table = rows * 52
    top0 = top.clamp(min=0)

    # draw from the stock: the top discard is passed over; an empty stock is refilled first
    _add(s.passed, at_seat + top0, stock_draw & (top >= 0))
    if may_draw:
        refill(stock_draw & (s.stock_len == 0))
    drawn = row_items(s.stock, (s.stock_len - 1).clamp(min=0))
    s.stock_len -= stock_draw.long()
    # or take the top of the discard pile
    s.pile_len -= take.long()
    got = torch.where(take, top, drawn).clamp(min=0)
    # discard: onto the pile
    slot = s.pile_len.clamp(max=s.pile.shape[1] - 1)
    s.pile.index_put_((rows, slot), torch.where(discard, card, row_items(s.pile, slot)))
    s.pile_len += discard.long()

    # the counts: the hand gains the card drawn or loses the one discarded; the pile loses the
    # card taken or gains the one discarded; the known-taken cards gain the card taken or lose
    # one copy of the card discarded (if any is known)
    gains, loses = drawing.to(COUNT_DTYPE), discard.to(COUNT_DTYPE)
    at_card = at_seat + card
    _change(s.hands, at_seat + torch.where(drawing, got, card), gains - loses)
    _change(s.pile_counts, at_table + torch.where(take, top0, card), loses - take.to(COUNT_DTYPE))
    _add(s.discards, at_card, discard)
    known = discard & (s.known_taken.view(-1).index_select(0, at_card) > 0)
    _change(s.known_taken, torch.where(take, at_seat + top0, at_card), take.to(COUNT_DTYPE) - known.to(COUNT_DTYPE))
    s.taken = torch.where(take, top, torch.where(discard, -1, s.taken))
    s.turn += discard.long()
    s.phase = torch.where(drawing, 1, s.phase)
    return discard


def end_turns(state: BatchState, discarded: torch.Tensor, goes_out: torch.Tensor, max_turns: int, *,
              backend: str = "auto") -> tuple[torch.Tensor, torch.Tensor]:
    """End the turns of the tables that ``discarded`` ((B,) bool); where ``goes_out`` holds the
    discard went out (the round's first to leave a hand that melds completely: the caller asks
    the solver). The round ends when the turn comes back to the seat that went out, or after
    ``max_turns`` turns with nobody out; otherwise the next seat draws. Returns (B,) the seat that
    went out now (-1 for none) and (B,) bool the tables whose round ended."""
    if use_c(_c_end_turns, state.hands.device, backend):
        return _end_in_c(state, discarded, goes_out, max_turns)
    if use_triton(state.hands.device, backend):
        return moves_triton.end_turns(state, discarded, goes_out, max_turns)
    s = state
    n = s.hands.shape[1]
    seat = s.current
    went_now = torch.where(goes_out, seat, -1)
    s.went_out = torch.where(goes_out, seat, s.went_out)
    nxt = (seat + 1) % n
    ends = discarded & ((nxt == s.went_out) | ((s.went_out < 0) & (s.turn >= max_turns)))
    s.current = torch.where(discarded & ~ends, nxt, s.current)
    s.phase = torch.where(discarded & ~ends, 0, s.phase)
    return went_now, ends


@functools.lru_cache(maxsize=None)
def _table_rows(num_tables: int, device: torch.device) -> torch.Tensor:
    """(B,) 0..B-1: each table's row (never written). Kept for every batch size (8 bytes a table):
    a CUDA graph of a step holds its address, not the tensor, so it must never be evicted."""
    return torch.arange(num_tables, device=device)


def _apply_in_c(s: BatchState, actions: torch.Tensor, active: torch.Tensor | None,
                refill: Callable[[torch.Tensor], None]) -> torch.Tensor:
    """:func:`apply_moves` by the C loop; the stocks it finds empty are refilled and it runs again."""
    b = s.hands.shape[0]
    discarded = torch.empty(b, dtype=torch.bool)
    need = torch.empty(b, dtype=torch.bool)
    moves = host_view(actions)
    live = None if active is None else host_view(active, torch.bool)

    def play(refilled: bool) -> int:
        f32 = COUNT_DTYPE
        return _c_apply_moves(
            s.hands.shape[1], refilled, moves, live, _written(s, "hands", f32), _written(s, "pile_counts", f32),
            _written(s, "known_taken", f32), _written(s, "discards", f32), _written(s, "passed", f32),
            host_view(s.stock),
            _written(s, "stock_len"), _written(s, "pile"), _written(s, "pile_len"), host_view(s.current),
            _written(s, "phase"), host_view(s.game_over, torch.bool), _written(s, "taken"), _written(s, "turn"),
            discarded.numpy(), need.numpy())  # host: CPU tensors, written in place

    if play(False):
        refill(need)
        play(True)
    return discarded


def _end_in_c(s: BatchState, discarded: torch.Tensor, goes_out: torch.Tensor, max_turns: int
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`end_turns` by the C loop."""
    b = s.hands.shape[0]
    went_now = torch.empty(b, dtype=torch.int64)
    ends = torch.empty(b, dtype=torch.bool)
    _c_end_turns(s.hands.shape[1], max_turns, host_view(discarded, torch.bool), host_view(goes_out, torch.bool),
                 _written(s, "current"), _written(s, "phase"), _written(s, "went_out"), host_view(s.turn),
                 went_now.numpy(), ends.numpy())  # host: CPU tensors, written in place
    return went_now, ends


def _add(counts: torch.Tensor, flat_index: torch.Tensor, where: torch.Tensor) -> None:
    """Add 1 to ``counts`` (any shape, viewed flat) at ``flat_index`` where ``where`` holds."""
    counts.view(-1).index_add_(0, flat_index, where.to(counts.dtype))


def _change(counts: torch.Tensor, flat_index: torch.Tensor, delta: torch.Tensor) -> None:
    """Add ``delta`` (one value per index, in ``counts``' dtype) to ``counts`` viewed flat at ``flat_index``."""
    counts.view(-1).index_add_(0, flat_index, delta)
