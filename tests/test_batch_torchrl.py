"""The TorchRL environment on the batched engine passes TorchRL's own spec check and plays games."""

from __future__ import annotations

import pytest
import torch

torchrl = pytest.importorskip("torchrl")

from torchrl.envs.utils import check_env_specs  # noqa: E402

from tt_env.batch.torchrl_env import ThreeThirteenTorchRLEnv  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.observation import encode  # noqa: E402


@pytest.mark.parametrize("players", [2, 4])
def test_check_env_specs(players: int) -> None:
    env = ThreeThirteenTorchRLEnv(rules=Rules(num_players=players), num_tables=8, device="cpu")
    check_env_specs(env)


def test_rollout_with_masked_random_policy_ends_games() -> None:
    env = ThreeThirteenTorchRLEnv(rules=Rules(rounds=(1,), max_turns_per_round=8), num_tables=4)
    td = env.reset()
    gen = torch.Generator().manual_seed(0)
    ended = 0
    for _ in range(60):
        td["action"] = torch.multinomial(td["action_mask"].float(), 1, generator=gen).squeeze(1)
        st = env.game.to_game_state(0)
        assert torch.equal(td["observation"][0], torch.as_tensor(encode(st, st.current_player)))
        out = env.step(td)
        nxt = out["next"]
        assert nxt["reward"].shape == (4, 2)
        ended += int(nxt["done"].sum())
        if nxt["done"].any():
            nxt["_reset"] = nxt["done"].clone()
            td = env.reset(nxt)
            assert not td["done"].any()
        else:
            td = nxt.select("observation", "action_mask", "seat", "done", "terminated")
    assert ended > 0
    assert env.game._lockstep_phase is not None  # every step moved every table: the engine's lockstep held
