"""The go-out check, batched: ``melds_completely(counts, wild_rank, rules) -> (B,) bool``.

Whether each hand melds completely, exactly ``least_penalty(...) == 0``
(:mod:`tt_env.batch.solver`), asked once per discard by ``BatchGame.step``. Most hands are far
from it, so the cheap filter (:mod:`tt_env.batch.go_out_filter`) drops them first and only the
others are solved.
"""

from __future__ import annotations

import torch

from tt_env.engine.rules import Rules

from . import solver
from .go_out_filter import could_meld_completely


def melds_completely(counts: torch.Tensor, wild_rank: torch.Tensor | int, rules: Rules, *,
                     backend: str = "auto") -> torch.Tensor:
    """(B,) bool: whether each hand melds completely, exactly ``least_penalty(...) == 0`` (the go-out check).

    Most hands are far from it: :func:`could_meld_completely` drops them and only the others are
    solved. With the C solver (``"c"``, or ``"auto"`` on a CPU) that is one C loop over the hands
    (``_meldsolver.melds_completely_counts``); with the tensor programs on a CPU the kept hands are
    picked out (a host read), elsewhere every hand is solved (no wait on the host). Arguments as
    :func:`tt_env.batch.solver.least_penalty`'s.
    """
    wild, _, c_module = solver.checked_inputs(counts, wild_rank, rules, backend, None)
    use_c = backend == "c" or (backend == "auto" and c_module is not None)
    if use_c and hasattr(c_module, "melds_completely_counts"):  # absent from a build older than it
        out = torch.empty(counts.shape[0], dtype=torch.bool)
        # CPU tensors (checked above): numpy views, no copy
        c_module.melds_completely_counts(counts.contiguous().numpy(), wild.contiguous().numpy(),  # host: CPU tensors
                                         rules.aces_high, rules.meld_needs_natural, out.numpy())  # host: CPU tensors
        return out
    could = could_meld_completely(counts, wild)
    if counts.device.type != "cpu":
        return could & (solver.least_penalty(counts, wild, rules, backend=backend) == 0)
    result = torch.zeros_like(could)
    rows = could.nonzero().squeeze(1)  # host: CPU tensors
    if rows.numel():
        result[rows] = solver.least_penalty(counts[rows], wild[rows], rules, backend=backend) == 0
    return result
