"""The deals and stock refills as fused Triton kernels, in place (the GPU's fast path).

On the every-row path (any device but a CPU) the tensor code of :mod:`tt_env.batch.deal` deals
every table at every discard step and keeps the dealt tables by mask, so that the host never
waits: about 180 tensor operations, each a kernel launch on a GPU, and a refill about 75 more on
every draw step. Here one kernel deals the tables of a mask in place and one refills them,
writing only those rows. They compute what ``deal.dealt`` and ``deal.reshuffle`` compute, bit for
bit, as the CPU's C loops (``tt_env/batch/_kernels_deal.c``) do: :mod:`tt_env.batch.random_keys`'s
hash and streams, and its shuffles as sorted keys (here each key's rank is the number of smaller
keys; the keys are distinct). On a CPU the kernels run in Triton's interpreter (the tests);
nothing here checks the state's values, which the engine's own states always hold.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import torch

from .kernels import written_field
from .solver_triton import triton_cdiv
from .state import BatchState
from .triton_build import build

if TYPE_CHECKING:  # the helpers' tl is bound by triton_build.build (Triton is optional)
    import triton.language as tl

BLOCK_TABLES = 16
"""Tables per program (not yet tuned on a GPU)."""

_DEAL_FIELDS = ("hands", "stock", "stock_len", "pile", "pile_len", "pile_counts", "known_taken", "discards",
                "passed", "round_index", "dealer", "current", "phase", "scores", "went_out", "turn", "taken")
_REFILL_FIELDS = ("stock", "stock_len", "pile", "pile_len", "pile_counts", "counter")


def _mix32(x):
    """random_keys.mix32 of a uint32 tensor, inside a kernel."""
    x = (x ^ (x >> 16)) * 0x7FEB352D
    x = (x ^ (x >> 15)) * 0x2C1B3C6D
    x = (x ^ (x >> 16)) * 0x297A2D39
    return x ^ (x >> 15)


def _ranks(base, length, p, S):
    """(BLOCK, S_P) the rank of each position ``p`` of a row among its ``S`` shuffle keys
    (random_keys.shuffle_prefix): the positions below ``length`` (per row) keyed by the hash of
    ``base``, the others after them in order. Inside a kernel."""
    at = p[None, :].to(tl.int64)
    mixed = _mix32(base[:, None] + at.to(tl.uint32) * 0x42B2AE35).to(tl.int64)
    keys = tl.where(at < length[:, None], mixed * 256 + at, at + (1 << 41))
    rank = tl.full(keys.shape, 0, tl.int32)
    q = tl.full(base.shape, 0, tl.int64)
    for _ in range(S):  # O(S^2) comparisons, no sort: the rank is the count of smaller keys
        q_key = _mix32(base + q.to(tl.uint32) * 0x42B2AE35).to(tl.int64) * 256 + q
        q_key = tl.where(q < length, q_key, q + (1 << 41))
        rank += (q_key[:, None] < keys).to(tl.int32)
        q += 1
    return rank


@functools.lru_cache(maxsize=None)
def _kernels(interpret: bool):
    """(deal, refill) kernels: compiled, or wrapped for the interpreter (CPU tensors)."""
    import triton.language as tl

    def deal_kernel(todo, fresh, rounds, hands, stock, stock_len, pile, pile_len, pile_counts, known, discards,
                    passed, round_index, dealer, current, phase, scores, went_out, turn, taken, game_over, counter,
                    b, seed32, salt, num_rounds,
                    N: tl.constexpr, S: tl.constexpr, S_P: tl.constexpr, BLOCK: tl.constexpr):
        rows = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        do = (rows < b) & (tl.load(todo + rows, mask=rows < b, other=0) != 0)
        if tl.reduce(do.to(tl.int32), 0, tl.standard._elementwise_max) > 0:
            new = tl.load(fresh + rows, mask=do, other=0) != 0
            ctr = tl.load(counter + rows, mask=do, other=0)
            h = _mix32(_mix32(rows.to(tl.uint32) * 0x1E3779B1 + tl.cast(seed32, tl.uint32))  # random_keys.stream_base
                       ^ tl.cast(seed32, tl.uint32))
            first = _mix32(_mix32(h ^ (ctr.to(tl.uint32) * 0x05EBCA6B)) + tl.cast(salt, tl.uint32)) % N
            ctr += new.to(tl.int64)
            deal_by = tl.where(new, first.to(tl.int64), (tl.load(dealer + rows, mask=do, other=0) + 1) % N)
            index = tl.minimum(tl.load(round_index + rows, mask=do, other=0) + 1, num_rounds - 1)
            index = tl.where(new, 0, index)
            dealt = N * (tl.load(rounds + index, mask=do, other=1) + 2)
            up_at = S - 1 - dealt  # the stock's length, and where the turned-up card sits
            base = _mix32(h ^ (ctr.to(tl.uint32) * 0x05EBCA6B))

            p = tl.arange(0, S_P)
            in_shoe = do[:, None] & (p < S)[None, :]
            rank = _ranks(base, tl.full(base.shape, S, tl.int64), p, S)
            card = (p % 52).to(tl.int64)[None, :]
            tl.store(stock + rows[:, None] * S + rank, card, mask=in_shoe)  # the shoe, in order
            up = tl.reduce(tl.where(rank == up_at[:, None], card, 0), 1, tl.standard._sum_combine)
            tl.store(pile + rows[:, None] * S + p[None, :], tl.where(p[None, :] == 0, up[:, None], 0), mask=in_shoe)
            c = tl.arange(0, 64)[None, :]
            cards = do[:, None] & (c < 52)
            tl.store(pile_counts + rows[:, None] * 52 + c, tl.where(c == up[:, None], 1.0, 0.0), mask=cards)
            for seat in tl.static_range(N):
                at = (rows * N + seat)[:, None] * 52 + c
                tl.store(hands + at, tl.full(at.shape, 0, tl.float32), mask=cards)
                tl.store(known + at, tl.full(at.shape, 0, tl.float32), mask=cards)
                tl.store(discards + at, tl.full(at.shape, 0, tl.float32), mask=cards)
                tl.store(passed + at, tl.full(at.shape, 0, tl.float32), mask=cards)
                tl.store(scores + rows * N + seat, tl.full(rows.shape, 0, tl.int64), mask=do & new)
            tl.debug_barrier()  # the hands are zero before the dealt cards are counted in
            from_end = S - 1 - rank
            seat_of = (deal_by[:, None] + 1 + from_end % N) % N
            tl.atomic_add(hands + (rows[:, None] * N + seat_of) * 52 + card, tl.full(rank.shape, 1.0, tl.float32),
                          mask=in_shoe & (from_end < dealt[:, None]))
            tl.store(stock_len + rows, up_at, mask=do)
            tl.store(pile_len + rows, tl.full(rows.shape, 1, tl.int64), mask=do)
            tl.store(round_index + rows, index, mask=do)
            tl.store(dealer + rows, deal_by, mask=do)
            tl.store(current + rows, (deal_by + 1) % N, mask=do)
            tl.store(phase + rows, tl.full(rows.shape, 0, tl.int64), mask=do)
            tl.store(went_out + rows, tl.full(rows.shape, -1, tl.int64), mask=do)
            tl.store(turn + rows, tl.full(rows.shape, 0, tl.int64), mask=do)
            tl.store(taken + rows, tl.full(rows.shape, -1, tl.int64), mask=do)
            tl.store(game_over + rows, tl.full(rows.shape, 0, tl.uint8), mask=do & new)
            tl.store(counter + rows, ctr + 1, mask=do)

    def refill_kernel(todo, stock, stock_len, pile, pile_len, pile_counts, counter, b, seed32,
                      S: tl.constexpr, S_P: tl.constexpr, BLOCK: tl.constexpr):
        rows = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
        do = (rows < b) & (tl.load(todo + rows, mask=rows < b, other=0) != 0)
        if tl.reduce(do.to(tl.int32), 0, tl.standard._elementwise_max) > 0:
            ctr = tl.load(counter + rows, mask=do, other=0)
            seed = tl.cast(seed32, tl.uint32)
            h = _mix32(_mix32(rows.to(tl.uint32) * 0x1E3779B1 + seed) ^ seed)  # random_keys.stream_base
            base = _mix32(h ^ (ctr.to(tl.uint32) * 0x05EBCA6B))
            under = tl.maximum(tl.load(pile_len + rows, mask=do, other=1) - 1, 0)  # the pile under its top
            p = tl.arange(0, S_P)
            in_shoe = do[:, None] & (p < S)[None, :]
            cards = tl.load(pile + rows[:, None] * S + p[None, :], mask=in_shoe, other=0)
            rank = _ranks(base, under, p, S)
            tl.store(stock + rows[:, None] * S + rank, cards, mask=in_shoe)
            top = tl.reduce(tl.where(p[None, :] == under[:, None], cards, 0), 1, tl.standard._sum_combine)
            tl.debug_barrier()  # every card of the pile is read before its row is cleared
            tl.store(pile + rows[:, None] * S + p[None, :], tl.where(p[None, :] == 0, top[:, None], 0), mask=in_shoe)
            c = tl.arange(0, 64)[None, :]
            tl.store(pile_counts + rows[:, None] * 52 + c, tl.where(c == top[:, None], 1.0, 0.0),
                     mask=do[:, None] & (c < 52))
            tl.store(stock_len + rows, under, mask=do)
            tl.store(pile_len + rows, tl.full(rows.shape, 1, tl.int64), mask=do)
            tl.store(counter + rows, ctr + 1, mask=do)

    return build([deal_kernel, refill_kernel], interpret, [_mix32, _ranks])


def deal_masked(state: BatchState, todo: torch.Tensor, fresh: torch.Tensor, seed32: int, rounds: torch.Tensor,
                first_dealer_salt: int) -> None:
    """Deal the tables where ``todo`` ((B,) bool) holds, in place: their next round or, where
    ``fresh`` ((B,) bool), a new game's first. What ``BatchGame._deal`` does on those rows."""
    b, n, size = state.hands.shape[0], state.hands.shape[1], state.stock.shape[1]
    deal, _ = _kernels(state.hands.device.type == "cpu")
    fields = [written_field(state, name) for name in _DEAL_FIELDS]
    deal[(triton_cdiv(b, BLOCK_TABLES),)](
        todo.contiguous().view(torch.uint8), fresh.contiguous().view(torch.uint8), rounds.contiguous(), *fields,
        written_field(state, "game_over").view(torch.uint8), written_field(state, "counter"), b, seed32,
        first_dealer_salt, rounds.shape[0], N=n, S=size, S_P=_padded(size), BLOCK=BLOCK_TABLES)


def reshuffle_masked(state: BatchState, todo: torch.Tensor, seed32: int) -> None:
    """Refill the stocks of the tables where ``todo`` ((B,) bool) holds, in place, from their
    discard piles under the top card. What ``deal.reshuffle`` does on those rows."""
    b, size = state.stock.shape
    _, refill = _kernels(state.hands.device.type == "cpu")
    refill[(triton_cdiv(b, BLOCK_TABLES),)](todo.contiguous().view(torch.uint8),
                                            *[written_field(state, name) for name in _REFILL_FIELDS], b, seed32,
                                            S=size, S_P=_padded(size), BLOCK=BLOCK_TABLES)


def _padded(size: int) -> int:
    """The power of two at or above ``size`` (Triton's block sizes)."""
    return 1 << (size - 1).bit_length()
