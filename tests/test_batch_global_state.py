"""``tt_env.batch.global_state.encode_states`` is ``env.state()`` (``tt_env.observation.state.encode_state``) for a batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchRandom
from tt_env.batch.global_state import encode_states
from tt_env.engine.rules import Rules
from tt_env.observation.state import encode_state


@pytest.mark.parametrize("rules", [Rules(), Rules(num_players=3, rounds=(1, 2, 11), discard_drawn_discard=True)])
def test_encode_states_equals_the_scalar_state(rules: Rules) -> None:
    game = BatchGame(rules, 6, seed=3)
    ts = game.reset()
    mover = BatchRandom(rules, seed=1)
    for step in range(150):
        got = encode_states(game.state, game.round_number, rules.max_turns_per_round).numpy()
        for table in range(6):
            want = encode_state(game.to_game_state(table))
            assert np.array_equal(got[table], want), (step, table, np.flatnonzero(got[table] != want))
        ts = game.step(mover.act(ts.observation, ts.action_mask))
    assert torch.is_tensor(ts.observation)
