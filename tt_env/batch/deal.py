"""The card moves of a new round and of a reshuffle, from a table's random stream.

Dealing is :func:`tt_env.engine.game._deal` and the reshuffle ``engine.game._refill_stock``, for
many tables at once: the same cards go to the same places; only the shuffles come from the
batch's own counter-based streams (:mod:`tt_env.batch.random_keys`). The tensor code here is the
reference; on a CPU, :func:`deal_rows` and :func:`reshuffle_rows` do the same in one C loop over
the tables that need it (``tt_env/batch/_kernels_deal.c``), and on CUDA with Triton one fused
kernel each deals or refills the tables of a mask in place (:mod:`tt_env.batch.deal_triton`).
"""

from __future__ import annotations

import torch

from .kernels import c_deal_rows as _c_deal_rows
from .kernels import c_reshuffle_rows as _c_reshuffle_rows
from .kernels import host_view, use_c, use_triton
from .kernels import written_view as _written
from .random_keys import shuffle_order, shuffle_prefix
from .state import COUNT_DTYPE, BatchState, field_dtype

_DEAL_FIELDS = ("hands", "stock", "stock_len", "pile", "pile_len", "pile_counts", "known_taken", "discards",
                "passed", "round_index", "dealer", "current", "phase", "scores", "went_out", "turn", "taken")
"""The fields :func:`deal_rows` writes, in its C loop's order (then game_over and counter)."""


def deals_in_c(device: torch.device, backend: str) -> bool:
    """Whether :func:`deal_rows` and :func:`reshuffle_rows` run here (the C loop for ``backend``)."""
    return use_c(_c_deal_rows, device, backend)


def deals_in_triton(device: torch.device, backend: str) -> bool:
    """Whether the every-row path deals and refills by the fused Triton kernels
    (:mod:`tt_env.batch.deal_triton`) for ``backend`` (:func:`tt_env.batch.kernels.use_triton`)."""
    return use_triton(device, backend)


def deal_rows(state: BatchState, rows: torch.Tensor, fresh: torch.Tensor, seed32: int, rounds: torch.Tensor,
              first_dealer_salt: int) -> None:
    """Deal the tables ``rows`` ((K,) distinct table ids) of a CPU ``state`` in place, by the C loop:
    their next round, or where ``fresh`` ((K,) bool) a new game's first (the scores cleared, the
    first dealer drawn from the table's stream with ``first_dealer_salt``). What ``BatchGame._deal``
    and :func:`dealt` do, bit for bit; ``rounds`` are the rules' round numbers."""
    fields = [_written(state, name, field_dtype(name)) for name in _DEAL_FIELDS]
    _c_deal_rows(state.hands.shape[1], seed32, first_dealer_salt, host_view(rows), host_view(fresh, torch.bool),
                 host_view(rounds), *fields, _written(state, "game_over", torch.bool), _written(state, "counter"))


def reshuffle_rows(state: BatchState, rows: torch.Tensor, seed32: int) -> None:
    """:func:`reshuffle` of the tables ``rows`` ((K,) distinct table ids) of a CPU ``state`` in place,
    by the C loop, with each table's stream."""
    _c_reshuffle_rows(seed32, host_view(rows), _written(state, "stock"), _written(state, "stock_len"),
                      _written(state, "pile"), _written(state, "pile_len"), _written(state, "pile_counts", COUNT_DTYPE),
                      _written(state, "counter"))


def dealt(s: BatchState, stream: torch.Tensor, round_index: torch.Tensor, per_hand: torch.Tensor,
          dealer: torch.Tensor, num_players: int, shoe_size: int) -> BatchState:
    """``s`` with round ``round_index`` dealt by ``dealer``: ``per_hand`` ((B,)) cards to each seat.

    The shoe is a random order (from ``stream``) of every card; cards are dealt from its end,
    one at a time to each seat from the dealer's left, then one turned up; the rest, in order,
    is the stock. ``s``'s scores and game-over flags are kept."""
    # shapes from the arguments, never from a field of s: s may gather a field on its first read (RowsOnRead)
    k, n, size = dealer.shape[0], num_players, shoe_size
    dev = dealer.device
    shoe = shuffle_order(stream, size) % 52
    dealt_cards = n * per_hand
    from_end = size - 1 - torch.arange(size, device=dev)
    in_hand = from_end.unsqueeze(0) < dealt_cards.unsqueeze(1)
    seat_of = (dealer.unsqueeze(1) + 1 + from_end.unsqueeze(0) % n) % n
    slot = torch.where(in_hand, seat_of * 52 + shoe, n * 52)
    hands = torch.zeros(k, n * 52 + 1, dtype=COUNT_DTYPE, device=dev)
    hands.scatter_add_(1, slot, torch.ones_like(slot, dtype=COUNT_DTYPE))
    stock_len = size - 1 - dealt_cards
    up = shoe.gather(1, stock_len.unsqueeze(1))
    pile = torch.zeros(k, size, dtype=shoe.dtype, device=dev)
    pile[:, :1] = up
    pile_counts = torch.zeros(k, 52, dtype=COUNT_DTYPE, device=dev)
    pile_counts.scatter_(1, up, 1)
    blank = torch.zeros(k, n, 52, dtype=COUNT_DTYPE, device=dev)
    return BatchState(hands=hands[:, :n * 52].reshape(k, n, 52).contiguous(), stock=shoe, stock_len=stock_len,
                      pile=pile, pile_len=torch.ones_like(stock_len), pile_counts=pile_counts, known_taken=blank,
                      discards=blank.clone(), passed=blank.clone(), round_index=round_index, dealer=dealer,
                      current=(dealer + 1) % n, phase=torch.zeros_like(dealer), scores=s.scores,
                      went_out=torch.full_like(dealer, -1), turn=torch.zeros_like(dealer),
                      taken=torch.full_like(dealer, -1), game_over=s.game_over, counter=s.counter + 1)


def reshuffle(part: BatchState, stream: torch.Tensor, shoe_size: int) -> None:
    """Refill an empty stock in place: the discard pile under its top card, shuffled from ``stream``."""
    under = (part.pile_len - 1).clamp(min=0)  # >= 1 where a stock draw is legal; 0 only on rows a select drops
    order = shuffle_prefix(stream, shoe_size, under)
    part.counter = part.counter + 1
    top = part.pile.gather(1, under.unsqueeze(1))
    part.stock = part.pile.gather(1, order)
    part.stock_len = under
    part.pile = torch.zeros_like(part.pile)
    part.pile[:, :1] = top
    part.pile_len = torch.ones_like(under)
    part.pile_counts = torch.zeros(len(top), 52, dtype=COUNT_DTYPE, device=top.device).scatter_(1, top, 1)
