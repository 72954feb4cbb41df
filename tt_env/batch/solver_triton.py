"""The torch meld program's two inner steps as fused Triton kernels (the GPU's fast path).

:mod:`tt_env.batch.solver`'s program moves a table of least values (state x naturals taken x
wilds used, per hand) through each slot, suit by suit, with gathers and mins over large
intermediate tensors: many kernel launches and several passes over memory per suit. Here each
suit's move is one kernel and each slot's set pool is one kernel, with the same arithmetic:

- :func:`suit_move`: ``out[d, m, u] = min`` over the moves ``(src, taken, wilds)`` into lane
  state ``d`` of ``f[src, m - taken, u - wilds]``, where the suit holds ``taken`` naturals;
- :func:`set_pool`: the slot's naturals left out of the lanes form its set, as ``_slot`` does;
- :func:`least_over_ends`: the program's end, every state's lanes ended with wilds, least over
  the states and the wilds a hand has.

With a count of hands (gathered solving), nothing touches the hands past it: the first slot
starts from the program's initial table without reading one (``initial``), so that no table of
the whole batch is filled or read at the start or the end.

The moves come from the same plan (``solver._plan_arrays``), as lists per destination state.
On a CPU the kernels run in Triton's interpreter (slow: the tests check the arithmetic with
it); on CUDA they are compiled. Triton is optional: :func:`available` says whether it is there.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
import torch

INF = 30000  # as solver._INF
BLOCK_B = 64
"""Hands per program (the batch is the innermost, contiguous dimension)."""


def available() -> bool:
    """Whether Triton can be imported (it is optional: the ``gpu`` extra)."""
    return importlib.util.find_spec("triton") is not None


@functools.lru_cache(maxsize=None)
def _kernels(interpret: bool):
    """(suit_move, set_pool) kernels: compiled, or wrapped for the interpreter (CPU tensors)."""
    import triton
    import triton.language as tl

    def suit_move_kernel(f_ptr, out_ptr, n_ptr, start_ptr, src_ptr, take_ptr, dw_ptr, count_ptr, b, stride_m, empty,
                         M: tl.constexpr, U: tl.constexpr, MU_P: tl.constexpr, FIRST: tl.constexpr,
                         INIT: tl.constexpr, BLOCK: tl.constexpr, INF: tl.constexpr):
        d = tl.program_id(0)
        count = tl.minimum(tl.load(count_ptr), b)
        mu = tl.arange(0, MU_P)
        m = mu // U
        u = mu % U
        in_mu = mu < M * U
        first = tl.load(start_ptr + d)
        last = tl.load(start_ptr + d + 1)
        for block in range(tl.program_id(1), (count + BLOCK - 1) // BLOCK, tl.num_programs(1)):
            offs_b = block * BLOCK + tl.arange(0, BLOCK)
            in_b = offs_b < count
            naturals = tl.load(n_ptr + offs_b, mask=in_b, other=0)
            acc = tl.full((MU_P, BLOCK), INF, tl.int16)
            for e in range(first, last):
                src = tl.load(src_ptr + e)
                take = tl.load(take_ptr + e)
                dw = tl.load(dw_ptr + e)
                m_src = m - take
                u_src = u - dw
                if FIRST:  # the slot's first suit reads the (S, U, B) table: nothing taken yet
                    ok_mu = in_mu & (m_src == 0) & (u_src >= 0)
                    row = src * U + u_src
                else:
                    ok_mu = in_mu & (m_src >= 0) & (u_src >= 0)
                    row = src * (M * U) + m_src * U + u_src
                ok = ok_mu[:, None] & (in_b & (naturals >= take))[None, :]
                if INIT:  # the program's first move: its table is 0 at (no lane, no wild), INF elsewhere
                    start = ok & ((src == empty) & (u_src == 0))[:, None]
                    acc = tl.where(start, tl.full((MU_P, BLOCK), 0, tl.int16), acc)
                else:
                    ptr = f_ptr + row.to(tl.int64)[:, None] * stride_m + offs_b[None, :]
                    acc = tl.minimum(acc, tl.load(ptr, mask=ok, other=INF))
            out = out_ptr + (d * (M * U) + mu).to(tl.int64)[:, None] * stride_m + offs_b[None, :]
            tl.store(out, acc, mask=in_mu[:, None] & in_b[None, :])

    def set_pool_kernel(g_ptr, out_ptr, total_ptr, count_ptr, b, stride_m, value,
                        M: tl.constexpr, U: tl.constexpr, U_P: tl.constexpr, FORCED: tl.constexpr,
                        BLOCK: tl.constexpr, INF: tl.constexpr):
        s = tl.program_id(0)
        count = tl.minimum(tl.load(count_ptr), b)
        u = tl.arange(0, U_P)
        in_u = u < U
        for block in range(tl.program_id(1), (count + BLOCK - 1) // BLOCK, tl.num_programs(1)):
            offs_b = block * BLOCK + tl.arange(0, BLOCK)
            in_b = offs_b < count
            total = tl.load(total_ptr + offs_b, mask=in_b, other=0)
            res = tl.full((U_P, BLOCK), INF, tl.int32)
            for j in tl.static_range(M):
                base = (s * (M * U) + j * U + u).to(tl.int64)[:, None] * stride_m + offs_b[None, :]
                ok = in_b[None, :]
                x0 = tl.load(g_ptr + base, mask=in_u[:, None] & ok, other=INF).to(tl.int32)
                pool = (total - j)[None, :]
                if FORCED:
                    cand = tl.where(pool == 0, x0, INF)
                else:
                    x1 = tl.load(g_ptr + base - stride_m, mask=(in_u & (u >= 1))[:, None] & ok,
                                 other=INF).to(tl.int32)
                    x2 = tl.load(g_ptr + base - 2 * stride_m, mask=(in_u & (u >= 2))[:, None] & ok,
                                 other=INF).to(tl.int32)
                    dead = tl.where(pool == 1, value, tl.where(pool == 2, 2 * value, 0))
                    as_set = tl.where(pool == 1, x2, tl.where(pool == 2, x1, INF))
                    cand = tl.minimum(x0 + dead, as_set)
                res = tl.minimum(res, cand)
            res = tl.minimum(res, INF)
            out = out_ptr + (s * U + u).to(tl.int64)[:, None] * stride_m + offs_b[None, :]
            tl.store(out, res.to(tl.int16), mask=in_u[:, None] & in_b[None, :])

    def ends_kernel(f_ptr, pad_ptr, wilds_ptr, out_ptr, count_ptr, b, num_states,
                    U: tl.constexpr, U_P: tl.constexpr, BLOCK: tl.constexpr, INF: tl.constexpr):
        count = tl.minimum(tl.load(count_ptr), b)
        u = tl.arange(0, U_P)
        in_u = u < U
        for block in range(tl.program_id(0), (count + BLOCK - 1) // BLOCK, tl.num_programs(0)):
            offs_b = block * BLOCK + tl.arange(0, BLOCK)
            in_b = offs_b < count
            acc = tl.full((U_P, BLOCK), INF, tl.int32)
            for s in range(0, num_states):
                v = u - tl.load(pad_ptr + s)  # ending state s's lanes takes pad wilds more
                ok = (in_u & (v >= 0))[:, None] & in_b[None, :]
                ptr = f_ptr + (s * U + v).to(tl.int64)[:, None] * b + offs_b[None, :]
                acc = tl.minimum(acc, tl.load(ptr, mask=ok, other=INF).to(tl.int32))
            wilds = tl.load(wilds_ptr + offs_b, mask=in_b, other=0)
            acc = tl.where(u[:, None] <= wilds[None, :], acc, INF)
            tl.store(out_ptr + offs_b, tl.reduce(acc, 0, tl.standard._elementwise_min), mask=in_b)  # (tl.min: see
            # triton_build: the interpreter runs the combine function, never a triton.jit one)

    if interpret:
        from triton.runtime.interpreter import InterpretedFunction

        return (InterpretedFunction(suit_move_kernel), InterpretedFunction(set_pool_kernel),
                InterpretedFunction(ends_kernel))
    return triton.jit(suit_move_kernel), triton.jit(set_pool_kernel), triton.jit(ends_kernel)


@functools.lru_cache(maxsize=None)
def _moves(decks: int, max_lanes: int, device: torch.device) -> tuple[tuple[torch.Tensor, ...], ...]:
    """Per suit: (start (S + 1,), src, taken, wilds) int32, the moves grouped by destination."""
    from .solver import _plan_arrays

    num_states, _, groups, _ = _plan_arrays(decks, max_lanes)
    out = []
    for suit_groups in groups:
        edges = []
        for m, dw, dst, src in suit_groups:
            src = src.reshape(len(dst), -1)
            for row, d in enumerate(dst):
                edges += [(int(d), int(s), m, dw) for s in src[row] if s < num_states]
        edges.sort()
        arr = np.array(edges, dtype=np.int64).reshape(-1, 4)
        start = np.searchsorted(arr[:, 0], np.arange(num_states + 1))
        t = functools.partial(torch.as_tensor, dtype=torch.int32, device=device)
        out.append((t(start), t(arr[:, 1]), t(arr[:, 2]), t(arr[:, 3])))
    return tuple(out)


def suit_moves(f: torch.Tensor | None, n: torch.Tensor, decks: int, max_lanes: int, m_dim: int,
               count: torch.Tensor | None = None, initial: tuple[int, int, int] | None = None) -> torch.Tensor:
    """The four suits' moves at one slot: ``f`` (S, U, B) int16 -> (S, M, U, B) int16 (least value
    per lane state, naturals of the slot taken by lanes and wilds used); ``n`` (4, B) int32.
    ``count`` ((1,) int32 on the device): only the first ``count`` hands are computed (see
    :func:`slot`). ``f=None`` with ``initial`` (S, U, the state with no lane): the program's first
    slot, from its initial table (0 with no lane and no wild, INF elsewhere), which is not made."""
    b = n.shape[1]
    num_states, u_dim, empty = initial if f is None else (*f.shape[:2], 0)
    suit_move, _, _ = _kernels(n.device.type == "cpu")
    moves = _moves(decks, max_lanes, n.device)
    count, programs = _count_and_programs(count, b, num_states, n.device)
    mu_p = 1 << (m_dim * u_dim - 1).bit_length()
    bufs = [torch.empty((num_states, m_dim, u_dim, b), dtype=torch.int16, device=n.device) for _ in range(2)]
    src = bufs[1] if f is None else f  # (not read from when it starts from the initial table)
    for s in range(4):
        start, edge_src, take, dw = moves[s]
        out = bufs[s % 2]
        suit_move[(num_states, programs)](src, out, n[s], start, edge_src, take, dw, count, b, b, empty, M=m_dim,
                                          U=u_dim, MU_P=mu_p, FIRST=s == 0, INIT=s == 0 and f is None,
                                          BLOCK=BLOCK_B, INF=INF)
        src = out
    return src


def set_pool(g: torch.Tensor, total: torch.Tensor, value: int, forced: bool,
             count: torch.Tensor | None = None) -> torch.Tensor:
    """The slot's set: ``g`` (S, M, U, B) int16, ``total`` (B,) int32 naturals of the slot -> (S, U, B)
    (the first ``count`` hands only, if given: see :func:`slot`)."""
    num_states, m_dim, u_dim, b = g.shape
    _, pool, _ = _kernels(g.device.type == "cpu")
    result = torch.empty((num_states, u_dim, b), dtype=torch.int16, device=g.device)
    count, programs = _count_and_programs(count, b, num_states, g.device)
    u_p = max(2, 1 << (u_dim - 1).bit_length())
    pool[(num_states, programs)](g, result, total, count, b, b, int(value), M=m_dim, U=u_dim, U_P=u_p,
                                 FORCED=bool(forced), BLOCK=BLOCK_B, INF=INF)
    return result


def slot(f: torch.Tensor | None, n: torch.Tensor, value: int, forced: bool, decks: int, max_lanes: int,
         m_dim: int, count: torch.Tensor | None = None, total: torch.Tensor | None = None,
         initial: tuple[int, int, int] | None = None) -> torch.Tensor:
    """One slot of the program (``solver._slot``): ``f`` (S, U, B) int16, ``n`` (4, B) naturals per
    suit; returns (S, U, B) int16.

    ``count`` ((1,) integer tensor on the device, or None for all B): only hands ``0..count-1`` are
    computed, and the entries of the others are left unwritten. The kernels read it themselves, so
    a caller that gathered the hands it needs to the front skips the rest without waiting on the
    host; with a count, fewer programs each loop over several blocks of hands. ``total`` ((B,)
    int32): ``n.sum(0)``, if the caller has it (no copy and no sum is made for int32 inputs that
    are already contiguous: the program makes them once for all slots). ``f=None`` with
    ``initial``: the program's first slot (:func:`suit_moves`)."""
    n = n.to(torch.int32).contiguous()
    g = suit_moves(None if f is None else f.contiguous(), n, decks, max_lanes, m_dim, count, initial)
    return set_pool(g, n.sum(0, dtype=torch.int32) if total is None else total, value, forced, count)


def least_over_ends(f: torch.Tensor, pads: torch.Tensor, wilds: torch.Tensor,
                    count: torch.Tensor | None = None) -> torch.Tensor:
    """The program's end (``solver._natural_deadwood``'s): ``f`` (S, U, B) int16 after the last slot,
    ``pads`` (S,) int32 the wilds that end each state's lanes, ``wilds`` (B,) the hands' wilds ->
    (B,) int32, the least of ``f[s, u - pads[s]]`` over the states and ``u <= wilds`` (INF where
    none). With ``count``, the first ``count`` hands only (the others are left unwritten)."""
    num_states, u_dim, b = f.shape
    _, _, ends = _kernels(f.device.type == "cpu")
    result = torch.empty(b, dtype=torch.int32, device=f.device)
    count, programs = _count_and_programs(count, b, 1, f.device)
    u_p = max(2, 1 << (u_dim - 1).bit_length())
    ends[(programs,)](f, pads, wilds.to(torch.int32).contiguous(), result, count, b, num_states, U=u_dim, U_P=u_p,
                      BLOCK=BLOCK_B, INF=INF)
    return result


@functools.lru_cache(maxsize=None)
def end_pads(decks: int, max_lanes: int, device: torch.device) -> torch.Tensor:
    """(S,) int32: the wilds that end each lane state's lanes (3 cards a lane), made once per device."""
    from .solver import _plan_arrays

    num_states, _, _, ends = _plan_arrays(decks, max_lanes)
    pads = np.zeros(num_states, np.int32)
    for pad, states in ends:
        pads[states] = pad
    return torch.as_tensor(pads, device=device)


PREFIX_PROGRAMS = 8192
"""With a ``count``, the programs per kernel launch, about (lane states x programs along the
batch): each loops over the blocks of hands below the count, so that a small count costs few
empty programs. Not yet tuned on a GPU."""


def _count_and_programs(count: torch.Tensor | None, b: int, num_states: int, device: torch.device
                        ) -> tuple[torch.Tensor, int]:
    """(the count as a (1,) int32 device tensor, programs along the batch) for a kernel launch:
    one program per block of hands without a count, fewer with one (:data:`PREFIX_PROGRAMS`)."""
    blocks = triton_cdiv(b, BLOCK_B)
    if count is None:
        return _whole_batch(b, device), blocks
    programs = max(1, min(blocks, PREFIX_PROGRAMS // num_states))
    return count.reshape(1).to(device=device, dtype=torch.int32), programs  # (no copy when it is already)


@functools.lru_cache(maxsize=None)
def _whole_batch(b: int, device: torch.device) -> torch.Tensor:
    """The count ``b`` as a (1,) int32 tensor on ``device``, made once (the kernels read a count).
    Never evicted: a CUDA graph of a step holds its address, not the tensor."""
    return torch.full((1,), b, dtype=torch.int32, device=device)


def triton_cdiv(a: int, b: int) -> int:
    """Ceiling of ``a / b`` (grid sizes)."""
    return -(-a // b)
