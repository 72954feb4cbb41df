"""The moves and the end of each turn as fused Triton kernels, in place (the GPU's fast path).

:mod:`tt_env.batch.moves`'s tensor code plays a step's moves in about eighty tensor operations
and ends the turns in about twenty: on a GPU each is a kernel launch. Here one kernel plays
every table's draw or discard and one ends the turns, with the same effects as the tensor code
and the CPU's C loops (``tt_env/batch/_kernels_moves.c``): each table changes only its own
rows, so a program's lanes never write the same place. Actions are taken unchecked, as there
(the engine checks them first unless told not to); nothing here checks the state's values. On
a CPU the kernels run in Triton's interpreter (the tests).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from .kernels import written_field
from .solver_triton import triton_cdiv
from .state import BatchState
from .triton_build import build

BLOCK_TABLES = 128
"""Tables per program (one lane each; not yet tuned on a GPU)."""

_MOVE_FIELDS = ("hands", "pile_counts", "known_taken", "discards", "passed", "stock", "stock_len", "pile",
                "pile_len", "current", "phase", "taken", "turn")


@functools.lru_cache(maxsize=None)
def _kernels(interpret: bool):
    """(moves, end of turns) kernels: compiled, or wrapped for the interpreter (CPU tensors)."""
    import triton.language as tl

    def moves_kernel(actions, active, game_over, hands, pile_counts, known, discards, passed, stock, stock_len,
                     pile, pile_len, current, phase, taken, turn, discarded, b,
                     N: tl.constexpr, S: tl.constexpr, ALL: tl.constexpr, BLOCK: tl.constexpr):
        rows = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        ok = rows < b
        live = ok & (tl.load(game_over + rows, mask=ok, other=1) == 0)
        if not ALL:
            live = live & (tl.load(active + rows, mask=ok, other=0) != 0)
        a = tl.load(actions + rows, mask=live, other=0)
        p = tl.load(phase + rows, mask=live, other=0)
        seat_row = (rows * N + tl.load(current + rows, mask=live, other=0)) * 52
        table_row = rows * 52
        sl = tl.load(stock_len + rows, mask=live, other=0)
        pl = tl.load(pile_len + rows, mask=live, other=0)
        top = tl.load(pile + rows * S + pl - 1, mask=live & (pl > 0), other=-1)
        top0 = tl.maximum(top, 0)
        drawing = live & (p == 0)
        take = drawing & (a == 1)
        from_stock = drawing & (a != 1)  # a stock draw (any other action id draws without taking it)
        stock_draw = drawing & (a == 0)
        # draw: from the stock, passing over the top discard, or the top discard taken
        drawn = tl.load(stock + rows * S + tl.maximum(sl - 1, 0), mask=from_stock, other=0)
        passed_at = passed + seat_row + top0
        tl.store(passed_at, tl.load(passed_at, mask=stock_draw & (top >= 0), other=0.0) + 1.0,
                 mask=stock_draw & (top >= 0))
        tl.store(stock_len + rows, sl - 1, mask=stock_draw)
        tl.store(pile_len + rows, pl - 1, mask=take)
        counts_at = pile_counts + table_row + top0
        tl.store(counts_at, tl.load(counts_at, mask=take, other=0.0) - 1.0, mask=take)
        known_at = known + seat_row + top0
        tl.store(known_at, tl.load(known_at, mask=take, other=0.0) + 1.0, mask=take)
        tl.store(taken + rows, top, mask=take)
        got_at = hands + seat_row + tl.where(take, top0, drawn)
        tl.store(got_at, tl.load(got_at, mask=drawing, other=0.0) + 1.0, mask=drawing)
        tl.store(phase + rows, tl.full(rows.shape, 1, tl.int64), mask=drawing)
        # discard: onto the pile
        discard = live & (p == 1)
        card = tl.minimum(tl.maximum(a - 2, 0), 51)
        tl.store(pile + rows * S + tl.minimum(pl, S - 1), card, mask=discard)
        tl.store(pile_len + rows, pl + 1, mask=discard)
        hand_at = hands + seat_row + card
        tl.store(hand_at, tl.load(hand_at, mask=discard, other=0.0) - 1.0, mask=discard)
        counts_at = pile_counts + table_row + card
        tl.store(counts_at, tl.load(counts_at, mask=discard, other=0.0) + 1.0, mask=discard)
        discards_at = discards + seat_row + card
        tl.store(discards_at, tl.load(discards_at, mask=discard, other=0.0) + 1.0, mask=discard)
        known_at = known + seat_row + card
        held = tl.load(known_at, mask=discard, other=0.0)
        tl.store(known_at, held - 1.0, mask=discard & (held > 0.0))  # one known copy leaves, if any is known
        tl.store(taken + rows, tl.full(rows.shape, -1, tl.int64), mask=discard)
        tl.store(turn + rows, tl.load(turn + rows, mask=discard, other=0) + 1, mask=discard)
        tl.store(discarded + rows, discard.to(tl.int8), mask=ok)

    def end_kernel(discarded, goes_out, current, phase, went_out, turn, went_now, ends, b, max_turns,
                   N: tl.constexpr, BLOCK: tl.constexpr):
        rows = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        ok = rows < b
        done = tl.load(discarded + rows, mask=ok, other=0) != 0
        out = tl.load(goes_out + rows, mask=ok, other=0) != 0
        seat = tl.load(current + rows, mask=ok, other=0)
        gone = tl.where(out, seat, tl.load(went_out + rows, mask=ok, other=-1))
        nxt = (seat + 1) % N
        end = done & ((nxt == gone) | ((gone < 0) & (tl.load(turn + rows, mask=ok, other=0) >= max_turns)))
        tl.store(went_now + rows, tl.where(out, seat, -1), mask=ok)
        tl.store(went_out + rows, gone, mask=ok)
        tl.store(current + rows, nxt, mask=done & ~end)
        tl.store(phase + rows, tl.full(rows.shape, 0, tl.int64), mask=done & ~end)
        tl.store(ends + rows, end.to(tl.int8), mask=ok)

    return build([moves_kernel, end_kernel], interpret)


def apply_moves(state: BatchState, actions: torch.Tensor, active: torch.Tensor | None,
                refill: Callable[[torch.Tensor], None], may_draw: bool) -> torch.Tensor:
    """:func:`tt_env.batch.moves.apply_moves` by one kernel, after ``refill`` of the stock draws
    from an empty stock (``may_draw``: some table may draw this step)."""
    s = state
    b, n, size = s.hands.shape[0], s.hands.shape[1], s.stock.shape[1]
    if may_draw:
        live = ~s.game_over if active is None else active & ~s.game_over
        refill(live & (s.phase == 0) & (actions == 0) & (s.stock_len == 0))
    discarded = torch.empty(b, dtype=torch.bool, device=s.hands.device)
    moves, _ = _kernels(s.hands.device.type == "cpu")
    flags = s.game_over.contiguous().view(torch.uint8)
    moves[(triton_cdiv(b, BLOCK_TABLES),)](
        actions.contiguous(), flags if active is None else active.contiguous().view(torch.uint8), flags,
        *[written_field(s, name) for name in _MOVE_FIELDS], discarded.view(torch.int8), b,
        N=n, S=size, ALL=active is None, BLOCK=BLOCK_TABLES)
    return discarded


def end_turns(state: BatchState, discarded: torch.Tensor, goes_out: torch.Tensor, max_turns: int
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`tt_env.batch.moves.end_turns` by one kernel."""
    s = state
    b = s.hands.shape[0]
    went_now = torch.empty(b, dtype=torch.int64, device=s.hands.device)
    ends = torch.empty(b, dtype=torch.bool, device=s.hands.device)
    _, end = _kernels(s.hands.device.type == "cpu")
    end[(triton_cdiv(b, BLOCK_TABLES),)](
        discarded.contiguous().view(torch.uint8), goes_out.contiguous().view(torch.uint8),
        *[written_field(s, name) for name in ("current", "phase", "went_out")], s.turn.contiguous(), went_now,
        ends.view(torch.int8), b, max_turns,
        N=s.hands.shape[1], BLOCK=BLOCK_TABLES)
    return went_now, ends
