"""The meld program's fused Triton kernels (``tt_env.batch.solver_triton``) against its torch steps.

Run by Triton's interpreter on a CPU (slow, so one slot of a few hands per case): each case
compares one whole slot (the four suits' moves and the set pool) with ``solver._slot`` on random
tables of least values. The whole program against the C solver on many hands, compiled on a GPU,
is ``benchmarks/bench_batch_solver.py --device cuda --backends triton``.
"""

from __future__ import annotations

import pytest
import torch

from tt_env.batch import solver, solver_triton
from tt_env.engine.rules import Rules

needs_triton = pytest.mark.skipif(not solver_triton.available(), reason="Triton is not installed")
DECKS, MAX_LANES, U_DIM = 1, 4, 5


def random_slot_inputs(plan, hands: int, decks: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A table of least values (some unreachable, INF) and each suit's naturals at the slot."""
    gen = torch.Generator().manual_seed(seed)
    f = torch.randint(0, 60, (plan.num_states, plan.u_dim, hands), generator=gen).to(torch.int16)
    f[torch.rand(f.shape, generator=gen) < 0.5] = solver._INF
    n = torch.randint(0, decks + 1, (4, hands), generator=gen)
    return f, n


@needs_triton
def test_fused_slot_equals_tensor_slot() -> None:
    """A whole slot: the four suits' moves (the first reading the (S, U, B) table) and the set."""
    plan = solver._plan(DECKS, MAX_LANES, U_DIM, torch.device("cpu"))
    f, n = random_slot_inputs(plan, hands=6, decks=DECKS, seed=3)
    want = solver._slot(plan, f, n, 7, False)
    got = solver_triton.slot(f, n, 7, False, DECKS, MAX_LANES, plan.m_dim)
    assert got.dtype == torch.int16 and got.shape == want.shape
    assert torch.equal(got, want.to(torch.int16))


@needs_triton
def test_fused_forced_set_pool_equals_tensor_slot() -> None:
    """The forced slot (the aces split off for the bottom): every natural goes into a lane."""
    plan = solver._plan(DECKS, MAX_LANES, U_DIM, torch.device("cpu"))
    gen = torch.Generator().manual_seed(4)
    g = torch.randint(0, 60, (plan.num_states, plan.m_dim, plan.u_dim, 6), generator=gen).to(torch.int16)
    total = torch.randint(0, 5, (6,), generator=gen, dtype=torch.int32)
    # the lanes must have taken all ``total`` naturals: the entry at m = total, nothing else
    want = g.gather(1, total.long().view(1, 1, 1, 6).expand(plan.num_states, 1, plan.u_dim, 6)).squeeze(1)
    assert torch.equal(solver_triton.set_pool(g, total, 15, True), want)


@needs_triton
def test_fused_forced_slot_equals_tensor_slot() -> None:
    """A whole forced slot through :func:`solver_triton.slot` (the test above calls the set pool
    alone): the flag reaches the pool. A plan of at most two lanes, as the count's test below."""
    plan = solver._plan(DECKS, 2, 3, torch.device("cpu"))
    f, n = random_slot_inputs(plan, hands=6, decks=DECKS, seed=8)
    want = solver._slot(plan, f, n, 9, True)
    assert not torch.equal(want, solver._slot(plan, f, n, 9, False))  # the flag matters to these hands
    got = solver_triton.slot(f, n, 9, True, DECKS, 2, plan.m_dim)
    assert torch.equal(got, want.to(torch.int16))


def test_triton_backend_is_refused_without_triton(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver_triton, "available", lambda: False)
    counts = torch.zeros(1, 52, dtype=torch.uint8)
    with pytest.raises(ValueError, match="backend='triton' needs Triton"):
        solver.least_penalty(counts, 3, Rules(), backend="triton")


@needs_triton
def test_fused_slot_with_a_count_computes_the_hands_in_front(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``count`` (the GPU engine's gathered hands), each program loops over the blocks of
    hands below it: one program per lane state here, over two blocks of 64, the second cut at 70.
    (A plan of at most two lanes: its 67 lane states take Triton's interpreter a fifth of the
    time of the full plan's 256, which the test above runs.)"""
    monkeypatch.setattr(solver_triton, "PREFIX_PROGRAMS", 1)
    plan = solver._plan(DECKS, 2, 3, torch.device("cpu"))
    f, n = random_slot_inputs(plan, hands=90, decks=DECKS, seed=5)
    want = solver._slot(plan, f, n, 4, False)[..., :70]
    got = solver_triton.slot(f, n, 4, False, DECKS, 2, plan.m_dim, torch.tensor([70]))
    assert torch.equal(got[..., :70], want.to(torch.int16))


def plain_ends(f: torch.Tensor, pads: torch.Tensor, wilds: torch.Tensor, count=None) -> torch.Tensor:
    """``solver_triton.least_over_ends`` in tensor code (rows past ``count`` too): state ``s`` at ``u``
    wilds reads ``f[s, u - pads[s]]``, INF below 0."""
    used = torch.arange(f.shape[1])
    v = used.view(1, -1) - pads.long().view(-1, 1)
    x = f.long().gather(1, v.clamp(min=0).unsqueeze(2).expand(-1, -1, f.shape[2]))
    best = torch.where((v >= 0).unsqueeze(2), x, solver._INF).amin(0)
    return torch.where(used.view(-1, 1) <= wilds, best, solver._INF).amin(0).to(torch.int32)


@needs_triton
@pytest.mark.parametrize("decks, max_lanes, u_dim", [(1, 4, 5), (2, 3, 4)])
def test_the_fused_end_equals_the_plain_end(decks: int, max_lanes: int, u_dim: int) -> None:
    """The program's end as one kernel: every state's lanes ended with the wilds they need, least
    over the states and the wilds each hand has; with a count, the hands below it (the others are
    not read, so a gathered prefix costs nothing past it)."""
    plan = solver._plan(decks, max_lanes, u_dim, torch.device("cpu"))
    f, _ = random_slot_inputs(plan, hands=70, decks=decks, seed=decks)
    wilds = torch.randint(0, u_dim + 1, (70,), generator=torch.Generator().manual_seed(1))
    pads = solver_triton.end_pads(decks, max_lanes, torch.device("cpu"))
    assert torch.equal(plan.end_pad - plan.end_index[:, 0], pads.long())
    want = solver._least_over_ends(plan, f, wilds)
    assert torch.equal(solver_triton.least_over_ends(f, pads, wilds), want.to(torch.int32))
    assert torch.equal(plain_ends(f, pads, wilds), want.to(torch.int32))
    got = solver_triton.least_over_ends(f, pads, wilds, torch.tensor([67]))
    assert torch.equal(got[:67], want[:67].to(torch.int32))


@needs_triton
def test_the_first_slot_starts_from_the_initial_table_without_it() -> None:
    """``slot(None, ..., initial=...)``: the program's first slot, from the table that is 0 with no
    lane and no wild and INF elsewhere, which is never made (nor filled for the whole batch)."""
    plan = solver._plan(DECKS, 2, U_DIM, torch.device("cpu"))  # (2 lanes: few states, the interpreter is slow)
    _, n = random_slot_inputs(plan, hands=6, decks=DECKS, seed=5)
    start = torch.full((plan.num_states, plan.u_dim, 6), solver._INF, dtype=torch.int16)
    start[plan.empty, 0] = 0
    want = solver._slot(plan, start, n, 3, False)
    initial = (plan.num_states, plan.u_dim, plan.empty)
    got = solver_triton.slot(None, n, 3, False, DECKS, 2, plan.m_dim, initial=initial)
    assert torch.equal(got, want.to(torch.int16))


@pytest.mark.parametrize("aces", ["low", "high_or_low"])
def test_the_fused_program_hands_each_slot_its_inputs(monkeypatch: pytest.MonkeyPatch, aces: str) -> None:
    """The whole program with ``backend="triton"``, each slot's kernels replaced by the plain
    ``solver._slot`` (the kernels themselves are checked slot by slot above; the whole program on
    Triton's interpreter takes minutes): the naturals made int32 once for all slots, each slot's
    total, the count of a prefix, and the ends read off the table, against the C solver."""
    seen = []

    def plain_slot(f, n, value, forced, decks, max_lanes, m_dim, count=None, total=None, initial=None):
        assert n.dtype == torch.int32 and n.is_contiguous() and torch.equal(total, n.sum(0, dtype=torch.int32))
        seen.append(None if count is None else (count.dtype, int(count)))
        if f is None:  # the first slot: the kernels start from the initial table without making it
            num_states, u_dim, empty = initial
            f = torch.full((num_states, u_dim, n.shape[1]), solver._INF, dtype=torch.int16)
            f[empty, 0] = 0
            seen.append("initial")
        plan = solver._plan(decks, max_lanes, f.shape[1], f.device)
        return solver._slot(plan, f, n, value, forced).to(torch.int16)

    if not solver_triton.available():  # (no Triton: the end in tensor code)
        monkeypatch.setattr(solver_triton, "least_over_ends", plain_ends)
    monkeypatch.setattr(solver_triton, "available", lambda: True)
    monkeypatch.setattr(solver_triton, "slot", plain_slot)
    rules = Rules(aces=aces)
    rng = torch.Generator().manual_seed(6)
    counts = torch.zeros(5, 52, dtype=torch.uint8)
    for i in range(5):
        counts[i, torch.randperm(52, generator=rng)[:4 + i]] = 1
    wild = torch.tensor([0, 3, 5, 13, 1])
    want = solver.least_penalty(counts, wild, rules, backend="c")
    assert torch.equal(solver.least_penalty(counts, wild, rules, backend="triton", max_cards=8), want)
    assert set(seen) == {None, "initial"} and seen.count("initial") == 1 and seen[1] == "initial"
    seen.clear()
    got = solver.least_penalty(counts, wild, rules, backend="triton", max_cards=8, prefix=torch.tensor(3))
    assert got.tolist() == want[:3].tolist() + [-1, -1]
    # aces high widen each hand by its ace splits (at most 2 lanes at 1 deck for 8 cards: 11 splits)
    rows_per_hand = 1 if aces == "low" else 11
    assert set(seen) == {(torch.int32, 3 * rows_per_hand), "initial"}
