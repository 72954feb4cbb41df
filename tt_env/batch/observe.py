"""The observation and the action mask of the seat to move, for every table at once.

``observe`` is :func:`tt_env.observation.encode` for a batch: the same layout (version 1), the
same float32 values (each scaled piece is the float64 quotient rounded once, as the scalar
encoder's Python floats are; see ``_scales``). ``legal_mask`` is :func:`tt_env.engine.game.action_mask`.

Three backends give the same numbers: the tensor code below (``"torch"``: any device, the
reference); on a CPU, one C loop that writes each table's row once (``"c"``,
``tt_env/batch/_kernels_observe.c``; several times faster there than a dozen tensor pieces
joined); and one fused Triton kernel (``"triton"``, :mod:`tt_env.batch.observe_triton`: one
launch on a GPU instead of about eighty). ``"auto"`` takes C for CPU tensors when the extension
is built, Triton for CUDA tensors when it is installed, else the tensor code.
"""

from __future__ import annotations

import functools

import torch

from ..observation import HAND_SCALE, SCORE_SCALE
from ..observation.sizes import NUM_ACTIONS, OBS_FIXED, OBS_PER_PLAYER
from . import observe_triton
from .kernels import c_observe_and_mask as _c_observe_and_mask
from .kernels import c_seat_hands as _c_seat_hands
from .kernels import host_view, use_c, use_triton
from .state import COUNT_DTYPE, BatchState


def seat_order(seat: torch.Tensor, num_players: int) -> torch.Tensor:
    """(B, N) seats from ``seat``'s point of view: itself, then the others from its left."""
    return _rotations(num_players, seat.device).index_select(0, seat)


@functools.cache
def _rotations(num_players: int, device: torch.device) -> torch.Tensor:
    """(N, N) row ``s``: the seats from ``s``'s point of view. Looked up by seat: an int64
    remainder per element costs a CPU several times more than one row gather."""
    n = num_players
    return ((torch.arange(n).unsqueeze(1) + torch.arange(n)) % n).to(device)


@functools.cache
def _relative_seats(num_players: int, device: torch.device) -> torch.Tensor:
    """(N + 1) * N table: at ``(who + 1) * N + seat``, ``who``'s place from ``seat``'s point of
    view, ``(who - seat) % N`` (the row of ``who == -1``, nobody, is never read as a place)."""
    n = num_players
    who, seat = torch.arange(-1, n).unsqueeze(1), torch.arange(n)
    return ((who - seat) % n).reshape(-1).to(device)


@functools.cache
def _scales(num_players: int, num_cards: int, max_turns: int, device: torch.device) -> tuple[torch.Tensor, torch.dtype]:
    """The divisors of the scaled pieces (hand sizes, stock size, scores, turn) and the dtype to
    divide in. float32 when every divisor is an integer that float32 holds exactly (and so, far
    below 2**24, are the sizes, turns and scores they divide): a float32 quotient of two exact
    float32 numbers is the correctly rounded quotient, and so is the float64 quotient rounded to
    float32 (float64 holds more than twice float32's digits), which is what the scalar encoder's
    Python floats give. float64 otherwise."""
    n = num_players
    values = [HAND_SCALE] * n + [float(num_cards)] + [SCORE_SCALE] * n + [float(max_turns)]
    exact = all(v == int(v) and 1 <= v <= 2**24 for v in values)
    dtype = torch.float32 if exact else torch.float64
    return torch.tensor(values, dtype=dtype, device=device), dtype


def row_items(table: torch.Tensor, column: torch.Tensor) -> torch.Tensor:
    """(B,) ``table[i, column[i]]`` of a (B, C) tensor (a flat ``index_select``: on a CPU cheaper
    than a ``take`` or a ``gather`` along dim 1)."""
    at = torch.arange(0, table.shape[0] * table.shape[1], table.shape[1], device=table.device)
    return table.reshape(-1).index_select(0, at + column)


def pile_top(state: BatchState) -> torch.Tensor:
    """(B,) top card of the discard pile, -1 where the pile is empty."""
    top = row_items(state.pile, (state.pile_len - 1).clamp(min=0))
    return torch.where(state.pile_len > 0, top, -1)


def observe(state: BatchState, round_number: torch.Tensor, num_cards: int, max_turns: int,
            seat: torch.Tensor | None = None, *, backend: str = "auto") -> torch.Tensor:
    """(B, 107N+80) float32 observation of ``seat`` (default: the seat to move) at each table."""
    kernel = _kernel(state, backend, num_cards, max_turns)
    if kernel == "c":
        return _observe_in_c(state, round_number, num_cards, max_turns, seat, None)[0]
    if kernel == "triton":
        return observe_triton.observe_and_mask(state, round_number, num_cards, max_turns, HAND_SCALE, SCORE_SCALE,
                                               seat, None)[0]
    return _observe(state, round_number, num_cards, max_turns, seat)[0]


def observe_and_mask(state: BatchState, round_number: torch.Tensor, num_cards: int, max_turns: int,
                     discard_drawn_discard: bool, *, backend: str = "auto", out: torch.Tensor | None = None
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """The seat to move's observation and (B, 54) bool legal actions (they share the hand).

    ``out``: a contiguous (B, 107N+80) float32 tensor on the state's device that receives the
    observation (and is returned), instead of a new one."""
    shape = (state.hands.shape[0], OBS_PER_PLAYER * state.hands.shape[1] + OBS_FIXED)
    if out is not None and (out.shape != shape or out.dtype != COUNT_DTYPE or not out.is_contiguous()):
        raise ValueError(f"out is a {out.dtype} tensor of shape {tuple(out.shape)}: it must be a contiguous "
                         f"float32 one of shape {shape}")
    kernel = _kernel(state, backend, num_cards, max_turns)
    if kernel == "c":
        return _observe_in_c(state, round_number, num_cards, max_turns, None, discard_drawn_discard, out)
    if kernel == "triton":
        return observe_triton.observe_and_mask(state, round_number, num_cards, max_turns, HAND_SCALE, SCORE_SCALE,
                                               None, discard_drawn_discard, out)
    obs, hand = _observe(state, round_number, num_cards, max_turns, None)
    return obs if out is None else out.copy_(obs), _legal_mask(state, hand, discard_drawn_discard)


def _kernel(state: BatchState, backend: str, num_cards: int, max_turns: int) -> str:
    """Which code ``backend`` means for this state: ``"c"``, ``"triton"`` or ``"torch"`` (see
    :data:`tt_env.batch.kernels.KERNEL_BACKENDS`; a bad value raises ``ValueError``)."""
    device = state.hands.device
    if use_c(_c_observe_and_mask, device, backend):
        return "c"
    if not use_triton(device, backend):
        return "torch"
    if observe_triton.usable(num_cards, max_turns, HAND_SCALE, SCORE_SCALE):
        return "triton"
    if backend == "triton":
        raise ValueError("backend='triton' needs divisors that float32 holds as whole numbers (num_cards="
                         f"{num_cards}, max_turns={max_turns}): use 'torch' or 'auto'")
    return "torch"


def _observe_in_c(state: BatchState, round_number: torch.Tensor, num_cards: int, max_turns: int,
                  seat: torch.Tensor | None, discard_drawn_discard: bool | None, out: torch.Tensor | None = None
                  ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The C loop's observation of ``seat`` (into ``out`` if given) and, unless
    ``discard_drawn_discard`` is None, the mask."""
    b, n = state.hands.shape[0], state.hands.shape[1]
    obs = torch.empty(b, OBS_PER_PLAYER * n + OBS_FIXED, dtype=COUNT_DTYPE) if out is None else out
    mask = None if discard_drawn_discard is None else torch.empty(b, NUM_ACTIONS, dtype=torch.bool)

    s, f32 = state, COUNT_DTYPE
    counts = [host_view(t, f32) for t in (s.hands, s.pile_counts, s.known_taken, s.discards)]
    fields = [host_view(t) for t in (s.pile, s.pile_len, s.current if seat is None else seat, s.current, s.phase,
                                     s.went_out, round_number, s.stock_len, s.scores, s.turn)]
    outputs = (obs.numpy(), None if mask is None else mask.numpy())  # host: CPU tensors, written in place
    _c_observe_and_mask(n, *counts, *fields, host_view(s.game_over, torch.bool), host_view(s.taken),
                        float(num_cards), float(max_turns), HAND_SCALE, SCORE_SCALE, bool(discard_drawn_discard),
                        *outputs)
    return obs, mask


def legal_mask(state: BatchState, discard_drawn_discard: bool) -> torch.Tensor:
    """(B, 54) bool: the legal actions of the seat to move (all False once a game is over)."""
    return _legal_mask(state, seat_counts(state.hands, state.current), discard_drawn_discard)


def seat_counts(counts: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
    """(B, 52) the counts of ``seat`` ((B,)) at each table of ``counts`` ((B, N, 52)), contiguous:
    one ``index_select`` of flat rows, the cheapest row gather on a CPU."""
    b, n = counts.shape[0], counts.shape[1]
    return counts.view(-1, 52).index_select(0, torch.arange(0, b * n, n, device=counts.device) + seat)


def seat_hand_bytes(counts: torch.Tensor, seat: torch.Tensor, *, backend: str = "auto") -> torch.Tensor:
    """(B, 52) uint8 :func:`seat_counts` (the go-out check's input): on a CPU one C loop reads just
    those rows and writes bytes, instead of a float copy of them and a conversion pass."""
    if not use_c(_c_seat_hands, counts.device, backend):
        return seat_counts(counts, seat).to(torch.uint8)
    out = torch.empty(counts.shape[0], 52, dtype=torch.uint8)
    _c_seat_hands(counts.shape[1], host_view(counts, COUNT_DTYPE), host_view(seat), out.numpy())  # host: CPU tensors
    return out


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
    order = seat_order(seat, n)
    others = (torch.arange(0, b * n, n, device=dev).unsqueeze(1) + order[:, 1:]).view(-1)
    taken = state.known_taken.view(-1, 52).index_select(0, others).view(b, 52 * (n - 1))
    discarded = state.discards.view(-1, 52).index_select(0, others).view(b, 52 * (n - 1))
    # one-hots: wild rank (13), round (11), phase (2), who went out (N, from the observer)
    hot = torch.zeros(b, 26 + n, dtype=dtype, device=dev)
    went_out = _relative_seats(n, dev).index_select(0, (state.went_out + 1) * n + seat)
    where = torch.stack([round_number + 1, round_number + 12, state.phase + 24, went_out + 26], dim=1)
    ones = torch.ones(b, 4, dtype=dtype, device=dev)
    ones[:, 3] = (state.went_out >= 0).to(dtype)
    hot.scatter_(1, where, ones)
    # every hand holds the round's size, the seat to move one more while it discards (not once the
    # game is over: the last discard is made); from_game_states refuses states that break this
    holding = (state.phase == 1) & ~state.game_over
    sizes = (round_number + 2).unsqueeze(1) + ((order == state.current.unsqueeze(1)) & holding.unsqueeze(1)).long()
    divisors, quotient_dtype = _scales(n, num_cards, max_turns, dev)
    numerators = torch.cat([sizes, state.stock_len.unsqueeze(1), state.scores.gather(1, order),
                            state.turn.unsqueeze(1)], dim=1)
    scalars = numerators.to(quotient_dtype) / divisors
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
    # the cards held, while discarding: the counts (never negative) zeroed on the other rows, then
    # converted to bool, nonzero is True (on a CPU several times cheaper than a comparison
    # that writes bools)
    held.copy_(hand * ((state.phase == 1) & live).to(hand.dtype).unsqueeze(1))
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
