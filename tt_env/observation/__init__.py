"""The observation: one owner for its layout, encoding, decoding, checks and sizes.

- :mod:`.encoding`: the layout (:class:`ObservationLayout`) and :func:`encode` (a game state
  to the flat float32 vector a seat sees); ``OBS_VERSION``, the scales and the bounds.
- :mod:`.decode`: :func:`decode_observation`, the vector back to what an agent reasons about.
- :mod:`.checks`: refusing vectors no game can produce (:class:`InconsistentObservation`),
  and :func:`read_observation` for the search.
- :mod:`.sizes`: the lengths (``107 * N + 80``), the action count and ``num_players_of``.

Changing the layout (and bumping ``OBS_VERSION``) touches this package alone.
"""

from .checks import (InconsistentObservation, ObservedTable, as_vector, check_vector, check_world, checked_counts,
                     piece_at, read_observation)
from .decode import ObservationView, decode_observation
from .encoding import (HAND_SCALE, MAX_SCORE, OBS_VERSION, SCORE_SCALE, ObservationLayout, encode, get_layout,
                       layout_table, observation_bounds, observation_size)
from .sizes import NUM_ACTIONS, NUM_CARD_IDS, OBS_FIXED, OBS_PER_PLAYER, SIZE_FORMULA, num_players_of, players_of_size

__all__ = ["HAND_SCALE", "MAX_SCORE", "NUM_ACTIONS", "NUM_CARD_IDS", "OBS_FIXED", "OBS_PER_PLAYER", "OBS_VERSION",
           "SCORE_SCALE", "SIZE_FORMULA", "InconsistentObservation", "ObservationLayout", "ObservationView",
           "ObservedTable", "as_vector", "check_vector", "check_world", "checked_counts", "decode_observation",
           "encode", "get_layout", "layout_table", "num_players_of", "observation_bounds", "observation_size",
           "piece_at", "players_of_size", "read_observation"]
