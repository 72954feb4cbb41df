"""``training.ppo.selfplay_tables.SelfPlay``: the self-play trainer's tables, checked from the
outside: scripted seats draw from the run's generator, every learner transition is closed
exactly once across rollout cuts, and each finished game's logged return is the sum of the
rewards its learner seat received."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from training.common.config import SelfPlayConfig
from training.ppo.loop import build_net
from training.ppo.selfplay_tables import SelfPlay
from training.ppo.update import Buffer


def tiny(**overrides) -> SelfPlayConfig:
    return SelfPlayConfig(**{"num_envs": 3, "opponents": ["random-v0", "greedy-v0"], "selfplay_prob": 0.3,
                             "network": "mlp", "network_kwargs": {"hidden_sizes": [8]},
                             "rules": {"rounds": [1, 2]}, **overrides})


def test_scripted_seats_draw_from_the_run_s_generator() -> None:
    """random-v0 opponents get the run's own generator, so two runs with one seed play alike."""
    cfg = tiny(opponents=["random-v0"], selfplay_prob=0.0)
    actions = []
    for _ in range(2):
        torch.manual_seed(0)  # the network's weights and the learner's sampled moves
        play = SelfPlay(cfg, build_net(cfg), np.random.default_rng(5))
        given: list = []
        play.scripted[0].act = lambda o, m, rng, given=given, real=play.scripted[0].act: (given.append(rng),
                                                                                          real(o, m, rng))[1]
        buf = Buffer()
        play.collect(buf, 150)
        assert given and all(rng is play.rng for rng in given)
        actions.append(list(buf.action))
    assert actions[0] == actions[1]


def test_every_transition_is_closed_exactly_once_across_cuts() -> None:
    cfg = tiny()
    play = SelfPlay(cfg, build_net(cfg), np.random.default_rng(1))
    for _ in range(3):  # three rollouts, each cut with decisions still open
        buf, closed = Buffer(), []
        buf.close = lambda idx, *args, closed=closed, real=buf.close, **kwargs: (closed.append(idx),
                                                                                real(idx, *args, **kwargs))[1]
        play.collect(buf, 120)
        assert sorted(closed) == list(range(len(buf)))
        assert all(i < 0 for t in play.tables for i in t.open_idx)


def test_a_finished_game_s_return_is_the_sum_of_its_learner_seat_s_rewards() -> None:
    """Summed from the environment's own per-step rewards, across rollout cuts (where the trainer
    credits part of a game's reward early) and game ends."""
    cfg = tiny()
    play = SelfPlay(cfg, build_net(cfg), np.random.default_rng(2))
    totals = [[0.0] * cfg.num_players for _ in play.tables]
    for k, t in enumerate(play.tables):
        env_step = t.env.step

        def step(action, env=t.env, env_step=env_step, total=totals[k]):
            env_step(action)
            for seat in range(cfg.num_players):
                total[seat] += env.rewards[f"player_{seat}"]

        t.env.step = step
    expected: list[float] = []
    end_game = play._end_game

    def ending(t, buf):
        k = play.tables.index(t)
        expected.extend(totals[k][seat] for seat, c in enumerate(t.controllers) if c == -1)
        totals[k][:] = [0.0] * cfg.num_players
        end_game(t, buf)

    play._end_game = ending
    for _ in range(150):  # short rollouts: many cuts, some just after a round paid its seats
        play.collect(Buffer(), 8)
    assert len(expected) >= 5 and any(abs(r) > 0 for r in expected)
    assert play.finished_returns == pytest.approx(expected, abs=1e-9)


def test_each_transition_holds_the_network_s_logprob_and_value_and_links_to_the_seat_s_next() -> None:
    """What PPO reads back: the log-probability and value the network gave the action taken, and
    each (table, seat)'s decisions chained in order (GAE follows the links)."""
    cfg = tiny(selfplay_prob=1.0, rules={"rounds": [1, 2], "max_turns_per_round": 6})  # games end within the rollout
    torch.manual_seed(0)
    play = SelfPlay(cfg, build_net(cfg), np.random.default_rng(3))
    buf, ends = Buffer(), []
    end_game = play._end_game
    play._end_game = lambda t, b: (ends.append(sum(i >= 0 for i in t.open_idx)), end_game(t, b))[1]
    play.collect(buf, 200)
    with torch.no_grad():
        _, logprob, _, value = play.net.get_action_and_value(torch.as_tensor(np.stack(buf.x)),
                                                             torch.as_tensor(np.stack(buf.mask)),
                                                             torch.tensor(buf.action))
    assert torch.allclose(logprob, torch.tensor(buf.logprob), atol=1e-5)
    assert torch.allclose(value, torch.tensor(buf.value), atol=1e-5)
    links = [(i, j) for i, j in enumerate(buf.next_idx) if j >= 0]
    assert len(links) > len(buf) // 2 and all(j > i for i, j in links)
    assert len(set(j for _, j in links)) == len(links)  # no decision follows two others
    assert sum(ends) > 0 and sum(d == 1.0 for d in buf.done) == sum(ends)  # each game's last decisions: terminal
