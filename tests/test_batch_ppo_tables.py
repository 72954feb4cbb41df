"""``training/batch_ppo.py``'s tables in a rollout: the learner's seat credited, each kind of
opponent table played as it should be, the run's reward mode, the mask, the network's inputs.

The run as a whole (ship, resume, the update): ``tests/test_batch_ppo.py``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from models.networks import MLPPolicy
from training import batch_ppo
from training.common.config import load_config
from training.ppo.batch_collect import BatchTables, policy_step
from training.ppo.batch_config import BatchPPOConfig
from tt_env.agents import make_agent
from tt_env.engine.scoring import round_rewards

from batch_ppo_runs import TINY, config, zero_value_mlp  # noqa: E402


def test_learner_transitions_credit_the_right_seat(tmp_path):
    """A rollout's returns equal an independent per-(table, seat) recomputation from the game log."""
    cfg = config(tmp_path, "seats", "network=mlp", "network_kwargs={hidden_sizes: [16]}", "num_tables=6",
                 "opponents={self: 0.5, random-v0: 0.5}", "rules.max_turns_per_round=6")
    net = zero_value_mlp()  # every value is 0: returns are the discounted rewards alone
    tables = BatchTables(cfg, net, None, torch.device("cpu"))
    log = []
    real_step = tables.game.step

    def logged(actions):
        ts_before = tables.ts
        learner = tables.learner_rows(ts_before.seat)
        ts = real_step(actions)
        log.append((ts_before.seat.clone(), learner.clone(), ts.rewards.clone(), ts.game_over.clone()))
        return ts

    tables.game.step = logged
    gamma, lam = 0.9, 0.8
    steps = 60  # rounds [1, 2] of at most 6 turns: rounds and games end inside the rollout
    data = tables.collect(steps, gamma, lam)
    assert any(over.any() for *_, over in log)
    # independent: walk each (table, seat), summing that seat's rewards between its decisions
    b = cfg.num_tables
    rewards_of, done_of, order = {}, {}, []
    open_ = {}
    for t, (seat, learner, rewards, over) in enumerate(log):
        for i in range(b):
            if learner[i]:
                key = (i, int(seat[i]))
                order.append((t, i))
                rewards_of[(t, i)], done_of[(t, i)] = 0.0, False
                open_[key] = (t, i)
            for s in range(2):
                if (i, s) in open_:
                    rewards_of[open_[(i, s)]] += float(rewards[i, s])
            if over[i]:
                for s in range(2):
                    if (i, s) in open_:
                        done_of[open_.pop((i, s))] = True
    chains: dict[tuple[int, int], list] = {}
    for t, i in order:
        chains.setdefault((i, int(log[t][0][i])), []).append((t, i))
    expected = {}
    for chain in chains.values():
        adv = 0.0
        for item in reversed(chain):
            adv = rewards_of[item] + (0.0 if done_of[item] else gamma * lam * adv)
            expected[item] = adv
    want = torch.tensor([expected[item] for item in sorted(order)])
    assert len(data) == len(order)
    assert torch.allclose(data.ret, want, atol=1e-5)
    assert torch.equal(data.value, torch.zeros(len(data)))


class IllegalLover(MLPPolicy):
    """Logits that favour every action illegal in most positions (the draws while discarding, cards not held)."""

    def logits_and_value(self, x):
        hand = x[:, :52]
        logits = torch.cat([torch.full((len(x), 2), 30.0), 30.0 * (hand == 0).float()], dim=1)
        return logits, torch.zeros(len(x))


def test_every_kind_of_table_gets_its_share():
    cfg = load_config(BatchPPOConfig, None, TINY)
    assert cfg.table_counts() == {"self": 2, "pool": 2, "greedy-v0": 2, "random-v0": 1, "expert-v0": 1}
    old = load_config(BatchPPOConfig, None, TINY + ["num_tables=10",
                                                    "opponents={self: 0.3, pool: 0.2, greedy-v0: 0.25, random-v0: 0.25}"])
    assert old.table_counts() == {"self": 3, "pool": 2, "greedy-v0": 3, "random-v0": 2, "expert-v0": 0}


def test_expert_tables_are_played_by_the_scalar_expert(tmp_path):
    """On expert-v0 tables every move not the learner's is the scalar expert-v0's choice for that
    seat's observation, and the learner's moves are not."""
    cfg = config(tmp_path, "expert", "network=mlp", "network_kwargs={hidden_sizes: [16]}", "num_tables=4",
                 "opponents={expert-v0: 1.0}")
    tables = BatchTables(cfg, MLPPolicy(num_players=2, hidden_sizes=[16]), None, torch.device("cpu"))
    expert = make_agent("expert-v0", cfg.train_rules())
    rng = np.random.default_rng(0)
    real_step = tables.game.step
    seen = {"expert": 0, "learner": 0, "learner_differs": 0}

    def checked(actions):
        ts = tables.ts
        learner = tables.learner_rows(ts.seat)
        for i in range(cfg.num_tables):
            want = expert.act(ts.observation[i].numpy(), ts.action_mask[i].numpy(), rng)
            if learner[i]:
                seen["learner"] += 1
                seen["learner_differs"] += int(actions[i]) != want
            else:
                seen["expert"] += 1
                assert int(actions[i]) == want, f"table {i}: {int(actions[i])} is not expert-v0's {want}"
        return real_step(actions)

    tables.game.step = checked
    tables.collect(40, 0.99, 0.95)
    assert seen["expert"] > 50 and seen["learner"] > 50 and seen["learner_differs"] > 0, seen


@pytest.mark.parametrize("mode", ["penalty", "win"])
def test_the_tables_pay_the_run_s_reward_mode(tmp_path, mode):
    """The rollout's rewards are the config's ``reward_mode``'s: at every step of every table,
    the scalar engine's rewards in that mode for the round that ended (0 where none did)."""
    cfg = config(tmp_path, mode, "network=mlp", "network_kwargs={hidden_sizes: [16]}", "num_tables=4",
                 f"reward_mode={mode}", "opponents={greedy-v0: 1.0}")
    tables = BatchTables(cfg, MLPPolicy(num_players=2, hidden_sizes=[16]), None, torch.device("cpu"))
    real_step, ended = tables.game.step, {"rounds": 0}

    def checked(actions):
        ts = real_step(actions)
        for i in range(cfg.num_tables):
            if ts.round_over[i]:
                ended["rounds"] += 1
                want = round_rewards(mode, ts.round_points[i].tolist(), ts.scores[i].tolist(), bool(ts.game_over[i]))
                assert ts.rewards[i].tolist() == pytest.approx(want, abs=1e-6), f"table {i}"
            else:
                assert not ts.rewards[i].any()
        return ts

    tables.game.step = checked
    tables.collect(60, 0.99, 0.95)
    assert ended["rounds"] > 0


def test_pool_opponents_sample_their_moves(tmp_path):
    """A pool member plays by sampling its policy, not by its most likely move: with a policy
    that favours one move only slightly, a greedy member would never play the others."""
    cfg = config(tmp_path, "pool", "network=mlp", "network_kwargs={hidden_sizes: [16]}", "num_tables=8",
                 "opponents={pool: 1.0}")
    net = MLPPolicy(num_players=2, hidden_sizes=[16])
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
    tables = BatchTables(cfg, net, None, torch.device("cpu"))
    real_step, chosen = tables.game.step, []

    def recorded(actions):
        ts = tables.ts
        others = ~tables.learner_rows(ts.seat) & ts.action_mask[:, 0] & ts.action_mask[:, 1]  # a draw with a choice
        chosen.extend(actions[others].tolist())
        return real_step(actions)

    tables.game.step = recorded
    tables.collect(40, 0.99, 0.95)
    assert len(chosen) > 40 and set(chosen) == {0, 1}, "a pool member with even odds played one move only"


def test_the_mask_is_never_dropped(tmp_path):
    cfg = config(tmp_path, "mask", "network=mlp", "network_kwargs={hidden_sizes: [16]}",
                 "opponents={self: 0.5, pool: 0.5}")
    net = IllegalLover(num_players=2, hidden_sizes=[16])
    tables = BatchTables(cfg, net, None, torch.device("cpu"))
    data = tables.collect(30, 0.99, 0.95)  # BatchGame(check_actions=True) also raises on any illegal move
    legal = data.mask.gather(1, data.action.unsqueeze(1)).squeeze(1)
    assert legal.all(), "a sampled action is illegal"
    logits, _ = net.logits_and_value(data.x)
    masked = torch.where(data.mask, logits, -1e8).log_softmax(dim=1).gather(1, data.action.unsqueeze(1)).squeeze(1)
    unmasked = logits.log_softmax(dim=1).gather(1, data.action.unsqueeze(1)).squeeze(1)
    assert torch.allclose(data.logprob, masked, atol=1e-5)
    assert not torch.allclose(data.logprob, unmasked, atol=1e-3)
    _, logprob, _, _ = policy_step(net, data.x, data.mask, action=data.action)  # what the update uses
    assert torch.allclose(logprob, masked, atol=1e-5)


def test_rollout_inputs_are_the_scalar_features(tmp_path):
    """The stored network inputs are ``net.preprocess`` of the observations: CardNet's solver and
    lookahead features exactly as ``models.features`` / ``models.lookahead_features`` give them."""
    cfg = config(tmp_path, "feat", "network_kwargs={channels: 8, hidden: 16, lookahead_features: true}",
                 "opponents={self: 1.0}")
    net = batch_ppo.build_net(cfg)
    tables = BatchTables(cfg, net, None, torch.device("cpu"))
    data = tables.collect(6, 0.99, 0.95)
    obs = data.x[:, :net.obs_size].numpy()
    want = net.preprocess(obs, data.mask.numpy().astype(np.int8))
    assert data.x.shape[1] == net.input_size > net.obs_size
    assert np.array_equal(data.x.numpy(), want)


def test_a_rollout_without_a_learner_decision_is_empty_and_the_run_goes_on(tmp_path) -> None:
    """One table, one move a rollout: a rollout where only the opponent moves has no learner row
    (``torch.cat`` of nothing crashed the run); the update is skipped and the run finishes."""
    from batch_ppo_runs import config

    cfg = config(tmp_path, "empty", "num_tables=1", "rollout_steps=1", "num_minibatches=1", "total_steps=12",
                 "eval_every=0", "opponents={greedy-v0: 1.0}")
    empty = BatchTables(cfg, MLPPolicy(num_players=cfg.num_players, hidden_sizes=[8]), None, torch.device("cpu"))
    sizes = [len(empty.collect(1, cfg.gamma, cfg.gae_lambda)) for _ in range(6)]
    assert 0 in sizes and 1 in sizes
    run = batch_ppo.train(cfg)
    assert (run.path / "checkpoints" / "final.pt").exists()
