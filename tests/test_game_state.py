"""GameState snapshots: ``to_dict``/``from_dict`` restore a position and its random streams."""

from __future__ import annotations

import numpy as np

from tt_env.engine import Rules
from tt_env.engine.game import GameState, apply, legal_actions, new_game


def test_state_snapshot_round_trip_keeps_both_generators() -> None:
    """``to_dict``/``from_dict`` restore the position and both random streams (deals, reshuffles)."""
    import json

    state = new_game(Rules(num_players=3), np.random.default_rng(5), shuffle_rng=np.random.default_rng(6))
    rng = np.random.default_rng(0)
    for _ in range(40):
        apply(state, int(rng.choice(legal_actions(state))))
    copy = GameState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert copy.to_dict() == state.to_dict()
    for _ in range(300):  # long enough to reshuffle and deal again: both copies play on identically
        action = int(rng.choice(legal_actions(state)))
        apply(state, action)
        apply(copy, action)
    assert copy.to_dict() == state.to_dict()
