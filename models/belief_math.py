"""Fisher's noncentral hypergeometric distribution over card types: the belief's hand model.

An opponent's ``n`` unknown cards are a draw from the ``u_c`` unseen copies of each card type
``c``, where every copy of type ``c`` weighs ``w_c = exp(logit_c)``:

    P(k) = prod_c C(u_c, k_c) w_c^k_c / Z,    sum_c k_c = n,  0 <= k_c <= u_c,

with ``Z`` the coefficient of ``x^n`` in ``prod_c (1 + w_c x)^u_c``. Equal weights give the
multivariate hypergeometric distribution, which is exactly a uniform deal (``determinize``),
so the learned model contains the uniform one. Every hand the unseen copies allow has
positive probability whatever the (finite) weights; expected counts are at most ``u_c``, zero
where ``u_c = 0``, and add up to ``n``. ``log Z`` comes from a short dynamic programme over
the 52 types (in log space); its gradient in the logits is the vector of expected counts;
exact samples come from the same programme run from the last type back.
"""

from __future__ import annotations

import math

import numpy as np
import torch

NEG = -1.0e9
"""Log of zero, kept finite so that no NaN appears in gradients."""
MAX_COPIES = 64
_LOG_BINOM = np.array([[math.lgamma(u + 1) - math.lgamma(j + 1) - math.lgamma(u - j + 1) if j <= u else NEG
                        for j in range(MAX_COPIES + 1)] for u in range(MAX_COPIES + 1)])
"""``log C(u, j)`` (``NEG`` where ``j > u``), for u, j in 0..64."""


def log_normalizer(logits: torch.Tensor, copies: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """``log Z`` per row: logits ``(B, 52)`` float, copies ``u`` ``(B, 52)`` int, counts ``n`` ``(B,)`` int."""
    batch = logits.shape[0]
    top = int(counts.max()) if batch else 0
    most = min(int(copies.max()) if batch else 0, top)
    log_binom = torch.as_tensor(_LOG_BINOM[:, :most + 1], dtype=logits.dtype)[copies.long()]  # (B, 52, J)
    e = torch.full((batch, top + 1), NEG, dtype=logits.dtype)
    e[:, 0] = 0.0
    pad = torch.full((batch, most), NEG, dtype=logits.dtype)
    for c in range(52):
        shifted = torch.cat([pad, e], dim=1)  # shifted[:, most + k - j] = e[:, k - j]
        terms = [e + log_binom[:, c, 0:1]]
        for j in range(1, most + 1):
            terms.append(shifted[:, most - j:most - j + top + 1] + log_binom[:, c, j:j + 1] + j * logits[:, c:c + 1])
        e = torch.logsumexp(torch.stack(terms), dim=0) if most else terms[0]
    return e.gather(1, counts.long().view(-1, 1)).squeeze(1)


def log_likelihood(logits: torch.Tensor, copies: torch.Tensor, counts: torch.Tensor,
                   hands: torch.Tensor) -> torch.Tensor:
    """``log P(hands)`` per row, ``hands`` the ``(B, 52)`` counts of the true unknown cards."""
    log_binom = torch.as_tensor(_LOG_BINOM, dtype=logits.dtype)[copies.long(), hands.long()]
    return (log_binom + hands.to(logits.dtype) * logits).sum(dim=1) - log_normalizer(logits, copies, counts)


def expected_counts(logits: torch.Tensor, copies: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """``E[k_c]`` per row ``(B, 52)``: the gradient of ``log Z`` in the logits, rows scaled to add up to ``n``."""
    if logits.shape[0] == 0 or int(counts.max()) == 0:
        return torch.zeros(logits.shape, dtype=torch.float64)
    with torch.enable_grad():
        x = logits.detach().double().requires_grad_(True)
        (grad,) = torch.autograd.grad(log_normalizer(x, copies, counts).sum(), x)
    grad = grad.clamp(min=0.0) * (copies > 0)
    total = grad.sum(dim=1, keepdim=True)
    scaled = torch.where(total > 0, grad * (counts.view(-1, 1).double() / total.clamp(min=1e-300)), grad)
    return torch.minimum(scaled, copies.double())


_BINOM = np.array([[math.comb(u, j) for j in range(MAX_COPIES + 1)] for u in range(MAX_COPIES + 1)], dtype=np.float64)


def _times_card(row: np.ndarray, u: int, weight: float) -> np.ndarray:
    """``row``'s polynomial times ``(1 + w x)^u``, truncated to its degree, scaled to a maximum of 1.

    The numpy programmes work in linear space with a scale per row: every quantity they use is
    a ratio of coefficients of one row, so the scales cancel.
    """
    out = row.copy()
    top = row.size - 1
    power = 1.0
    for j in range(1, min(u, top) + 1):
        power *= weight
        out[j:] += _BINOM[u, j] * power * row[:top + 1 - j]
    peak = out.max()
    return out / peak if peak > 0 else out


def _suffix_table(weights: np.ndarray, copies: np.ndarray, top: int) -> np.ndarray:
    """``S[c]``: the coefficients of ``x^0..x^top`` in ``prod_{c' >= c} (1 + w_c' x)^u_c'``, each row scaled."""
    table = np.zeros((53, top + 1))
    table[52, 0] = 1.0
    for c in range(51, -1, -1):
        u = int(copies[c])
        table[c] = table[c + 1] if u == 0 else _times_card(table[c + 1], u, weights[c])
    return table


def _weights(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    return np.exp(logits - logits.max())  # a common factor changes nothing: P(k) depends on ratios only


def expected_counts_np(logits: np.ndarray, copies: np.ndarray, count: int) -> np.ndarray:
    """:func:`expected_counts` of one row in numpy (prefix and suffix programmes, no autograd)."""
    copies = np.asarray(copies, dtype=np.int64)
    out = np.zeros(52)
    if count <= 0:
        return out
    weights = _weights(logits)
    suffix = _suffix_table(weights, copies, count)
    prefix = np.zeros(count + 1)
    prefix[0] = 1.0
    for c in np.flatnonzero(copies):
        u = int(copies[c])
        rest = np.convolve(prefix, suffix[c + 1])[:count + 1]  # the other cards' coefficients
        js = np.arange(min(u, count) + 1)
        terms = _BINOM[u, js] * weights[c] ** js * rest[count - js]
        out[c] = float((js * terms).sum() / terms.sum())
        prefix = _times_card(prefix, u, weights[c])
    total = out.sum()
    if total > 0:
        out *= count / total
    return np.minimum(out, copies)


def sample_counts(logits: np.ndarray, copies: np.ndarray, count: int, rng: np.random.Generator,
                  size: int = 1, suffix: np.ndarray | None = None) -> np.ndarray:
    """``size`` exact draws ``(size, 52)`` of the counts ``k`` (``count`` cards from ``copies`` weighed by ``logits``).

    ``suffix`` (:func:`suffix_table` of the same arguments) may be passed to reuse it across calls.
    """
    copies = np.asarray(copies, dtype=np.int64)
    if count < 0 or count > int(copies.sum()):
        raise ValueError(f"cannot draw {count} cards from {int(copies.sum())} unseen copies")
    weights = _weights(logits)
    table = suffix if suffix is not None else _suffix_table(weights, copies, count)
    out = np.zeros((size, 52), dtype=np.int64)
    left = np.full(size, count, dtype=np.int64)
    for c in np.flatnonzero(copies):
        if not left.any():
            break
        u = int(copies[c])
        js = np.arange(min(u, count) + 1)
        rest = left[:, None] - js[None, :]
        p = np.where(rest >= 0, table[c + 1][np.clip(rest, 0, count)] * (_BINOM[u, js] * weights[c] ** js), 0.0)
        cum = np.cumsum(p, axis=1)
        pick = (rng.random(size)[:, None] * cum[:, -1:] > cum).sum(axis=1)
        out[:, c] = pick
        left -= pick
    return out


def suffix_table(logits: np.ndarray, copies: np.ndarray, count: int) -> np.ndarray:
    """The table :func:`sample_counts` builds, to reuse for many draws of the same arguments."""
    return _suffix_table(_weights(logits), np.asarray(copies, dtype=np.int64), count)
