"""CardNet's meld-solver features on a torch batch: :func:`models.features.solver_features` on any device.

The numpy function solves each hand in view with the scalar C solver, one row at a time, so a
trainer that plays its tables on a GPU has to bring every batch of observations to the CPU and
back. This module computes the same ``(planes (B, 3, 52), scalars (B, 3))``, bit for bit, with
tensor operations on the observations' device and one call of the batched exact solver
(:func:`tt_env.batch.least_penalty`) for every hand the features need:

- per row, the hand as held (the penalty "now");
- per row and per distinct card in view that may be discarded (the top discard of the draw
  phase may not be), the hand in view less one copy of that card.

The candidates of a row are its at most ``MAX_CANDIDATES`` distinct cards in view, picked with
``topk``; no Python loop per row. Off the CPU the width is fixed, so the shapes never depend on
the data and nothing waits for the device (no host synchronisation on CUDA). On a CPU, where
reading a value is free, the width is the batch's largest and only the hands that count are solved.
"""

from __future__ import annotations

import functools

import torch

from tt_env.batch import least_penalty
from tt_env.engine.rules import Rules
from tt_env.observation import get_layout
from tt_env.observation.sizes import observation_size

from .features import NUM_SOLVER_PLANES, NUM_SOLVER_SCALARS, PENALTY_SCALE

MAX_CANDIDATES = 14
"""Distinct cards in view per row the features handle: hands in view hold at most 14 cards
(13 dealt and a draw), the largest the batched solver is exact for by default."""


@functools.lru_cache(maxsize=None)
def _rules(num_players: int, aces_high: bool, meld_needs_natural: bool, decks: int | None) -> Rules:
    """The rules object the batched solver reads (aces, naturals, decks)."""
    return Rules(num_players=num_players, aces="high_or_low" if aces_high else "low",
                 meld_needs_natural=meld_needs_natural, decks="auto" if decks is None else decks)


def _read_observations(obs: torch.Tensor, num_players: int
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(hand counts (B, 52) int64, top card (B,) int64, top in view (B,) bool, wild rank (B,) int64)``,
    read exactly as :func:`models.features.solver_features` reads them."""
    lay = get_layout(num_players)
    hand = torch.round(obs[:, lay.hand:lay.hand + 52]).long()  # round half to even, as np.rint
    tops = obs[:, lay.discard_top:lay.discard_top + 52]
    in_view = (tops != 0).any(dim=1) & (obs[:, lay.phase] > 0.5)  # draw phase: the top discard is in view
    top = tops.argmax(dim=1)  # first of the largest, as numpy
    wild = obs[:, lay.wild_rank:lay.wild_rank + 13].argmax(dim=1) + 1
    return hand, top, in_view, wild


def _candidates(view: torch.Tensor, top: torch.Tensor, in_view: torch.Tensor, sync_free: bool
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """``(cards (B, W) int64, valid (B, W) bool)``: the distinct cards of each hand in view that may
    be discarded (not the top discard just seen), padded with distinct cards not held.

    ``W`` is :data:`MAX_CANDIDATES` when ``sync_free`` (a fixed shape: no host synchronisation);
    else it is the batch's most candidates, and too many is an error.
    """
    cards = torch.arange(52, device=view.device)
    allowed = (view > 0) & ~(in_view.unsqueeze(1) & (cards == top.unsqueeze(1)))
    width = MAX_CANDIDATES
    if not sync_free:
        most = int(allowed.sum(1).max()) if len(view) else 0
        if most > MAX_CANDIDATES:
            raise ValueError(f"a hand in view holds {most} distinct cards that may be discarded: the solver "
                             f"features handle hands of at most {MAX_CANDIDATES} cards")
        width = max(most, 1)
    # a distinct key per card, candidates first: topk then returns every candidate, and distinct cards
    key = allowed.long() * 64 + (63 - cards)
    picked = key.topk(width, dim=1).indices
    return picked, allowed.gather(1, picked)


def _solve(hands: torch.Tensor, wild: torch.Tensor, valid: torch.Tensor, rules: Rules, backend: str,
           sync_free: bool) -> torch.Tensor:
    """``(B, W + 1)`` int64 least penalties of :func:`_hands_to_solve`'s hands; unless
    ``sync_free``, only the hands that count are solved (picking them synchronises)."""
    b, w = valid.shape
    wilds = wild.repeat_interleave(w + 1)
    if sync_free:
        return least_penalty(hands, wilds, rules, backend=backend, check=False).long().view(b, w + 1)
    needed = torch.cat([torch.ones_like(valid[:, :1]), valid], dim=1).view(-1).nonzero().squeeze(1)
    out = torch.zeros(b * (w + 1), dtype=torch.long, device=hands.device)
    out[needed] = least_penalty(hands.index_select(0, needed), wilds.index_select(0, needed), rules,
                                backend=backend).long()
    return out.view(b, w + 1)


def _hands_to_solve(hand: torch.Tensor, view: torch.Tensor, cards: torch.Tensor, valid: torch.Tensor
                    ) -> torch.Tensor:
    """``(B * (width + 1), 52)`` uint8 counts: per row the hand now, then the view less each
    candidate card (an empty hand where the slot is padding, the cheapest to solve)."""
    b, w = cards.shape
    view8 = view.to(torch.uint8)
    less = view8.unsqueeze(1).repeat(1, w, 1)                                  # (B, w, 52)
    less.scatter_(2, cards.unsqueeze(2), (view8.gather(1, cards) - valid.to(torch.uint8)).unsqueeze(2))
    less.mul_(valid.to(torch.uint8).unsqueeze(2))
    return torch.cat([hand.to(torch.uint8).unsqueeze(1), less], dim=1).reshape(b * (w + 1), 52)


def _check_input(obs: torch.Tensor, num_players: int) -> None:
    """Clear errors for observations of the wrong type or shape."""
    if not isinstance(obs, torch.Tensor):
        raise TypeError(f"obs must be a torch tensor, not {type(obs).__name__}: for numpy arrays use "
                        f"models.features.solver_features")
    size = observation_size(num_players)
    if obs.dim() != 2 or obs.shape[1] != size:
        raise ValueError(f"obs has shape {tuple(obs.shape)}: it must be (B, {size}), a batch of "
                         f"{num_players}-player observations")
    if not obs.is_floating_point():
        raise TypeError(f"obs must be a float tensor, not {obs.dtype}")


def solver_features_torch(obs: torch.Tensor, num_players: int, aces_high: bool = False,
                          meld_needs_natural: bool = False, decks: int | None = None, backend: str = "auto",
                          sync_free: bool | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(planes (B, 3, 52), scalars (B, 3))`` float32 on ``obs``'s device: exactly
    :func:`models.features.solver_features` of ``obs`` (a ``(B, obs_size)`` float tensor).

    ``decks`` (default: the automatic count for ``num_players``) bounds the copies of a card the
    solver's torch and Triton programs handle; ``backend`` is passed to :func:`tt_env.batch.least_penalty`.
    ``sync_free`` (default: off the CPU) keeps every shape fixed, so that nothing waits for the
    device; otherwise the batch is cut to the hands that count, which is faster on a CPU.
    """
    _check_input(obs, num_players)
    b, device = obs.shape[0], obs.device
    hand, top, in_view, wild = _read_observations(obs, num_players)
    view = hand.scatter_add(1, top.unsqueeze(1), in_view.long().unsqueeze(1))
    sync_free = obs.device.type != "cpu" if sync_free is None else bool(sync_free)
    cards, valid = _candidates(view, top, in_view, sync_free)
    hands = _hands_to_solve(hand, view, cards, valid)
    rules = _rules(num_players, bool(aces_high), bool(meld_needs_natural), decks)
    pen = _solve(hands, wild, valid, rules, backend, sync_free)
    now, left = pen[:, 0], pen[:, 1:]
    best = torch.where(valid, left, torch.iinfo(torch.long).max).amin(dim=1)
    best = torch.where(valid.any(dim=1), best, now)
    return _planes(cards, valid, left, best, b, device), _scalars(now, best)


def _planes(cards: torch.Tensor, valid: torch.Tensor, left: torch.Tensor, best: torch.Tensor, b: int,
            device: torch.device) -> torch.Tensor:
    """The three card planes, rounded as the numpy function rounds: float64 penalty / scale to
    float32, then the float32 difference from the best."""
    rel = (left.double() / PENALTY_SCALE).float()
    best32 = (best.double() / PENALTY_SCALE).float().unsqueeze(1)
    zero = torch.zeros((), dtype=torch.float32, device=device)
    values = torch.stack([torch.where(valid, 1.0, zero), torch.where(valid, rel, zero),
                          torch.where(valid, rel - best32, zero)], dim=1)        # (B, 3, w)
    planes = torch.zeros(b, NUM_SOLVER_PLANES, 52, dtype=torch.float32, device=device)
    # padded slots name distinct cards not held: they write the zeros those cards have anyway
    return planes.scatter_(2, cards.unsqueeze(1).expand(-1, NUM_SOLVER_PLANES, -1), values)


def _scalars(now: torch.Tensor, best: torch.Tensor) -> torch.Tensor:
    """Penalty now, best after a discard, their difference: float64 / scale, then float32."""
    now64, best64 = now.double(), best.double()
    out = torch.stack([now64 / PENALTY_SCALE, best64 / PENALTY_SCALE, (now64 - best64) / PENALTY_SCALE], dim=1)
    return out.float().reshape(-1, NUM_SOLVER_SCALARS)
