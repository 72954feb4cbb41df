"""The belief's hand model (Fisher's noncentral hypergeometric over card types) against brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from models.belief_math import (expected_counts, expected_counts_np, log_likelihood, log_normalizer,  # noqa: E402
                                sample_counts)


def brute_force(logits: np.ndarray, copies: np.ndarray, n: int) -> tuple[float, np.ndarray, dict]:
    """(log Z, expected counts, probability of each hand) by enumerating every hand."""
    types = np.flatnonzero(copies)
    weights, mean, hands = 0.0, np.zeros(52), {}
    for ks in itertools.product(*[range(copies[c] + 1) for c in types]):
        if sum(ks) != n:
            continue
        w = math.prod(math.comb(int(copies[c]), k) * math.exp(logits[c] * k) for c, k in zip(types, ks, strict=True))
        weights += w
        hands[ks] = w
        for c, k in zip(types, ks, strict=True):
            mean[c] += w * k
    return math.log(weights), mean / weights, {h: w / weights for h, w in hands.items()}


@st.composite
def pools(draw):
    types = draw(st.lists(st.integers(0, 51), min_size=1, max_size=6, unique=True))
    copies = np.zeros(52, dtype=np.int64)
    for c in types:
        copies[c] = draw(st.integers(1, 3))
    logits = np.array(draw(st.lists(st.floats(-4, 4), min_size=52, max_size=52)))
    n = draw(st.integers(0, int(copies.sum())))
    return logits, copies, n


@settings(max_examples=60, deadline=None)
@given(pools())
def test_normalizer_and_expected_counts_match_brute_force(pool):
    logits, copies, n = pool
    log_z, mean, _ = brute_force(logits, copies, n)
    args = torch.tensor(logits[None]), torch.tensor(copies[None]), torch.tensor([n])
    assert float(log_normalizer(*args)) == pytest.approx(log_z, abs=1e-9)
    for expected in (expected_counts(*args)[0].numpy(), expected_counts_np(logits, copies, n)):
        assert np.allclose(expected, mean, atol=1e-9)
        assert expected.sum() == pytest.approx(n, abs=1e-9)
        assert (expected <= copies + 1e-12).all() and (expected[copies == 0] == 0).all()


@settings(max_examples=30, deadline=None)
@given(pools())
def test_likelihood_of_each_hand(pool):
    logits, copies, n = pool
    _, _, hands = brute_force(logits, copies, n)
    types = np.flatnonzero(copies)
    for ks, p in list(hands.items())[:5]:
        hand = np.zeros(52, dtype=np.int64)
        hand[types] = ks
        ll = log_likelihood(torch.tensor(logits[None]), torch.tensor(copies[None]), torch.tensor([n]),
                            torch.tensor(hand[None]))
        assert float(ll) == pytest.approx(math.log(p), abs=1e-9)


def test_equal_weights_are_a_uniform_deal():
    """Equal logits: the multivariate hypergeometric, n u_c / U expected copies of each type."""
    rng = np.random.default_rng(0)
    copies = rng.integers(0, 3, size=52)
    n = 9
    expected = expected_counts(torch.full((1, 52), 0.7, dtype=torch.float64), torch.tensor(copies[None]),
                               torch.tensor([n]))[0].numpy()
    assert np.allclose(expected, n * copies / copies.sum())


def test_samples_follow_the_model_and_reach_every_hand():
    logits = np.zeros(52)
    logits[[3, 8, 20, 40]] = [1.5, -1.0, 0.3, 0.0]
    copies = np.zeros(52, dtype=np.int64)
    copies[[3, 8, 20, 40]] = [1, 2, 1, 2]
    n = 3
    _, mean, hands = brute_force(logits, copies, n)
    draws = sample_counts(logits, copies, n, np.random.default_rng(1), size=40_000)
    assert (draws.sum(axis=1) == n).all() and (draws <= copies).all()
    assert np.abs(draws.mean(axis=0) - mean).max() < 0.02
    seen = {tuple(d[[3, 8, 20, 40]]) for d in draws}
    assert seen == set(hands)  # every hand the copies allow occurs


def test_sampling_refuses_an_impossible_count():
    with pytest.raises(ValueError, match="cannot draw 3 cards from 2 unseen copies"):
        sample_counts(np.zeros(52), np.eye(52, dtype=np.int64)[0] * 2, 3, np.random.default_rng(0))
