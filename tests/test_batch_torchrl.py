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


def test_steps_replayed_as_graphs_play_the_eager_rollout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The env keeps the engine in lockstep through games' ends and partial resets, so its steps
    are replayed graphs (``cuda_graphs``; here the CPU stand-in of tests/test_batch_graphs.py, on
    the GPU's every-row path) and play the eager env's rollout."""
    from step_trace import RecordedGraphs, stand_in

    from tt_env.batch import solver
    from tt_env.batch.graphs import StepGraphs

    monkeypatch.setattr(solver, "_c_least_penalty", stand_in(solver._c_least_penalty))
    rules = Rules(rounds=(1,), max_turns_per_round=8)
    envs = [ThreeThirteenTorchRLEnv(rules=rules, num_tables=4, seed=3) for _ in range(2)]
    for env in envs:
        env.game._sparse, env.game._outputs = False, None
    backend = RecordedGraphs(hosts=[envs[1].game, envs[1].game.state])
    envs[1].game._graphs = StepGraphs(envs[1].game, backend)
    tds = [env.reset() for env in envs]
    gen = torch.Generator().manual_seed(0)
    ended = 0
    for _ in range(60):
        action = torch.multinomial(tds[0]["action_mask"].float(), 1, generator=gen).squeeze(1)
        outs = []
        for env, td in zip(envs, tds, strict=True):
            td["action"] = action.clone()
            outs.append(env.step(td)["next"])
        for key in ("observation", "action_mask", "seat", "reward", "done"):
            assert torch.equal(outs[0][key], outs[1][key]), key
        ended += int(outs[0]["done"].sum())
        tds = []
        for env, nxt in zip(envs, outs, strict=True):
            if nxt["done"].any():
                nxt["_reset"] = nxt["done"].clone()
                tds.append(env.reset(nxt))
            else:
                tds.append(nxt.select("observation", "action_mask", "seat", "done", "terminated"))
    assert ended > 0 and backend.replays == 56


def test_cuda_graphs_need_cuda() -> None:
    with pytest.raises(ValueError, match="cuda_graphs=True needs a CUDA device"):
        ThreeThirteenTorchRLEnv(num_tables=2, cuda_graphs=True)


def _rollout(env: ThreeThirteenTorchRLEnv, steps: int) -> list[torch.Tensor]:
    """The observations, rewards and ends of ``steps`` steps of the first legal action (no resets)."""
    td = env.reset()
    seen = [td["observation"]]
    for _ in range(steps):
        td["action"] = td["action_mask"].int().argmax(dim=1)
        nxt = env.step(td)["next"]
        seen += [nxt["observation"], nxt["reward"], nxt["done"]]
        td = nxt.select("observation", "action_mask", "seat", "done", "terminated")
    return seen


def test_set_seed_deals_the_seeds_games_with_the_same_rules() -> None:
    """``set_seed(s)`` plays what an env built with ``seed=s`` plays (the rules, reward mode and
    finished games that wait for their reset kept); the default seed is 0, as is ``set_seed(None)``."""
    rules = Rules(num_players=3, rounds=(1,), max_turns_per_round=4)
    reseeded = ThreeThirteenTorchRLEnv(rules=rules, num_tables=4, seed=1, reward_mode="penalty")
    reseeded.set_seed(7)
    built = ThreeThirteenTorchRLEnv(rules=rules, num_tables=4, seed=7, reward_mode="penalty")
    got, want = _rollout(reseeded, 30), _rollout(built, 30)
    assert all(torch.equal(a, b) for a, b in zip(got, want, strict=True))
    assert torch.stack(want[3::3]).any(dim=0).all()  # every table's game ended (then waited for its reset)
    assert not torch.equal(got[0], _rollout(ThreeThirteenTorchRLEnv(rules=rules, num_tables=4, seed=1), 0)[0])
    first_deal = _rollout(ThreeThirteenTorchRLEnv(rules=rules, num_tables=4), 0)[0]  # the default seed
    unseeded = ThreeThirteenTorchRLEnv(rules=rules, num_tables=4, seed=5)
    unseeded._set_seed(None)
    assert torch.equal(first_deal, _rollout(unseeded, 0)[0])
    assert torch.equal(first_deal, _rollout(ThreeThirteenTorchRLEnv(rules=rules, num_tables=4, seed=0), 0)[0])


def test_a_step_without_an_action_says_what_to_set() -> None:
    env = ThreeThirteenTorchRLEnv(num_tables=2)
    with pytest.raises(ValueError, match=r"the tensordict has no 'action': set td\['action'\] to a \(2,\) integer "
                                         r"tensor of action ids"):
        env.step(env.reset())


@pytest.mark.parametrize("bad", ["3", 2.5, 0, True])
def test_the_table_count_is_checked_before_torchrl_sees_it(bad: object) -> None:
    with pytest.raises(ValueError, match=rf"num_tables={bad!r} is not allowed: use an int >= 1"):
        ThreeThirteenTorchRLEnv(num_tables=bad)  # type: ignore[arg-type]


def test_random_actions_at_finished_tables_before_their_reset() -> None:
    """A finished table has no legal action and ignores its action until its reset, so
    ``rand_action`` still draws one for it (a masked spec with no allowed action cannot draw),
    and the finished game's last observation and mask stay as they were."""
    env = ThreeThirteenTorchRLEnv(rules=Rules(rounds=(1,), max_turns_per_round=2), num_tables=4)
    td = env.reset()
    for _ in range(40):
        td = env.step_mdp(env.step(env.rand_action(td)))
        if td["done"].any():
            break
    finished = td["done"].squeeze(-1)
    assert finished.any() and not td["action_mask"][finished].any()
    after = env.step_mdp(env.step(env.rand_action(td)))
    assert torch.equal(after["observation"][finished], td["observation"][finished])
    assert not after["action_mask"][finished].any()
    playing = ~finished
    if playing.any():
        assert env.action_spec.mask[playing].equal(after["action_mask"][playing])
