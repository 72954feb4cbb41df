"""The exact meld solver, batched: ``least_penalty(counts, wild_rank, rules) -> (B,)``.

Two backends give ``tt_env.engine.melds.least_penalty`` of every hand exactly:

- ``"torch"``: a dynamic program over the ranks in pure tensor ops, on any device, with no host
  synchronisation (the GPU path);
- ``"triton"``: the same program with each suit's move and each slot's set pool fused into
  Triton kernels (:mod:`tt_env.batch.solver_triton`): compiled on CUDA, run by Triton's
  interpreter on a CPU (there only to test it);
- ``"c"``: the C solver's batched entry point ``_meldsolver.least_penalty_counts`` (CPU only, the
  fastest there).

``backend="auto"`` takes C for CPU tensors when the C extension is built and used
(``TT_ENV_SOLVER`` is not ``python``), else Triton on CUDA when it is installed, else the torch
program.

The program (vocabulary as in ``tt_env.engine.melds_py``). Let D* be the least value of
unmelded naturals over arrangements whose melds need at most the hand's W wilds. Then the least
penalty is D* when D* is below the value of all the naturals (some meld holds a natural: the
wilds left over always fit, since a run of 6 or more splits in two with a natural in each part,
so every run leaves room for 2 wilds and, given 3 spare wilds, one of its naturals can become a
set, which takes any number). Otherwise no meld holds a natural, and the wilds cost their value
unless they can make an all-wild set (3 or more, and ``meld_needs_natural`` false).

D* is a min-plus program over the slots (ranks, and with aces high a 14th slot for the ace
above the king), suit by suit within a slot. Its state per hand is: per suit, the ages (1, 2, 3
or more) of the runs in progress ("lanes": a lane starts on a natural, passes each slot on a
natural or a wild and, when it ends, pads itself to 3 cards with wilds), at most ``decks``
lanes per suit and ``max_cards // 3`` in all; how many of this rank's naturals the lanes took
(the rest go to the rank's set pool: 3 or more are a free set, 2 or 1 cost their value or 1 or
2 wilds); and the wilds used so far. With aces high, how the aces of each suit split between
lanes at the bottom and the rest is enumerated (the batch is widened by these splits).

Limits of the torch program:

- Exact for hands of up to ``max_cards`` cards (default 14, the game's largest) holding at most
  ``decks`` copies of a card (1..4): a run has 3 or more cards, so a hand of n cards has at most
  n // 3 runs in progress at once. The cap of ``decks`` lanes per suit follows the issue's
  prototype and is checked empirically against the scalar solver, not proven. ``check=True``
  rejects hands outside this scope.
- Its cost per hand grows with decks (256 lane states at 1 deck, 1,360 at 2, 1,820 at 4) and is
  multiplied by the ace splits with aces high (16 at 1 deck, up to 70 at 4). On a CPU it manages
  tens of hands per second; the C batch is the CPU path.
"""

from __future__ import annotations

import functools
import itertools
import numbers
from dataclasses import dataclass

import numpy as np
import torch

from tt_env.engine import melds as _melds
from tt_env.engine.rules import Rules

from . import solver_triton
from .go_out_filter import could_meld_completely  # noqa: F401  (its path before it had a module)
from .solver_inputs import INT_DTYPES, check_values, prefix_tensor, wild_tensor

BACKENDS = ("auto", "torch", "triton", "c")
MAX_DECKS = 4
"""Copies of a card the torch program handles (the batched engine's limit)."""
DEFAULT_MAX_CARDS = 14
"""Hand size the torch program is exact for by default: the game's hands hold at most 14 (13 dealt and a draw)."""
_INF = 30000  # above any penalty (40 cards x 15), and INF + 30 still fits an int16


# --------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class _Plan:
    """The program's state space and transitions for one (decks, max lanes, wilds), on one device."""

    num_states: int
    m_dim: int                 # naturals of the rank taken by lanes: 0..max_lanes
    u_dim: int                 # wilds used: 0..u_dim - 1
    m_pad: int                 # most naturals one suit's move takes
    u_pad: int                 # most wilds one suit's move uses
    empty: int                 # the state with no lane
    # per suit, per (m, dw): (m, dw, destination states (unique), their sources padded to the
    # most incoming moves with the index num_states, an all-INF row), flattened
    groups: tuple[tuple[tuple[int, int, torch.Tensor, torch.Tensor], ...], ...]
    end_pad: int               # most wilds a state needs to end its lanes
    end_index: torch.Tensor    # (S, U): where state s's lanes ending reads, for u wilds used in all,
    #                            in its row of the table with end_pad INF columns in front


def _suit_options(ages: tuple[int, ...], others: int, per_suit: int, max_lanes: int):
    """(new ages, naturals taken, wilds used) for every move of one suit's lanes at one slot."""
    out = set()
    for acts in itertools.product((0, 1, 2), repeat=len(ages)):  # 0 ends, 1 natural, 2 wild
        kept = [min(a + 1, 3) for a, act in zip(ages, acts, strict=True) if act]
        naturals = acts.count(1)
        wilds = acts.count(2) + sum(max(0, 3 - a) for a, act in zip(ages, acts, strict=True) if act == 0)
        for new in range(per_suit - len(kept) + 1):
            if others + len(kept) + new > max_lanes:
                break
            out.add((tuple(sorted(kept + [1] * new)), naturals + new, wilds))
    return out


@functools.lru_cache(maxsize=None)
def _plan_arrays(decks: int, max_lanes: int):
    """The plan as numpy arrays (device-free, cached)."""
    suit_configs = [c for n in range(decks + 1) for c in itertools.combinations_with_replacement((1, 2, 3), n)]
    states = [j for j in itertools.product(suit_configs, repeat=4) if sum(map(len, j)) <= max_lanes]
    index = {j: i for i, j in enumerate(states)}
    groups = []
    for s in range(4):
        by_key: dict[tuple[int, int], dict[int, list[int]]] = {}
        for j in states:
            others = sum(len(c) for t, c in enumerate(j) if t != s)
            for new, m, dw in _suit_options(j[s], others, decks, max_lanes):
                by_key.setdefault((m, dw), {}).setdefault(index[j[:s] + (new,) + j[s + 1:]], []).append(index[j])
        suit_groups = []
        for (m, dw), incoming in sorted(by_key.items()):
            dst = np.array(sorted(incoming))
            width = max(len(v) for v in incoming.values())
            src = np.full((len(dst), width), len(states))
            for row, d in enumerate(dst):
                src[row, :len(incoming[d])] = incoming[d]
            suit_groups.append((m, dw, dst, src.reshape(-1)))
        groups.append(tuple(suit_groups))
    pads: dict[int, list[int]] = {}
    for i, j in enumerate(states):
        pads.setdefault(sum(max(0, 3 - a) for c in j for a in c), []).append(i)
    ends = tuple((p, np.array(v)) for p, v in sorted(pads.items()))
    return len(states), index[((),) * 4], tuple(groups), ends


@functools.lru_cache(maxsize=None)
def _plan(decks: int, max_lanes: int, u_dim: int, device: torch.device) -> _Plan:
    num_states, empty, groups, ends = _plan_arrays(decks, max_lanes)
    t = functools.partial(torch.as_tensor, dtype=torch.long, device=device)
    m_pad = max(m for g in groups for m, *_ in g)
    u_pad = max(dw for g in groups for _, dw, *_ in g)
    pad_of = np.zeros(num_states, np.int64)
    for p, states in ends:
        pad_of[states] = p
    end_pad = int(pad_of.max())
    # ending a state's lanes uses pad_of[s] more wilds: the table at u reads u - pad_of[s] (INF below 0)
    end_index = np.arange(u_dim)[None, :] + end_pad - pad_of[:, None]
    return _Plan(num_states, max_lanes + 1, u_dim, m_pad, u_pad, empty,
                 tuple(tuple((m, dw, t(dst), t(src)) for m, dw, dst, src in g) for g in groups),
                 end_pad, t(end_index))


# --------------------------------------------------------------------------- the program
def _shift(x: torch.Tensor, k: int, dim: int) -> torch.Tensor:
    """``x`` moved ``k`` places up along ``dim`` (entries past the end dropped, _INF below)."""
    if k == 0:
        return x
    size = x.shape[dim]
    if k >= size:
        return torch.full_like(x, _INF)
    pad_shape = list(x.shape)
    pad_shape[dim] = k
    return torch.cat([x.new_full(pad_shape, _INF), x.narrow(dim, 0, size - k)], dim)


def _slot(plan: _Plan, f: torch.Tensor, n: torch.Tensor, value: int, forced: bool) -> torch.Tensor:
    """One slot: ``f`` (S, U, B) before it, ``n`` (4, B) its naturals per suit; (S, U, B) after.

    The batch is the innermost dimension, so every gather and shift moves contiguous rows.
    ``forced``: every natural of the slot must go into a lane (the aces split off for the bottom).
    """
    b, num_states, m_dim, u_dim, mp, up = f.shape[-1], plan.num_states, plan.m_dim, plan.u_dim, plan.m_pad, plan.u_pad
    # the state with room below for the shifts (naturals taken, wilds used) and an all-INF row
    padded = f.new_full((num_states + 1, m_dim + mp, u_dim + up, b), _INF)
    padded[:num_states, mp, up:] = f
    for s in range(4):
        sources = {0: padded}
        out = torch.full_like(padded, _INF)
        inner = out[:, mp:, up:]
        for m, dw, dst, src in plan.groups[s]:
            if m not in sources:
                sources[m] = torch.where(n[s] >= m, padded, _INF)
            view = sources[m][:, mp - m:mp - m + m_dim, up - dw:up - dw + u_dim]
            x = view.index_select(0, src).view(dst.shape[0], -1, m_dim, u_dim, b).amin(1)
            inner.index_copy_(0, dst, torch.minimum(inner.index_select(0, dst), x))
        padded = out
    g = padded[:num_states, mp:, up:]
    total = n.sum(0)
    res = None
    for j in range(m_dim):
        x = g[:, j]
        pool = total - j                     # naturals of the slot left for its set
        if forced:
            cand = torch.where(pool == 0, x, _INF)
        else:
            dead = torch.where(pool == 1, value, torch.where(pool == 2, 2 * value, 0)).to(x.dtype)
            as_set = torch.where(pool == 1, _shift(x, 2, 1), torch.where(pool == 2, _shift(x, 1, 1), _INF))
            cand = torch.minimum(x + dead, as_set)
        res = cand if res is None else torch.minimum(res, cand)
    return res.clamp_(max=_INF)


FUSED_SCRATCH_BYTES = 4 << 30
"""Most bytes of scratch tables the fused kernels take at once on a GPU (and at most an eighth
of its memory): larger chunks of hands mean fewer kernel launches, which bound a GPU step."""


def _default_chunk(plan: _Plan, k: int, device: torch.device, fused: bool) -> int:
    """Hands per step of the program: its state bounded to 2**24 entries on a CPU and 2**28 on
    other devices (the plain program's padded tables); for the fused kernels on CUDA, their own
    tables (two (S, M, U) and two (S, U) of int16 per hand) within :data:`FUSED_SCRATCH_BYTES`."""
    if fused and device.type == "cuda":
        budget = min(FUSED_SCRATCH_BYTES, torch.cuda.get_device_properties(device).total_memory // 8)
        per_hand = 2 * 2 * plan.num_states * plan.u_dim * (plan.m_dim + 1)
        return max(1, budget // (per_hand * k))
    entries = (plan.num_states + 1) * (plan.m_dim + plan.m_pad) * (plan.u_dim + plan.u_pad)
    return max(1, (1 << (24 if device.type == "cpu" else 28)) // (entries * k))


def _natural_deadwood(plan: _Plan, slots: list[tuple[torch.Tensor, int, bool]], wilds: torch.Tensor,
                      fused: tuple[int, int] | None = None, count: torch.Tensor | None = None) -> torch.Tensor:
    """D*: the least unmelded natural value with at most ``wilds`` (B,) wilds in the melds.

    ``slots``: per slot, (naturals per suit (4, B), their value, forced). ``fused``: (decks,
    max lanes) to run each slot as the Triton kernels of :mod:`tt_env.batch.solver_triton`, which
    compute only the first ``count`` hands when it is given (the others come out unspecified)."""
    if fused is not None:  # the kernels' inputs, each made once: int32 naturals, their totals, the count
        naturals = torch.stack([n for n, _, _ in slots]).to(torch.int32)          # (slots, 4, B)
        totals = naturals.sum(1, dtype=torch.int32)
        count = None if count is None else count.to(torch.int32)
        initial = (plan.num_states, plan.u_dim, plan.empty)
        f = None  # (the first slot starts from the initial table, which is not made: see solver_triton)
        for i, (_, value, forced) in enumerate(slots):
            f = solver_triton.slot(f, naturals[i], value, forced, *fused, plan.m_dim, count, totals[i], initial)
        return solver_triton.least_over_ends(f, solver_triton.end_pads(*fused, wilds.device), wilds, count)
    f = torch.full((plan.num_states, plan.u_dim, wilds.shape[0]), _INF, dtype=torch.int16, device=wilds.device)
    f[plan.empty, 0] = 0
    for n, value, forced in slots:
        f = _slot(plan, f, n, value, forced)
    return _least_over_ends(plan, f, wilds)


def _least_over_ends(plan: _Plan, f: torch.Tensor, wilds: torch.Tensor) -> torch.Tensor:
    """The program's end: every state's lanes ended (padded to 3 cards with wilds), least over the
    states and the wilds used up to each hand's ``wilds`` (B,); ``f`` (S, U, B) -> (B,)."""
    b = f.shape[2]
    padded = torch.cat((f.new_full((plan.num_states, plan.end_pad, b), _INF), f), dim=1)
    index = plan.end_index.unsqueeze(2).expand(-1, -1, b)
    best = padded.gather(1, index).amin(0)
    used = torch.arange(plan.u_dim, device=wilds.device).view(-1, 1)
    return torch.where(used <= wilds, best, _INF).amin(0)


@functools.lru_cache(maxsize=None)
def _ace_splits(decks: int, max_lanes: int, device: torch.device) -> torch.Tensor:
    """(k, 4): each way the aces of the four suits split into lanes at the bottom (aces high), made
    once per device: a tensor from host data in every call would be a copy from the host on a GPU
    at each step (and one that a CUDA graph could not capture)."""
    return torch.tensor([c for c in itertools.product(range(decks + 1), repeat=4) if sum(c) <= max_lanes],
                        device=device)


def _torch_least_penalty(counts: torch.Tensor, wild: torch.Tensor, aces_high: bool, needs_natural: bool,
                         decks: int, max_cards: int, chunk: int | None, fused: bool = False,
                         prefix: torch.Tensor | None = None) -> torch.Tensor:
    device = counts.device
    b = counts.shape[0]
    max_lanes = max(1, min(4 * decks, max_cards // 3))
    # wilds in melds: a hand with W >= 2 * naturals melds every natural in sets (D* = 0), so the
    # program only needs W < 2 * naturals, that is W <= (2 * max_cards - 1) // 3
    plan = _plan(decks, max_lanes, min(4 * decks, max(0, 2 * max_cards - 1) // 3) + 1, device)
    ranks = torch.arange(1, 14, device=device)
    cards = counts.view(b, 4, 13).long()
    is_wild = ranks.view(1, 1, 13) == wild.view(b, 1, 1)
    nat = torch.where(is_wild, 0, cards)                         # (B, 4, 13) naturals by suit and rank
    num_wilds = (cards - nat).sum((1, 2))
    num_naturals = nat.sum((1, 2))
    values = torch.clamp(ranks, max=10)
    if aces_high:
        values = torch.where(ranks == 1, 15, values)
    all_value = (nat * values.view(1, 1, 13)).sum((1, 2))
    wild_value = torch.clamp(wild, max=10)                     # a wild costs its rank's value (ace 1)
    leftover = torch.where((num_wilds >= 3) & (not needs_natural), 0, num_wilds * wild_value)
    if aces_high:  # widen the batch by how many aces of each suit start lanes at the bottom
        splits = _ace_splits(decks, max_lanes, device)
        k = splits.shape[0]
        nat = nat.repeat_interleave(k, 0)
        low = splits.repeat(b, 1)                              # (B*k, 4)
        high = nat[:, :, 0] - low
        ok = (high >= 0).all(1)
        num_w = num_wilds.repeat_interleave(k, 0)
    else:
        k, low, high, ok, num_w = 1, None, None, None, num_wilds
    if chunk is None:
        chunk = _default_chunk(plan, k, device, fused)
    out = []
    for start in range(0, nat.shape[0], chunk * k):
        sl = slice(start, start + chunk * k)
        n = nat[sl].permute(2, 1, 0)                          # (13, 4, chunk): batch innermost
        slots: list[tuple[torch.Tensor, int, bool]] = []
        if aces_high:
            slots.append((low[sl].t(), 0, True))
        else:
            slots.append((n[0], 1, False))
        slots += [(n[r], min(r + 1, 10), False) for r in range(1, 13)]
        if aces_high:
            slots.append((high[sl].clamp(min=0).t(), 15, False))
        # the fused kernels stop after the prefix's rows of this chunk (k rows per hand)
        count = None if not fused or prefix is None else (prefix * k - start).clamp(0, chunk * k)
        d = _natural_deadwood(plan, slots, num_w[sl], (decks, max_lanes) if fused else None, count)
        if aces_high:
            d = torch.where(ok[sl], d, _INF).view(-1, k).amin(1)
        out.append(d)
    deadwood = torch.cat(out).long()
    deadwood = torch.where(num_wilds >= 2 * num_naturals, 0, deadwood)
    return torch.where(deadwood < all_value, deadwood, all_value + leftover)


# --------------------------------------------------------------------------- entry point
def _c_backend():
    """The C module when it is built, in use and has the batched entry point, else None."""
    if _melds.solver_backend() != "c":
        return None
    from tt_env.engine import _meldsolver  # type: ignore[attr-defined]
    return _meldsolver if hasattr(_meldsolver, "least_penalty_counts") else None


def checked_inputs(counts: torch.Tensor, wild_rank: torch.Tensor | int, rules: Rules, backend: str,
                   decks: int | None) -> tuple[torch.Tensor, int, object]:
    """The checks every entry point makes (types, shapes, backend): (wild ranks as a (B,) tensor,
    decks, the C module where the C solver takes these hands, else None)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r} is not allowed: use one of {list(BACKENDS)}")
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a tt_env.engine.rules.Rules, not {type(rules).__name__}")
    if not isinstance(counts, torch.Tensor) or counts.dtype not in INT_DTYPES:
        what = counts.dtype if isinstance(counts, torch.Tensor) else type(counts).__name__
        raise TypeError(f"counts must be an integer torch tensor (uint8, int8, int16, int32 or int64), not {what}")
    if counts.dim() != 2 or counts.shape[1] != 52:
        raise ValueError(f"counts has shape {tuple(counts.shape)}: it must be (B, 52), one count per card int")
    b = counts.shape[0]
    wild = wild_tensor(wild_rank, b, counts.device)
    decks = rules.num_decks if decks is None else decks
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"decks={decks!r} is not allowed: use a positive int")
    c_module = _c_backend() if counts.device.type == "cpu" else None
    if backend == "c":
        if counts.device.type != "cpu":
            raise ValueError(f"backend='c' takes CPU tensors, not {counts.device}: use 'torch' or 'auto'")
        if c_module is None:
            raise ValueError("backend='c' needs the C meld solver (built, and TT_ENV_SOLVER not 'python'): "
                             "use 'torch' or 'auto'")
    return wild, decks, c_module


def least_penalty(counts: torch.Tensor, wild_rank: torch.Tensor | int, rules: Rules, *,
                  backend: str = "auto", decks: int | None = None, max_cards: int = DEFAULT_MAX_CARDS,
                  check: bool = True, chunk: int | None = None, prefix: torch.Tensor | None = None) -> torch.Tensor:
    """The least penalty of each hand: ``melds.least_penalty(hand, wild, aces_high, meld_needs_natural)``.

    Args:
        counts: (B, 52) integer tensor, copies of each card int per hand.
        wild_rank: (B,) integer tensor or an int: 1..13, or 0 for no wilds.
        rules: the options used are ``aces_high`` and ``meld_needs_natural``.
        backend: ``"torch"`` (any device), ``"triton"`` (Triton installed; compiled on CUDA,
            interpreted on a CPU), ``"c"`` (CPU tensors, C extension built) or ``"auto"``.
        decks: most copies of a card (default ``rules.num_decks``; the torch program takes 1..4).
        max_cards: the torch program is exact for hands of up to this many cards (it sizes the
            program: at most ``max_cards // 3`` runs at a time).
        check: for the tensor programs, check the values first (counts 0..decks, hands of at
            most ``max_cards`` cards, wild ranks 0..13), the default: they are exact only there,
            and would answer other hands wrongly without a word. It reads the device once; the
            engine, whose hands are always in range, passes False, and so may a tight loop of
            hands it knows to be in range. (The C solver checks its hands itself, at no cost:
            counts 0..40, at most 40 cards.)
        chunk: hands per step of the torch program (bounds its memory; default: a state of at
            most 2**24 entries per step on a CPU, 2**28 on a GPU).
        prefix: a one-element integer tensor on the device of ``counts``: only hands
            ``0..prefix-1`` are wanted, and the others come back as -1. The fused kernels read it
            themselves and skip those hands, so a caller that gathered the hands it needs to
            the front (:meth:`BatchGame.step` on a GPU) pays for just those, without waiting on
            the host; the other backends solve every hand and then mask.

    Returns:
        (B,) int64 tensor on the device of ``counts``.
    """
    wild, decks, c_module = checked_inputs(counts, wild_rank, rules, backend, decks)
    chunk = checked_chunk(chunk)
    b = counts.shape[0]
    prefix = prefix_tensor(prefix, counts.device)
    if backend == "c" or (backend == "auto" and c_module is not None):  # the C solver checks its hands itself
        return _unwanted_as_minus_one(_c_least_penalty(c_module, counts, wild, rules), prefix)
    if check:
        check_values(counts, wild, decks, max_cards)
    if backend == "triton" and not solver_triton.available():
        raise ValueError("backend='triton' needs Triton (pip install triton, or the project's gpu extra): "
                         "use 'torch' or 'auto'")
    fused = backend == "triton" or (backend == "auto" and counts.device.type == "cuda" and solver_triton.available())
    if decks > MAX_DECKS:
        raise ValueError(f"decks={decks} is not allowed for the torch program: it takes 1..{MAX_DECKS}")
    if b == 0:
        return torch.zeros(0, dtype=torch.long, device=counts.device)
    return _unwanted_as_minus_one(
        _torch_least_penalty(counts, wild, rules.aces_high, rules.meld_needs_natural, decks, max_cards, chunk,
                             fused, prefix), prefix)


def checked_chunk(chunk: object) -> int | None:
    """``chunk`` (None or an int >= 1, numpy's too) as an int or None; ``ValueError`` naming it otherwise."""
    if chunk is None:
        return None
    if isinstance(chunk, numbers.Integral) and not isinstance(chunk, (bool, np.bool_)) and chunk >= 1:
        return int(chunk)
    raise ValueError(f"chunk={chunk!r} is not allowed: use None (the default size) or an int >= 1")


def _unwanted_as_minus_one(penalty: torch.Tensor, prefix: torch.Tensor | None) -> torch.Tensor:
    """``penalty`` with the hands from ``prefix`` on set to -1 (no host wait)."""
    if prefix is None:
        return penalty
    rows = torch.arange(penalty.shape[0], device=penalty.device)
    return torch.where(rows < prefix, penalty, -1)


def _c_least_penalty(module, counts: torch.Tensor, wild: torch.Tensor, rules: Rules) -> torch.Tensor:
    out = torch.empty(counts.shape[0], dtype=torch.long)
    # the C backend takes CPU tensors only (checked by the caller): numpy views, no copy, no device
    counts_np, wild_np = counts.contiguous().numpy(), wild.contiguous().numpy()  # host: CPU tensors
    module.least_penalty_counts(counts_np, wild_np, rules.aces_high, rules.meld_needs_natural,
                                out.numpy())  # host: CPU tensors
    return out
