"""Search over sampled hidden cards: the worlds a seat's observation allows, and fast rollouts.

- :mod:`.worlds`: :func:`determinize` and :func:`sample_world` (a full game consistent with an
  observation, uniform or tilted by a belief), :func:`tilt_hidden_hand`;
- :mod:`.simulation`: policies that play on a full game state (``greedy``) and ``play_out``,
  for the rollouts of the search agents.
"""

from .worlds import (MAX_REDRAWS, HandBelief, InconsistentObservation, determinize, sample_world,
                     tilt_hidden_hand)

__all__ = ["MAX_REDRAWS", "HandBelief", "InconsistentObservation", "determinize", "sample_world", "tilt_hidden_hand"]
