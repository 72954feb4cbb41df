"""tt_env.batch.solver.least_penalty equals the scalar solver, hand by hand, on both backends.

The torch program is slow on a CPU (it is the GPU path), so it is checked here on a few
hundred hands, most of them small (a smaller ``max_cards`` sizes a smaller program, the same
code); ``benchmarks/bench_batch_solver.py`` checks a million. The C batch is checked on
thousands. Every wild rank 0..13, both ace rules, ``meld_needs_natural`` both ways and 1-4 decks.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tt_env.batch import solver
from tt_env.batch.solver import least_penalty
from tt_env.engine import melds
from tt_env.engine.cards import parse_cards
from tt_env.engine.rules import Rules

HAS_C = solver._c_backend() is not None
needs_c = pytest.mark.skipif(not HAS_C, reason="the C meld solver is not built or not in use")
RULE_SETS = list(itertools.product((False, True), (False, True)))  # (aces_high, meld_needs_natural)


def rules_for(aces_high: bool, needs_natural: bool, decks: int = 1) -> Rules:
    return Rules(num_players=2 if decks == 1 else 4, decks=decks, aces="high_or_low" if aces_high else "low",
                 meld_needs_natural=needs_natural)


def random_hands(rng: np.random.Generator, num: int, decks: int, sizes: tuple[int, int]) -> np.ndarray:
    """(num, 52) counts of hands dealt from ``decks`` shuffled decks, sizes drawn in ``sizes``."""
    shoe = np.repeat(np.arange(52), decks)
    out = np.zeros((num, 52), np.int64)
    for i in range(num):
        out[i] = np.bincount(rng.choice(shoe, rng.integers(sizes[0], sizes[1] + 1), replace=False), minlength=52)
    return out


def wild_heavy(rng: np.random.Generator, counts: np.ndarray, wilds: np.ndarray, decks: int) -> None:
    """Give every third hand extra copies of its wild rank (in place), as many as the decks allow."""
    for i in range(0, len(counts), 3):
        if wilds[i]:
            cols = [s * 13 + wilds[i] - 1 for s in range(4)]
            counts[i, cols] = np.maximum(counts[i, cols], rng.integers(0, decks + 1, 4))


def fit(counts: np.ndarray) -> int:
    """The smallest max_cards that holds every hand of ``counts`` (the torch program is exact up to it)."""
    return max(3, int(counts.sum(1).max()))


def scalar(counts: np.ndarray, wilds: np.ndarray, aces_high: bool, needs_natural: bool) -> np.ndarray:
    hands = [[c for c in range(52) for _ in range(row[c])] for row in counts]
    return np.array([melds.least_penalty(h, int(w), aces_high, needs_natural) for h, w in zip(hands, wilds, strict=True)])


def check_equal(counts: np.ndarray, wilds: np.ndarray, rules: Rules, backend: str, **kwargs) -> None:
    got = least_penalty(torch.from_numpy(counts), torch.from_numpy(wilds), rules, backend=backend, **kwargs)
    assert got.dtype == torch.long and got.shape == (len(counts),)
    want = scalar(counts, wilds, rules.aces_high, rules.meld_needs_natural)
    bad = np.nonzero(got.numpy() != want)[0]
    assert not len(bad), "\n".join(
        f"hand {[c for c in range(52) for _ in range(counts[i, c])]} wild {wilds[i]}: "
        f"{backend} {int(got[i])}, scalar {want[i]}" for i in bad[:5])


# --------------------------------------------------------------------------- random hands
@needs_c
@pytest.mark.parametrize("decks", [1, 2, 3, 4])
@pytest.mark.parametrize("aces_high,needs_natural", RULE_SETS)
def test_c_batch_equals_scalar(decks, aces_high, needs_natural):
    rng = np.random.default_rng(100 * decks + 10 * aces_high + needs_natural)
    counts = random_hands(rng, 420, decks, (0, 15))
    wilds = np.arange(420) % 14
    wild_heavy(rng, counts, wilds, decks)
    check_equal(counts, wilds, rules_for(aces_high, needs_natural, decks), "c")


@pytest.mark.parametrize("aces_high,needs_natural", RULE_SETS)
def test_torch_small_hands_one_deck(aces_high, needs_natural):
    """Hands of 0..10 cards: a smaller max_cards sizes a program of at most 2 or 3 runs at a time."""
    rng = np.random.default_rng(7 + 2 * aces_high + needs_natural)
    num = 20 if aces_high else 56
    counts = random_hands(rng, num, 1, (0, 6))
    wilds = np.arange(num) % 14
    wild_heavy(rng, counts, wilds, 1)
    check_equal(counts, wilds, rules_for(aces_high, needs_natural), "torch", max_cards=fit(counts))


@pytest.mark.parametrize("decks,aces_high,needs_natural", [(2, False, False), (3, False, True), (4, False, False),
                                                          (2, True, True)])
def test_torch_small_hands_several_decks(decks, aces_high, needs_natural):
    """Duplicate cards: hands of 3..10 cards from 2-4 decks."""
    rng = np.random.default_rng(50 + decks + 10 * aces_high)
    counts = random_hands(rng, 10, decks, (3, 6))
    counts[::4, 4] = decks                            # every copy of the 5 of clubs
    wilds = (np.arange(10) * 5) % 14
    check_equal(counts, wilds, rules_for(aces_high, needs_natural, decks), "torch", max_cards=fit(counts))


@pytest.mark.parametrize("aces_high,needs_natural", RULE_SETS)
def test_torch_game_hands_one_deck(aces_high, needs_natural):
    """Hands of 9..14 cards (the game's largest), default program (max_cards=14)."""
    rng = np.random.default_rng(30 + 2 * aces_high + needs_natural)
    num = 6 if aces_high else 20
    counts = random_hands(rng, num, 1, (9, 14))
    wilds = (np.arange(num) * 3 + 1) % 14
    check_equal(counts, wilds, rules_for(aces_high, needs_natural), "torch")


def test_torch_game_hands_two_decks():
    rng = np.random.default_rng(41)
    counts = random_hands(rng, 3, 2, (9, 14))
    wilds = np.array([3, 0, 13])
    check_equal(counts, wilds, rules_for(False, False, 2), "torch")


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(hand=st.lists(st.integers(0, 51), max_size=7), wild=st.integers(0, 13),
       aces_high=st.booleans(), needs_natural=st.booleans())
def test_torch_hypothesis(hand, wild, aces_high, needs_natural):
    """Shrinking search for a counterexample among hands of up to 7 cards (1 deck)."""
    counts = np.bincount(np.array(hand, dtype=np.int64), minlength=52).clip(max=1)[None]
    check_equal(counts, np.array([wild]), rules_for(aces_high, needs_natural), "torch", max_cards=fit(counts))


# --------------------------------------------------------------------------- edge cases
def counts_of(*hands: list[int]) -> np.ndarray:
    return np.stack([np.bincount(np.array(h, dtype=np.int64), minlength=52) for h in hands])


WILD = 7   # wild rank of the edge cases: every 7 is wild
EDGES = [
    [],
    parse_cards("7C 7D 7H"),                      # all wild: a set, unless a meld needs a natural
    parse_cards("7C 7D"),                         # two wilds alone: deadwood 14
    parse_cards("7C 7D 7H 7S 7C 7D 7H 7S 7C 7D"), # ten wilds (3 decks)
    parse_cards("AC 2C 3C 4C 5C 6C 8C 9C TC JC QC KC 7D 7H"),   # a 13-card run and a spare wild
    parse_cards("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC"),      # 13 clubs (the 7 a wild)
    parse_cards("QH KH AH"), parse_cards("KH AH 2H"), parse_cards("QH AH 7S"), parse_cards("AS"),
    parse_cards("AH AH 2H 2H 3H 3H QH KH"),       # aces low and high in one suit (2 decks)
    parse_cards("5C 5C 5C 5C"), parse_cards("5C 5C 5C 5C 6C 6C 6C 6C 4C 4C 4C 4C 7D"),
    parse_cards("5C 7D 7H"), parse_cards("5C 6C 7D"), parse_cards("5C 9C 7D 7H 7S"),
    parse_cards("2C 3C 9D 9H 7S 7S 7D"), parse_cards("KC KD 7H 7H QS"),
]


@needs_c
@pytest.mark.parametrize("aces_high,needs_natural", RULE_SETS)
def test_edge_cases_c(aces_high, needs_natural):
    counts = counts_of(*EDGES)
    check_equal(counts, np.full(len(EDGES), WILD), rules_for(aces_high, needs_natural, 4), "c")


@pytest.mark.parametrize("aces_high,needs_natural", RULE_SETS)
@pytest.mark.parametrize("edge", range(len(EDGES)))
def test_edge_cases_torch(edge, aces_high, needs_natural):
    """Each edge case with the smallest program that holds it (decks = its most copies of a card)."""
    counts = counts_of(EDGES[edge])
    decks = max(1, int(counts.max()))
    if decks > 1 and (aces_high or len(EDGES[edge]) > 10):
        pytest.skip("too slow for the torch program on a CPU: bench_batch_solver.py covers it")
    check_equal(counts, np.array([WILD]), rules_for(aces_high, needs_natural, decks), "torch",
                max_cards=max(3, len(EDGES[edge])))


@pytest.mark.parametrize("backend", ["torch", pytest.param("c", marks=needs_c)])
def test_known_values(backend):
    """Values worked out by hand, so that the test does not only trust the scalar solver."""
    def lp(cards: str, wild: int, aces_high=False, needs_natural=False, decks=1) -> int:
        counts = torch.from_numpy(counts_of(parse_cards(cards)))
        return int(least_penalty(counts, wild, rules_for(aces_high, needs_natural, decks), backend=backend,
                                 max_cards=fit(counts.numpy()))[0])

    assert lp("QH KH AH", 0) == 21 and lp("QH KH AH", 0, aces_high=True) == 0
    assert lp("KH AH 2H", 0, aces_high=True) == 27                 # no wrapping K-A-2
    assert lp("AS", 0, aces_high=True) == 15 and lp("AS", 1, aces_high=True) == 1   # a wild ace costs 1
    assert lp("7C 7D 7H", 7) == 0 and lp("7C 7D 7H", 7, needs_natural=True) == 21
    assert lp("7C 7D", 7) == 14 and lp("5C 7D 7H", 7, needs_natural=True) == 0
    assert lp("AC 2C 3C 4C 5C 6C 8C 9C TC JC QC KC 7D 7H", 7) == 0   # the run splits: room for the spare
    assert lp("5C 5C 5C 5C", 0, decks=4) == 0 and lp("5C 5C", 0, decks=2) == 10


def test_dtypes_and_scalar_wild():
    counts = counts_of(parse_cards("5C 6C 7C 9D"), parse_cards("KS KH 3D"))
    want = least_penalty(torch.from_numpy(counts), torch.tensor([0, 3]), Rules(), backend="torch")
    for dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        got = least_penalty(torch.from_numpy(counts).to(dtype), torch.tensor([0, 3], dtype=dtype), Rules(),
                            backend="torch")
        assert torch.equal(got, want)
    assert least_penalty(torch.from_numpy(counts), 0, Rules(), backend="torch").tolist() == [9, 23]
    assert least_penalty(torch.zeros(0, 52, dtype=torch.uint8), 0, Rules(), backend="torch").shape == (0,)


@needs_c
def test_backends_agree_and_auto_picks_c(monkeypatch):
    rng = np.random.default_rng(5)
    counts = torch.from_numpy(random_hands(rng, 30, 1, (3, 10)))
    wilds = torch.arange(30) % 14
    c = least_penalty(counts, wilds, Rules(), backend="c")
    assert torch.equal(least_penalty(counts, wilds, Rules()), c)
    calls = []
    monkeypatch.setattr(solver, "_torch_least_penalty", lambda *a: calls.append(a) or c)
    least_penalty(counts, wilds, Rules())
    assert not calls                                   # auto on CPU: C
    monkeypatch.setattr(solver._melds, "solver_backend", lambda: "python")
    assert solver._c_backend() is None
    least_penalty(counts, wilds, Rules())
    assert calls                                       # TT_ENV_SOLVER=python: the torch program
    with pytest.raises(ValueError, match="backend='c' needs the C meld solver"):
        least_penalty(counts, wilds, Rules(), backend="c")


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs,error,match", [
    (dict(counts=torch.zeros(3, 51, dtype=torch.int64)), ValueError, r"must be \(B, 52\)"),
    (dict(counts=torch.zeros(52, dtype=torch.int64)), ValueError, r"must be \(B, 52\)"),
    (dict(counts=torch.zeros(3, 52)), TypeError, "integer torch tensor"),
    (dict(counts=np.zeros((3, 52), np.int64)), TypeError, "integer torch tensor"),
    (dict(wild_rank=14), ValueError, r"wild_rank=14 is not allowed: use 1..13 \(or 0 for no wilds\)"),
    (dict(wild_rank=-1), ValueError, "use 1..13"),
    (dict(wild_rank=True), TypeError, "wild_rank must be"),
    (dict(wild_rank=torch.zeros(2, dtype=torch.long)), ValueError, r"must be \(3,\)"),
    (dict(wild_rank=torch.zeros(3)), TypeError, "integer tensor"),
    (dict(backend="gpu"), ValueError, r"use one of \['auto', 'torch', 'triton', 'c'\]"),
    (dict(rules="low"), TypeError, "Rules"),
    (dict(decks=0), ValueError, "positive int"),
    (dict(decks=5, backend="torch"), ValueError, "takes 1..4"),
    (dict(counts=torch.full((3, 52), -1), check=True), ValueError, r"counts must be 0..1"),
    (dict(counts=torch.full((3, 52), 2), check=True), ValueError, r"counts must be 0..1"),
    (dict(counts=torch.ones(3, 52, dtype=torch.int64), check=True), ValueError, "more than max_cards=14"),
    (dict(wild_rank=torch.tensor([0, 14, 3]), check=True), ValueError, r"wild_rank\[1\]=14 is not allowed"),
    # checked by default: the tensor programs are exact only for counts 0..decks
    (dict(counts=torch.tensor([[2] + [0] * 51] * 3)), ValueError,
     r"counts\[0\] has 2 of card 0: counts must be 0..1 \(decks=1, the rules' num_decks"),
    (dict(counts=torch.tensor([[0] * 51 + [1]] * 2 + [[1] * 15 + [0] * 37])), ValueError,
     r"counts\[2\] holds 15 cards, more than max_cards=14"),
    (dict(prefix=2), TypeError, "prefix must be a one-element integer torch tensor"),
    (dict(prefix=torch.tensor([2.0])), TypeError, r"not a torch.float32 tensor of shape \(1,\)"),
    (dict(prefix=torch.tensor([1, 2])), TypeError, "one-element"),
    (dict(prefix=torch.tensor([2], device="meta")), ValueError, "prefix is on meta: put it on the device of counts"),
])
def test_errors(kwargs, error, match):
    args = dict(counts=torch.zeros(3, 52, dtype=torch.int64), wild_rank=0, rules=Rules(), backend="torch")
    args.update(kwargs)
    with pytest.raises(error, match=match):
        least_penalty(args.pop("counts"), args.pop("wild_rank"), args.pop("rules"), **args)


@needs_c
def test_c_errors():
    with pytest.raises(ValueError, match="at most 40 cards"):
        least_penalty(torch.ones(2, 52, dtype=torch.int64), 0, Rules(), backend="c")
    with pytest.raises(ValueError, match="counts 0..40"):
        least_penalty(torch.full((1, 52), -1), 0, Rules(), backend="c")
    with pytest.raises(ValueError, match=r"wild_ranks\[1\]=14 is not allowed"):
        solver._c_least_penalty(solver._c_backend(), torch.zeros(2, 52, dtype=torch.uint8),
                                torch.tensor([0, 14]), Rules())


@pytest.mark.parametrize("backend", ["torch"] + (["c"] if HAS_C else []))
def test_a_prefix_solves_the_hands_in_front_and_marks_the_rest(backend: str) -> None:
    """``prefix`` (the GPU engine gathers the hands it needs to the front): the hands before it
    are solved exactly, the others read -1, whatever the prefix (none, some, all, more)."""
    rng = np.random.default_rng(8)
    counts = random_hands(rng, 10, 1, (3, 7))
    wilds = rng.integers(0, 14, 10)
    want = scalar(counts, wilds, False, False)
    args = (torch.from_numpy(counts), torch.from_numpy(wilds), Rules())
    for k in (0, 1, 6, 10, 12):
        got = least_penalty(*args, backend=backend, max_cards=fit(counts), prefix=torch.tensor(k, dtype=torch.int32))
        assert got.tolist() == want[:k].tolist() + [-1] * max(0, 10 - k)


@pytest.mark.parametrize("gib", [16, 141])
def test_the_fused_kernels_take_large_chunks_within_their_scratch_budget(monkeypatch: pytest.MonkeyPatch,
                                                                         gib: int) -> None:
    """On CUDA the fused kernels solve as many hands per launch as their tables' budget allows
    (an eighth of the GPU's memory, at most ``FUSED_SCRATCH_BYTES``): fewer, larger chunks than
    the plain program's, and never more memory than the budget."""
    class Properties:
        total_memory = gib << 30

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: Properties())
    budget = min(solver.FUSED_SCRATCH_BYTES, (gib << 30) // 8)
    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    for decks, k in ((1, 1), (1, 16), (3, 1)):
        plan = solver._plan(decks, 4, 10, cpu)
        fused = solver._default_chunk(plan, k, cuda, fused=True)
        per_hand = 2 * 2 * plan.num_states * plan.u_dim * (plan.m_dim + 1) * k
        assert fused * per_hand <= budget < (fused + 1) * per_hand
        assert fused > solver._default_chunk(plan, k, cuda, fused=False) > solver._default_chunk(plan, k, cpu, False)


def test_the_tensor_programs_refuse_by_default_the_hands_they_would_answer_wrongly():
    """Counts above the rules' decks: the tensor program, sized by the decks, answers such hands
    wrongly without a word (two runs 5H 6H 7H under one deck's rules: 18, where the C solver says
    0). Checked by default, they are refused; with decks= (or rules) that fit, answered exactly."""
    twice = torch.zeros(1, 52, dtype=torch.int64)
    twice[0, [30, 31, 32]] = 2                                 # 5H 6H 7H, two of each
    assert melds.least_penalty([30, 31, 32] * 2, 0) == 0
    assert int(least_penalty(twice, 0, Rules(), backend="torch", check=False)) == 18   # what the check prevents
    with pytest.raises(ValueError, match=r"counts\[0\] has 2 of card 30: counts must be 0..1 \(decks=1, the rules'"):
        least_penalty(twice, 0, Rules(), backend="torch")
    assert int(least_penalty(twice, 0, Rules(), backend="torch", decks=2)) == 0
    assert int(least_penalty(twice, 0, Rules(decks=2), backend="torch")) == 0
    rng = np.random.default_rng(11)
    counts = random_hands(rng, 80, 2, (4, 9))                  # two decks' hands under one deck's rules
    wilds = np.arange(80) % 14
    counts_t, wilds_t = torch.from_numpy(counts), torch.from_numpy(wilds)
    with pytest.raises(ValueError, match=r"counts\[\d+\] has 2 of card \d+: counts must be 0..1 \(decks=1"):
        least_penalty(counts_t, wilds_t, Rules(), backend="torch")
    want = torch.tensor([melds.least_penalty([c for c in range(52) for _ in range(int(row[c]))], int(w))
                         for row, w in zip(counts, wilds, strict=True)])
    assert torch.equal(least_penalty(counts_t, wilds_t, Rules(decks=2), backend="torch", max_cards=fit(counts)), want)


def test_melds_completely_checks_like_the_solver():
    """The go-out check answers from the same tensor program, and refuses the same hands."""
    from tt_env.batch.go_out import melds_completely

    twice = torch.zeros(1, 52, dtype=torch.uint8)
    twice[0, [30, 31, 32]] = 2
    with pytest.raises(ValueError, match=r"counts\[0\] has 2 of card 30: counts must be 0..1"):
        melds_completely(twice, 0, Rules(), backend="torch")
    assert bool(melds_completely(twice, 0, Rules(decks=2), backend="torch"))
    assert bool(melds_completely(twice, 0, Rules(), backend="c"))   # the C solver takes up to 40 copies


@pytest.mark.parametrize("backend", ["torch", "auto"])
def test_a_chunk_below_one_is_refused_by_name(backend: str) -> None:
    """``chunk=0`` failed with "range() arg 3 must not be zero" and ``chunk=-1`` in ``torch.cat``:
    a chunk that is not an int >= 1 is named (whatever the backend); numpy's ints are ints."""
    counts = torch.zeros(3, 52, dtype=torch.int64)
    counts[0, [0, 1, 2]] = 1
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match=rf"chunk={bad!r} is not allowed: use None \(the default size\) or "
                                             rf"an int >= 1"):
            least_penalty(counts, 5, Rules(), backend=backend, chunk=bad)
    want = least_penalty(counts, 5, Rules(), backend="torch")
    assert torch.equal(least_penalty(counts, 5, Rules(), backend="torch", chunk=np.int64(1)), want)
