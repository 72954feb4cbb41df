"""The observation and the action mask of the seat to move, for every table at once.

``observe`` is :func:`tt_env.observation.encode` for a batch: the same layout (version 1), the
same float32 values (scaled pieces are divided in float64 and rounded once, as the scalar
encoder's Python floats are). ``legal_mask`` is :func:`tt_env.engine.game.action_mask`.
"""

from __future__ import annotations

import torch

from ..observation import HAND_SCALE, SCORE_SCALE
from ..observation.sizes import NUM_ACTIONS
from .state import BatchState


def seat_order(seat: torch.Tensor, num_players: int) -> torch.Tensor:
    """(B, N) seats from ``seat``'s point of view: itself, then the others from its left."""
    return (seat.unsqueeze(1) + torch.arange(num_players, device=seat.device)) % num_players


def row_items(table: torch.Tensor, column: torch.Tensor) -> torch.Tensor:
    """(B,) ``table[i, column[i]]`` of a (B, C) tensor (a flat ``take``: on a CPU several times
    cheaper than ``gather`` along dim 1)."""
    at = torch.arange(0, table.shape[0] * table.shape[1], table.shape[1], device=table.device)
    return table.take(at + column)


def pile_top(state: BatchState) -> torch.Tensor:
    """(B,) top card of the discard pile, -1 where the pile is empty."""
    top = row_items(state.pile, (state.pile_len - 1).clamp(min=0))
    return torch.where(state.pile_len > 0, top, -1)


def observe(state: BatchState, round_number: torch.Tensor, num_cards: int, max_turns: int,
            seat: torch.Tensor | None = None) -> torch.Tensor:
    """(B, 107N+80) float32 observation of ``seat`` (default: the seat to move) at each table."""
    return _observe(state, round_number, num_cards, max_turns, seat)[0]


def observe_and_mask(state: BatchState, round_number: torch.Tensor, num_cards: int, max_turns: int,
                     discard_drawn_discard: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The seat to move's observation and (B, 54) bool legal actions (they share the hand)."""
    obs, hand = _observe(state, round_number, num_cards, max_turns, None)
    return obs, _legal_mask(state, hand, discard_drawn_discard)


def legal_mask(state: BatchState, discard_drawn_discard: bool) -> torch.Tensor:
    """(B, 54) bool: the legal actions of the seat to move (all False once a game is over)."""
    return _legal_mask(state, seat_counts(state.hands, state.current), discard_drawn_discard)


def seat_counts(counts: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
    """(B, 52) the counts of ``seat`` ((B,)) at each table of ``counts`` ((B, N, 52)), contiguous:
    one ``index_select`` of flat rows, the cheapest row gather on a CPU."""
    b, n = counts.shape[0], counts.shape[1]
    return counts.view(-1, 52).index_select(0, torch.arange(0, b * n, n, device=counts.device) + seat)


def _observe(state: BatchState, round_number: torch.Tensor, num_cards: int, max_turns: int,
             seat: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """(observation of ``seat``, its hand counts): each piece of the layout built whole, then one
    ``cat`` into the output. On a CPU that is about twice as fast as writing the pieces into
    column slices of the output: each slice pass touches every row of a freshly allocated output
    that no cache holds, one ``cat`` writes each row once, in order."""
    b, n = state.hands.shape[0], state.hands.shape[1]
    seat = state.current if seat is None else seat
    dev, dtype = seat.device, state.hands.dtype
    hand = seat_counts(state.hands, seat)  # the mask reads it too
    top = pile_top(state)
    top_hot = torch.zeros(b, 52, dtype=dtype, device=dev)
    top_hot.scatter_(1, top.clamp(min=0).unsqueeze(1), (top >= 0).to(dtype).unsqueeze(1))  # none where no top
    # per opponent from the observer's left: what it took and still holds, then what it discarded
    base = torch.arange(0, b * n, n, device=dev)
    others = (base.unsqueeze(1) + (seat.unsqueeze(1) + torch.arange(1, n, device=dev)) % n).view(-1)
    taken = state.known_taken.view(-1, 52).index_select(0, others).view(b, 52 * (n - 1))
    discarded = state.discards.view(-1, 52).index_select(0, others).view(b, 52 * (n - 1))
    # one-hots: wild rank (13), round (11), phase (2), who went out (N, from the observer)
    hot = torch.zeros(b, 26 + n, dtype=dtype, device=dev)
    where = torch.stack([round_number + 1, 13 + round_number - 1, 24 + state.phase,
                         26 + (state.went_out - seat) % n], dim=1)
    ones = torch.ones(b, 4, dtype=dtype, device=dev)
    ones[:, 3] = (state.went_out >= 0).to(dtype)
    hot.scatter_(1, where, ones)
    # every hand holds the round's size, the seat to move one more while it discards (not once the
    # game is over: the last discard is made); from_game_states refuses states that break this
    order = seat_order(seat, n)
    holding = (state.phase == 1) & ~state.game_over
    sizes = (round_number + 2).unsqueeze(1) + ((order == state.current.unsqueeze(1)) & holding.unsqueeze(1)).long()
    scores = state.scores.gather(1, order)
    scalars = torch.cat([sizes.double() / HAND_SCALE, (state.stock_len.double() / num_cards).unsqueeze(1),
                         scores.double() / SCORE_SCALE, (state.turn.double() / max_turns).unsqueeze(1)], dim=1)
    out = torch.cat([hand, top_hot, state.pile_counts - top_hot, taken, discarded, hot, scalars.to(dtype)], dim=1)
    return out, hand


def _legal_mask(state: BatchState, hand: torch.Tensor, discard_drawn_discard: bool) -> torch.Tensor:
    """(B, 54) bool legal actions of the seat to move, whose hand counts are ``hand`` ((B, 52)).

    Written into one output: the two draw actions, then the held cards while discarding."""
    b = hand.shape[0]
    live = ~state.game_over
    draw = (state.phase == 0) & live
    mask = torch.empty(b, NUM_ACTIONS, dtype=torch.bool, device=hand.device)
    held = mask[:, 2:]
    # the cards held, while discarding: one comparison with a per-row bar (never passed while drawing)
    bar = torch.where((state.phase == 1) & live, 0.0, float("inf")).to(hand.dtype)
    torch.gt(hand, bar.unsqueeze(1), out=held)
    if not discard_drawn_discard:
        # the card just taken may not go back unless it is all the hand holds (no other card held)
        taken = state.taken.clamp(min=0)
        others = hand.sum(dim=1) - row_items(hand, taken) > 0
        blocked = (state.taken >= 0) & others
        rows = torch.arange(b, device=hand.device)
        mask.index_put_((rows, taken + 2), row_items(mask[:, 2:], taken) & ~blocked)
    mask[:, 0] = draw & ((state.stock_len > 0) | (state.pile_len > 1))
    mask[:, 1] = draw & (state.pile_len > 0)
    return mask
