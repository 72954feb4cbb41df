"""The observation and the action mask as one fused Triton kernel (the GPU's fast path).

:mod:`tt_env.batch.observe`'s tensor code builds the observation from about fifty tensor
operations and the mask from about thirty more: on a GPU each is a kernel launch, a few
microseconds of the host's time whatever the batch size, and a step launches hundreds. Here one
kernel writes each table's row and its mask at once, with the same values: the pieces of layout
version 1 in order (the hand, the top discard, the pile below it, per opponent from the left
what it took and still holds and what it discarded, the one-hots, the scaled sizes, stock,
scores and turn), each scaled piece the correctly rounded float32 quotient (``div_rn``) of an
integer and a divisor that float32 holds exactly, as the tensor code's float32 quotients are.
Where a divisor is not such an integer, :func:`usable` says no and the tensor code runs.

On a CPU the kernel runs in Triton's interpreter (slow: the tests check it that way, against
the tensor code); on CUDA it is compiled. Nothing here checks the state's values: like the
tensor code on a GPU, it trusts the engine's own states (``from_game_states`` checks the others).
"""

from __future__ import annotations

import functools

import torch

from ..observation.sizes import NUM_ACTIONS, OBS_FIXED, OBS_PER_PLAYER
from .solver_triton import triton_cdiv
from .state import COUNT_DTYPE, BatchState
from .triton_build import build

BLOCK_TABLES = 32
"""Tables per program (each row is written as tiles of 64 columns; not yet tuned on a GPU)."""

__all__ = ["observe_and_mask", "usable"]


def usable(num_cards: int, max_turns: int, hand_scale: float, score_scale: float) -> bool:
    """Whether every divisor of the scaled pieces is an integer float32 holds exactly, so that
    float32 division gives the scalar encoder's values (see ``observe._scales``)."""
    return all(float(v) == int(v) and 1 <= v <= 2**24 for v in (num_cards, max_turns, hand_scale, score_scale))


@functools.lru_cache(maxsize=None)
def _kernel(interpret: bool):
    """The observe-and-mask kernel: compiled, or wrapped for the interpreter (CPU tensors)."""
    import triton.language as tl

    def observe_kernel(hands, pile_counts, known, discards, pile, pile_len, seat_ptr, current, phase, went_out,
                       round_number, stock_len, scores, turn, game_over, taken, obs, mask, b, shoe,
                       num_cards, max_turns, hand_scale, score_scale,
                       N: tl.constexpr, WIDTH: tl.constexpr, WITH_MASK: tl.constexpr,
                       DRAWN_BACK: tl.constexpr, ACTIONS: tl.constexpr, BLOCK: tl.constexpr):
        rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        ok = rows < b
        rows = rows.to(tl.int64)
        s = tl.load(seat_ptr + rows, mask=ok, other=0)
        cur = tl.load(current + rows, mask=ok, other=0)
        p = tl.load(phase + rows, mask=ok, other=0)
        wo = tl.load(went_out + rows, mask=ok, other=-1)
        r = tl.load(round_number + rows, mask=ok, other=1)
        plen = tl.load(pile_len + rows, mask=ok, other=0)
        stock = tl.load(stock_len + rows, mask=ok, other=0)
        over = tl.load(game_over + rows, mask=ok, other=1) != 0
        top = tl.load(pile + rows * shoe + plen - 1, mask=ok & (plen > 0), other=-1)

        c = tl.arange(0, 64)
        cards = ok[:, None] & (c < 52)[None, :]
        row_out = obs + rows * WIDTH
        out = row_out[:, None] + c[None, :]
        hand = tl.load(hands + (rows * N + s)[:, None] * 52 + c[None, :], mask=cards, other=0.0)
        tl.store(out, hand, mask=cards)
        top_hot = tl.where(c[None, :] == top[:, None], 1.0, 0.0)
        tl.store(out + 52, top_hot, mask=cards)
        below = tl.load(pile_counts + rows[:, None] * 52 + c[None, :], mask=cards, other=0.0) - top_hot
        tl.store(out + 104, below, mask=cards)
        for k in tl.static_range(1, N):  # the opponents from the observer's left
            at = (rows * N + (s + k) % N)[:, None] * 52 + c[None, :]
            tl.store(out + 156 + (k - 1) * 52, tl.load(known + at, mask=cards, other=0.0), mask=cards)
            tl.store(out + 156 + (N + k - 2) * 52, tl.load(discards + at, mask=cards, other=0.0), mask=cards)

        # one-hots: wild rank (13), round (11), phase (2), who went out (N, from the observer)
        h = c[None, :]
        hot = (h == (r + 1)[:, None]) | (h == (r + 12)[:, None]) | (h == (p + 24)[:, None])
        hot = hot | ((wo >= 0)[:, None] & (h == (26 + (wo - s + N) % N)[:, None]))
        tl.store(out + 156 + (N - 1) * 104, tl.where(hot, 1.0, 0.0), mask=ok[:, None] & (h < 26 + N))

        # scaled: N hand sizes, the stock, N scores, the turn (all from the observer's point of view)
        j = tl.arange(0, 32)[None, :]
        who = (s[:, None] + tl.where(j <= N, j, j - N - 1)) % N
        holding = ((p == 1) & ~over)[:, None]
        size = r[:, None] + 2 + ((who == cur[:, None]) & holding).to(tl.int64)
        score = tl.load(scores + rows[:, None] * N + who, mask=ok[:, None] & (j > N) & (j <= 2 * N), other=0)
        turns = tl.load(turn + rows, mask=ok, other=0)[:, None]
        numerator = tl.where(j < N, size, tl.where(j == N, stock[:, None], tl.where(j <= 2 * N, score, turns)))
        divisor = tl.where(j < N, hand_scale, tl.where(j == N, num_cards, tl.where(j <= 2 * N, score_scale,
                                                                                    max_turns)))
        scaled = tl.math.div_rn(numerator.to(tl.float32), divisor)
        tl.store(row_out[:, None] + 156 + (N - 1) * 104 + 26 + N + j, scaled, mask=ok[:, None] & (j < 2 * N + 2))

        if WITH_MASK:
            live = ~over
            draw = live & (p == 0)
            held = (live & (p == 1))[:, None] & (hand != 0.0)
            if not DRAWN_BACK:  # the card just taken may not go back unless it is all the hand holds
                tk = tl.load(taken + rows, mask=ok, other=-1)
                is_taken = c[None, :] == tk[:, None]
                # tl.reduce with tl.sum's own combine function: the interpreter runs it (it cannot call tl.sum)
                others = tl.reduce(tl.where(is_taken, 0.0, hand), 1, tl.standard._sum_combine) > 0.0
                held = held & ~(is_taken & ((tk >= 0) & others)[:, None])
            at = mask + rows * ACTIONS
            tl.store(at[:, None] + 2 + c[None, :], held.to(tl.int8), mask=cards)
            tl.store(at, (draw & ((stock > 0) | (plen > 1))).to(tl.int8), mask=ok)
            tl.store(at + 1, (draw & (plen > 0)).to(tl.int8), mask=ok)

    return build([observe_kernel], interpret)[0]


def observe_and_mask(state: BatchState, round_number: torch.Tensor, num_cards: int, max_turns: int,
                     hand_scale: float, score_scale: float, seat: torch.Tensor | None,
                     discard_drawn_discard: bool | None, out: torch.Tensor | None = None
                     ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The observation of ``seat`` (default: the seat to move; into ``out`` if given) and, unless
    ``discard_drawn_discard`` is None, the (B, 54) bool mask: one kernel launch."""
    b, n = state.hands.shape[0], state.hands.shape[1]
    dev = state.hands.device
    obs = torch.empty(b, OBS_PER_PLAYER * n + OBS_FIXED, dtype=COUNT_DTYPE, device=dev) if out is None else out
    mask = None if discard_drawn_discard is None else torch.empty(b, NUM_ACTIONS, dtype=torch.bool, device=dev)
    if b == 0:
        return obs, mask
    s = state
    counts = [t.contiguous() for t in (s.hands, s.pile_counts, s.known_taken, s.discards)]
    fields = [t.contiguous() for t in (s.pile, s.pile_len, s.current if seat is None else seat, s.current, s.phase,
                                       s.went_out, round_number, s.stock_len, s.scores, s.turn)]
    kernel = _kernel(dev.type == "cpu")
    kernel[(triton_cdiv(b, BLOCK_TABLES),)](
        *counts, *fields, s.game_over.contiguous().view(torch.uint8), s.taken.contiguous(), obs,
        obs if mask is None else mask.view(torch.int8), b, s.pile.shape[1],
        float(num_cards), float(max_turns), float(hand_scale), float(score_scale),
        N=n, WIDTH=OBS_PER_PLAYER * n + OBS_FIXED, WITH_MASK=mask is not None,
        DRAWN_BACK=bool(discard_drawn_discard), ACTIONS=NUM_ACTIONS, BLOCK=BLOCK_TABLES)
    return obs, mask
