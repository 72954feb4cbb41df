"""The go-out check, batched: ``melds_completely(counts, wild_rank, rules) -> (B,) bool``.

Whether each hand melds completely, exactly ``least_penalty(...) == 0``
(:mod:`tt_env.batch.solver`), asked once per discard by ``BatchGame.step``. Most hands are far
from it, so the cheap filter (:mod:`tt_env.batch.go_out_filter`) drops them first and only the
others are solved. On the every-row (GPU) path with gathered solving,
:func:`solve_discards_and_round_ends` asks the same in one solver call with the hands a round's
end scores, gathered to the front (:func:`solve_gathered`).
"""

from __future__ import annotations

import torch

from tt_env.engine.rules import Rules

from . import solver
from .go_out_filter import could_meld_completely
from .state import BatchState


def melds_completely(counts: torch.Tensor, wild_rank: torch.Tensor | int, rules: Rules, *,
                     backend: str = "auto", check: bool = True) -> torch.Tensor:
    """(B,) bool: whether each hand melds completely, exactly ``least_penalty(...) == 0`` (the go-out check).

    Most hands are far from it: :func:`could_meld_completely` drops them and only the others are
    solved. With the C solver (``"c"``, or ``"auto"`` on a CPU) that is one C loop over the hands
    (``_meldsolver.melds_completely_counts``); with the tensor programs on a CPU the kept hands are
    picked out (a host read), elsewhere every hand is solved (no wait on the host). Arguments as
    :func:`tt_env.batch.solver.least_penalty`'s (``check``: the values first, one read of the
    device; the engine passes False).
    """
    wild, decks, c_module = solver.checked_inputs(counts, wild_rank, rules, backend, None)
    use_c = backend == "c" or (backend == "auto" and c_module is not None)
    c_loop = use_c and hasattr(c_module, "melds_completely_counts")  # absent from a build older than it
    if check and not c_loop:  # (the C loop checks its hands itself)
        solver.check_values(counts, wild, decks, solver.DEFAULT_MAX_CARDS)
    if c_loop:
        out = torch.empty(counts.shape[0], dtype=torch.bool)
        # CPU tensors (checked above): numpy views, no copy
        c_module.melds_completely_counts(counts.contiguous().numpy(), wild.contiguous().numpy(),  # host: CPU tensors
                                         rules.aces_high, rules.meld_needs_natural, out.numpy())  # host: CPU tensors
        return out
    could = could_meld_completely(counts, wild)
    if counts.device.type != "cpu":
        return could & (solver.least_penalty(counts, wild, rules, backend=backend, check=False) == 0)
    result = torch.zeros_like(could)
    rows = could.nonzero().squeeze(1)  # host: CPU tensors
    if rows.numel():
        result[rows] = solver.least_penalty(counts[rows], wild[rows], rules, backend=backend, check=False) == 0
    return result


def solve_discards_and_round_ends(state: BatchState, checking: torch.Tensor, seat: torch.Tensor,
                                  discard: torch.Tensor, hands: torch.Tensor, wild: torch.Tensor, rules: Rules,
                                  backend: str, kernels: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Gathered solving's one solver call a step: ((B,) whether the ``checking`` discarded hands
    of ``seat``, ``hands`` (B, 52), meld completely; (B, N) the penalties of every hand a round's
    end scores, -1 elsewhere). Solved are the discarded hands that could meld completely and, at
    the tables where this ``discard`` ends the round unless it goes out (which ends none), every
    hand but the one out before. ``backend``: the solver's; ``kernels``: the filter's."""
    n = state.hands.shape[1]
    could = checking & could_meld_completely(hands, wild, backend=kernels)
    may_end = discard & (((seat + 1) % n == state.went_out)  # as moves.end_turns decides
                         | ((state.went_out < 0) & (state.turn >= rules.max_turns_per_round)))
    seats = torch.arange(n, device=seat.device).unsqueeze(0)
    need = (may_end.unsqueeze(1) & (seats != state.went_out.unsqueeze(1))) | ((seats == seat.unsqueeze(1))
                                                                             & could.unsqueeze(1))
    hands_all = state.hands.reshape(-1, 52).to(torch.uint8)
    penalties = solve_gathered(hands_all, wild.repeat_interleave(n), need.view(-1), rules, backend).view(-1, n)
    return checking & (penalties.gather(1, seat.unsqueeze(1)).squeeze(1) == 0), penalties


def solve_gathered(hands: torch.Tensor, wild: torch.Tensor, need: torch.Tensor, rules: Rules,
                   backend: str) -> torch.Tensor:
    """(K,) least penalties of the ``hands`` (K, 52) where ``need`` holds, -1 elsewhere.

    The needed hands go to the front in a stable order and the solver is told how many
    (``prefix``, a device tensor): the fused kernels stop after them without waiting on the
    host, so a step pays for the few hands that need solving, not for every row."""
    order = torch.argsort(need.logical_not().to(torch.uint8), stable=True)
    pen = solver.least_penalty(hands[order], wild[order], rules, backend=backend, prefix=need.sum(), check=False)
    return torch.empty_like(pen).scatter_(0, order, pen)
