"""The go-out check's cheap filter (``tt_env.batch.go_out_filter``): it never drops a hand that
melds completely (the C solver judges), it drops what it should, and its two layouts (a CPU's
13-bit masks, other devices' slices) count alike. The go-out check itself
(``tt_env.batch.go_out.melds_completely``: the filter, then the solver) is the least penalty being 0."""

from __future__ import annotations

import itertools
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from tt_env.batch import go_out, solver
from tt_env.batch.go_out_filter import _wilds_needed_bits, _wilds_needed_slices, could_meld_completely
from tt_env.batch.solver import least_penalty
from tt_env.engine import melds
from tt_env.engine.cards import parse_cards
from tt_env.engine.rules import Rules

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_batch_solver import melded_counts, random_counts, rules_for  # noqa: E402


def test_the_go_out_filter_never_drops_a_hand_that_melds() -> None:
    """``could_meld_completely`` is False only where the least penalty is above 0: on random hands
    (most of which it filters) and on hands built from melds (which it must keep)."""
    rng = np.random.default_rng(3)
    hands, wilds = [], []
    for _ in range(3000):  # random hands, 1 to 2 decks, every wild rank
        decks = int(rng.integers(1, 3))
        size = int(rng.integers(3, 15))
        hand = rng.choice(52 * decks, size, replace=False) % 52
        hands.append(np.bincount(hand, minlength=52))
        wilds.append(int(rng.integers(1, 14)))
    for _ in range(1500):  # hands of melds: a run or a set, wilds mixed in
        wild = int(rng.integers(3, 14))
        counts = np.zeros(52, dtype=np.int64)
        for _ in range(int(rng.integers(1, 4))):
            if rng.random() < 0.5:
                suit, start = int(rng.integers(4)), int(rng.integers(0, 11))
                for r in range(start, start + 3 + int(rng.integers(0, 2))):
                    counts[suit * 13 + min(r, 12)] += 1
            else:
                rank = int(rng.integers(13))
                for suit in rng.choice(4, 3, replace=False):
                    counts[suit * 13 + rank] += 1
        for _ in range(int(rng.integers(0, 3))):
            counts[int(rng.integers(4)) * 13 + wild - 1] += 1
        hands.append(np.minimum(counts, 2))
        wilds.append(wild)
    counts = torch.as_tensor(np.array(hands), dtype=torch.uint8)
    wild = torch.as_tensor(wilds)
    rules = Rules(decks=2)
    zero = least_penalty(counts, wild, rules) == 0
    keep = could_meld_completely(counts, wild)
    assert bool(keep[zero].all()), "a hand that melds completely was filtered out"
    assert int(zero.sum()) > 200 and int((~keep).sum()) > 1000  # both kinds really occur
    aces = Rules(decks=2, aces="high_or_low")
    assert bool(could_meld_completely(counts, wild)[least_penalty(counts, wild, aces) == 0].all())


@pytest.mark.parametrize("text,wild,keeps", [
    ("2S 5S 7C 7D", 7, True),          # two isolated spades share a run and its two wilds: 2 W W 5
    ("2S 5H 7C 7D", 7, False),         # isolated in two suits: two melds, four wilds needed
    ("2S 5H 7C 7D 7H 7S", 7, True),    # ... and four are there
    ("2S 8S JS 7C 7D 7H", 7, False),   # three isolated spades: 2 * ceil(3 / 2) = 4 wilds needed
    ("2S 8S JS 7C 7D 7H 7S", 7, True),
    ("2S 3S 4S 9H", 7, False),         # one isolated natural, no wild
    ("2S 3S 4S", 7, True),             # nothing isolated
    ("2S 3S 4S 9H 9D 9C", 7, True),    # a run and a set of naturals alone: no wild needed
    ("QS KS AS 9H 9D 9C", 7, True),    # ... the ace above the king too (aces high)
    ("2S 3S 4S 9H 9D", 7, False),      # a pair needs a wild, and there is none
    ("2S 3S 4S 9H 9D 7C", 7, True),    # ... one wild
    ("5S 6S 8S 7C", 7, True),          # naturals needing wilds, all of one suit: one run may do
    ("5S 6S 9H 9D 7C", 7, False),      # spades and nines: two melds, each with a wild
    ("5S 6S 9H 9D 7C 7D", 7, True),
])
def test_the_go_out_filter_counts_the_wilds_a_hand_needs(text: str, wild: int, keeps: bool) -> None:
    """Each suit with ``k`` isolated naturals needs ``2 * ceil(k / 2)`` wilds, naturals outside
    any meld of naturals need a wild in their meld, two such melds if they span two suits and two
    ranks; the filter keeps a hand with that many wilds (whether it melds is the solver's to say)
    and drops one with fewer."""
    counts = torch.as_tensor(np.bincount(parse_cards(text), minlength=52), dtype=torch.uint8).view(1, 52)
    assert bool(could_meld_completely(counts, torch.tensor([wild]))) == keeps
    wilds, needed, melds = _wilds_needed_slices(counts.view(1, 4, 13), torch.tensor([wild]))  # a GPU's
    assert bool(wilds >= torch.maximum(needed, melds)) == keeps
    if not keeps:
        assert int(least_penalty(counts, wild, Rules(decks=2))) > 0


def test_the_go_out_filter_keeps_every_hand_of_melds_in_every_rule_group() -> None:
    """The benchmark's hands built from melds (runs around the ace too, sets, wilds swapped in),
    1 to 4 decks, both ace rules, ``meld_needs_natural`` both ways: every hand that melds is
    kept, and the filter still drops many (``bench_batch_solver.py --filter-hands`` runs more)."""
    rng = np.random.default_rng(12)
    kept_all = dropped = 0
    for decks, aces_high, natural in itertools.product((1, 2, 3, 4), (False, True), (False, True)):
        counts, wilds = melded_counts(rng, 1000, decks)
        counts_t, wilds_t = torch.from_numpy(counts), torch.from_numpy(wilds)
        melds_completely = least_penalty(counts_t, wilds_t, rules_for(decks, aces_high, natural)) == 0
        kept = could_meld_completely(counts_t, wilds_t)
        assert bool(kept[melds_completely].all()), (decks, aces_high, natural)
        kept_all += int(melds_completely.sum())
        dropped += int((~kept).sum())
    assert kept_all > 8000 and dropped > 1000


def test_the_go_out_filter_counts_alike_in_both_layouts() -> None:
    """A CPU counts the wilds a hand needs on 13-bit rank masks, other devices on slices of
    (B, 4, 13) tensors: the same three counts for every hand, random or built from melds, 1 to 4
    decks, every wild rank and none."""
    rng = np.random.default_rng(21)
    for decks in (1, 2, 3, 4):
        for counts, wilds in (melded_counts(rng, 1500, decks), (random_counts(rng, 1500, decks),
                                                                 rng.integers(0, 14, 1500))):
            cards = torch.from_numpy(counts).to(torch.uint8).view(-1, 4, 13)
            wild = torch.from_numpy(wilds)
            for bits, slices in zip(_wilds_needed_bits(cards, wild), _wilds_needed_slices(cards, wild), strict=True):
                assert torch.equal(bits, slices)


def test_the_c_loop_filters_as_the_tensor_code_does() -> None:
    """The C loop's filter (eight counts at a time as bytes of a word, no branch per card) keeps
    exactly the hands ``could_meld_completely`` keeps: random hands, hands built from melds and
    hands crowded into a few ranks and suits, 1 to 4 decks, up to 40 cards, every wild rank and none."""
    module = solver._c_backend()
    if module is None or not hasattr(module, "_could_meld_completely_counts"):
        pytest.skip("the C solver is not built")
    rng = np.random.default_rng(33)
    for decks in (1, 2, 3, 4):
        crowded = np.zeros((2000, 52), dtype=np.int64)  # up to 40 cards on 2 suits and 6 ranks
        for row, size in enumerate(rng.integers(3, 41, 2000)):
            cards = rng.integers(0, 2, size) * 13 + rng.integers(0, 6, size)
            np.add.at(crowded[row], cards, 1)
        crowded = np.minimum(crowded, decks)
        for counts, wilds in (melded_counts(rng, 2000, decks), (random_counts(rng, 2000, decks),
                                                                 rng.integers(0, 14, 2000)),
                              (crowded, rng.integers(0, 14, 2000))):
            hands = torch.from_numpy(counts).to(torch.uint8)
            wild = torch.from_numpy(np.asarray(wilds, dtype=np.int64))
            out = np.zeros(len(hands), dtype=np.bool_)
            module._could_meld_completely_counts(hands.numpy(), wild.numpy(), False, False, out)
            assert np.array_equal(out, could_meld_completely(hands, wild).numpy())


@pytest.mark.parametrize("backend", ["c", "torch"])
def test_melds_completely_is_the_least_penalty_being_zero(backend: str) -> None:
    """``melds_completely`` (the go-out check: the filter, then the solver on what it keeps; one C
    loop with the C backend) says True exactly where ``least_penalty`` is 0: hands built from
    melds and random hands, 1 to 4 decks, both ace rules, ``meld_needs_natural`` both ways, every
    wild rank and none."""
    if backend == "c" and solver._c_backend() is None:
        pytest.skip("the C meld solver is not built or not in use")
    rng = np.random.default_rng(5)
    per_group = 400 if backend == "c" else 80
    zeros = 0
    groups = list(itertools.product((1, 2, 3, 4), (False, True), (False, True)))
    if backend == "torch":  # the plain tensor program is slow on a CPU (tests/test_batch_solver.py checks it)
        groups = [(1, False, False), (1, False, True)]
    for decks, aces_high, natural in groups:
        melded, wilds = melded_counts(rng, per_group, decks)
        counts = torch.from_numpy(np.concatenate([melded, random_counts(rng, per_group // 4, decks)]))
        wild = torch.from_numpy(np.concatenate([wilds, rng.integers(0, 14, per_group // 4)]))
        rules = rules_for(decks, aces_high, natural)
        # the scalar solver, one hand at a time, is the oracle
        want = torch.tensor([melds.least_penalty([c for c in range(52) for _ in range(row[c])], w, aces_high, natural) == 0
                             for row, w in zip(counts.tolist(), wild.tolist(), strict=True)])
        got = go_out.melds_completely(counts.to(torch.uint8), wild, rules, backend=backend)
        assert got.dtype == torch.bool and torch.equal(got, want), (decks, aces_high, natural)
        zeros += int(want.sum())
    assert len(groups) * per_group // 4 < zeros < len(groups) * per_group  # many hands meld completely, many do not


def test_melds_completely_checks_its_input() -> None:
    """Bad input is refused with the allowed values named, before any C loop reads it."""
    counts = torch.zeros(2, 52, dtype=torch.uint8)
    with pytest.raises(ValueError, match="backend='gpu' is not allowed"):
        go_out.melds_completely(counts, 3, Rules(), backend="gpu")
    with pytest.raises(ValueError, match=r"must be \(B, 52\)"):
        go_out.melds_completely(counts[:, :13], 3, Rules())
    with pytest.raises(TypeError, match="integer torch tensor"):
        go_out.melds_completely(counts.float(), 3, Rules())
    with pytest.raises(ValueError, match="wild_rank=14 is not allowed"):
        go_out.melds_completely(counts, 14, Rules())
    module = solver._c_backend()
    if module is not None:
        with pytest.raises(TypeError, match="out must be a bool or uint8 buffer"):
            module.melds_completely_counts(counts.numpy(), np.zeros(2, np.int64), False, False, np.zeros(2, np.int64))
        too_many = torch.zeros(1, 52, dtype=torch.uint8)
        too_many[0, :41] = 1
        with pytest.raises(ValueError, match=r"at most 40 cards \(card 40 has 1\)"):
            module.melds_completely_counts(too_many.numpy(), np.array([3]), False, False, np.zeros(1, np.bool_))
        with pytest.raises(ValueError, match="52 per hand, one per hand and one per hand"):
            module.melds_completely_counts(counts.numpy(), np.zeros(3, np.int64), False, False, np.zeros(3, np.bool_))


def test_melds_completely_with_a_c_build_older_than_its_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A C extension built before ``melds_completely_counts`` existed still answers exactly: the
    filter in torch, then its ``least_penalty_counts`` on the hands kept."""
    module = solver._c_backend()
    if module is None:
        pytest.skip("the C meld solver is not built or not in use")
    old_build = types.SimpleNamespace(least_penalty_counts=module.least_penalty_counts)
    monkeypatch.setattr(solver, "_c_backend", lambda: old_build)
    counts, wilds = melded_counts(np.random.default_rng(8), 300, 2)
    counts_t, wilds_t = torch.from_numpy(counts).to(torch.uint8), torch.from_numpy(wilds)
    rules = Rules(decks=2)
    want = least_penalty(counts_t, wilds_t, rules) == 0
    assert 50 < int(want.sum()) < 300
    assert torch.equal(go_out.melds_completely(counts_t, wilds_t, rules), want)


def test_on_a_cpu_the_go_out_check_is_one_c_loop_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """``backend="auto"`` on CPU tensors runs the C loop (filter and solver in one call), not the
    filter in torch and the solver on the kept hands: the engine's go-out check on a CPU."""
    module = solver._c_backend()
    if module is None or not hasattr(module, "melds_completely_counts"):
        pytest.skip("the C meld solver is not built or not in use")
    calls: list[int] = []

    def counted(counts, *args):  # type: ignore[no-untyped-def]
        calls.append(len(counts))
        return module.melds_completely_counts(counts, *args)

    recording = types.SimpleNamespace(least_penalty_counts=module.least_penalty_counts, melds_completely_counts=counted)
    monkeypatch.setattr(solver, "_c_backend", lambda: recording)
    counts, wilds = melded_counts(np.random.default_rng(9), 64, 1)
    got = go_out.melds_completely(torch.from_numpy(counts).to(torch.uint8), torch.from_numpy(wilds), Rules())
    assert calls == [64] and got.dtype == torch.bool and got.shape == (64,)
