"""What a batched step is given, checked and put on the device: the actions, the tables to step,
and the seats whose view a finished game's last observation is (and the tables ``reset_tables``
deals new games on).

Shapes and dtypes are checked at every call (free: no wait on the device). Values are checked
only where the caller asks (``BatchGame(check_actions=True)``, the default): that check reads the
device once, the one wait a step makes, so a fast loop turns it off. Unchecked, an illegal action
(out of range, or masked off) plays its table's first legal action instead (a draw from the
stock, or the discard of the lowest card it may discard), and final seats are clamped into range:
no table becomes a state the rules cannot reach, and no kernel reads past a table's seats.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..engine.game import NUM_ACTIONS


def integer_rows(values: Any, num_rows: int, device: torch.device, what: str) -> torch.Tensor:
    """``values`` (a tensor, array or sequence) as a (``num_rows``,) int64 tensor on ``device``;
    ``ValueError`` naming ``what`` (for instance "integer tensor of seats 0..3") if it is not one."""
    if not isinstance(values, torch.Tensor):
        try:
            values = torch.as_tensor(np.asarray(values))
        except (TypeError, ValueError, RuntimeError):  # (None, strings, ragged lists: torch cannot read them)
            raise ValueError(f"must be a ({num_rows},) {what}, got {type(values).__name__}") from None
    if values.shape != (num_rows,) or values.dtype.is_floating_point or values.dtype.is_complex \
            or values.dtype == torch.bool:
        raise ValueError(f"must be a ({num_rows},) {what}, got shape {tuple(values.shape)} and dtype {values.dtype}")
    return values.to(device=device, dtype=torch.int64)


def table_mask(mask: Any, num_tables: int, device: torch.device, name: str, meaning: str) -> torch.Tensor:
    """``mask`` as a (B,) bool tensor on ``device``; ``ValueError`` naming it (``name``: what the
    tables where it holds are, ``meaning``) otherwise. Integers are refused, not cast: table
    numbers given for a mask would pick other tables."""
    try:
        mask = torch.as_tensor(mask, device=device)
    except (TypeError, ValueError, RuntimeError):  # (None, strings, ragged lists: torch cannot read them)
        raise ValueError(f"{name} must be a ({num_tables},) bool tensor ({meaning}), got "
                         f"{type(mask).__name__}") from None
    if mask.shape != (num_tables,) or mask.dtype != torch.bool:
        raise ValueError(f"{name} must be a ({num_tables},) bool tensor ({meaning}), got shape "
                         f"{tuple(mask.shape)} and dtype {mask.dtype}")
    return mask


def checked_active(active: Any, num_tables: int, device: torch.device) -> torch.Tensor:
    """``active`` (the tables to step) as a (B,) bool tensor on ``device``."""
    return table_mask(active, num_tables, device, "active", "the tables to step")


def checked_actions(actions: Any, num_tables: int, device: torch.device) -> torch.Tensor:
    """``actions`` as a (B,) int64 tensor on ``device`` (shape and dtype only; values: :func:`raise_if_illegal`)."""
    try:
        return integer_rows(actions, num_tables, device, f"integer tensor of action ids 0..{NUM_ACTIONS - 1}")
    except ValueError as error:
        raise ValueError(f"actions {error}") from None


def checked_final_seats(seats: Any, num_tables: int, num_players: int, device: torch.device) -> torch.Tensor:
    """``final_seat`` as a (B,) int64 tensor on ``device`` (shape and dtype only; values: :func:`raise_if_illegal`)."""
    try:
        return integer_rows(seats, num_tables, device, f"integer tensor of seats 0..{num_players - 1}")
    except ValueError as error:
        raise ValueError(f"final_seat {error}") from None


def checked_step(actions: Any, active: Any, final_seat: Any, legal_moves: torch.Tensor, movers: torch.Tensor,
                 finished: torch.Tensor, num_players: int, check: bool
                 ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """``BatchGame.step``'s inputs on the device of ``legal_moves`` (the (B, 54) action mask of
    the tables' movers ``movers``): ``actions`` as a (B,) int64 tensor, ``active`` as a (B,) bool
    one, ``final_seat`` as a (B,) int64 one. With ``check``, an illegal action on a table that is
    stepped and not ``finished`` (a finished table ignores its action), or a final seat out of
    range, raises after one read of the device. Without it nothing is read: an illegal action is
    replaced by its table's first legal one and the final seats are clamped into range, so that
    every table stays a game of the rules and no kernel reads past a table's seats."""
    num_tables, device = legal_moves.shape[0], legal_moves.device
    if active is not None:
        active = checked_active(active, num_tables, device)
    actions = checked_actions(actions, num_tables, device)
    if final_seat is not None:
        final_seat = checked_final_seats(final_seat, num_tables, num_players, device)
    kept = actions.clamp(0, NUM_ACTIONS - 1)  # (an action out of range is not kept as it is: illegal)
    legal = legal_moves.gather(1, kept.unsqueeze(1)).squeeze(1) & (kept == actions)
    if check:
        legal |= finished
        if active is not None:
            legal |= ~active
        raise_if_illegal(actions, legal, legal_moves, movers, final_seat, num_players)
        return actions, active, final_seat
    if device.type != "cpu" or not bool(legal.all()):  # host: CPU tensors only (nothing to wait for); a
        # GPU always selects, which costs less than a wait
        actions = torch.where(legal, actions, legal_moves.to(torch.uint8).argmax(dim=1))
    if final_seat is not None:
        final_seat = final_seat.clamp(0, num_players - 1)
    return actions, active, final_seat


def raise_if_illegal(actions: torch.Tensor, legal: torch.Tensor, mask: torch.Tensor, movers: torch.Tensor,
                     final_seats: torch.Tensor | None = None, num_players: int = 0) -> None:
    """``ValueError`` naming the first table whose action is not ``legal`` (its seat and the actions
    its ``mask`` allows), or else the first ``final_seats`` entry outside 0..N-1 (unchecked it would
    index past a table's seats). One read of the device for both; the rest only on the way to raising."""
    seats_ok = None if final_seats is None else (final_seats >= 0) & (final_seats < num_players)
    if bool((legal if seats_ok is None else legal & seats_ok).all()):  # host: value checks only (off: no wait)
        return
    if not bool(legal.all()):  # host: only on the way to raising
        i = int((~legal).nonzero()[0])  # host: only on the way to raising
        allowed = mask[i].nonzero().flatten().tolist()  # host: only on the way to raising
        raise ValueError(f"illegal action {int(actions[i])} at table {i} (seat {int(movers[i])}): legal actions "
                         f"there are {allowed} (0 draw stock, 1 take discard, 2+c discard card c)")
    assert final_seats is not None and seats_ok is not None  # the actions were legal: a seat is not
    i = int((~seats_ok).nonzero()[0])  # host: only on the way to raising
    raise ValueError(f"final_seat={int(final_seats[i])} at table {i} is not allowed: use a seat 0..{num_players - 1}")
