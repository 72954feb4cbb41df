"""CardNet with expert features starts as expert-v0: its most probable action is the expert's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from models.expert_features import NUM_EXPERT_PLANES, NUM_EXPERT_SCALARS, OUT_OF_POOL, ExpertFeaturizer
from models.networks import build_network
from tt_env.agents.expert import ExpertAgent
from tt_env.engine import Rules, game
from tt_env.observation import encode


def _positions(rules: Rules, games: int, seed: int = 0):
    """(observation, mask, expert action) of every decision of expert self-play."""
    expert = ExpertAgent(rules)
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        state = game.new_game(rules, np.random.default_rng([seed, g]))
        while not state.game_over:
            obs, mask = encode(state, state.current_player), game.action_mask(state)
            action = expert.act(obs, mask, rng)
            out.append((obs, mask, action))
            game.apply(state, action)
    return out


@pytest.mark.parametrize("num_players", [2, 3])
def test_untrained_expert_cardnet_plays_as_expert(num_players):
    torch.manual_seed(0)
    rules = Rules(num_players=num_players, rounds=(3, 7, 11))
    net = build_network("cardnet", num_players=num_players, channels=8, hidden=16, expert_features=True).eval()
    positions = _positions(rules, 2)
    obs = np.stack([p[0] for p in positions])
    masks = np.stack([p[1] for p in positions])
    with torch.no_grad():
        dist, _ = net(obs, masks)
    chosen = dist.probs.argmax(dim=1).numpy()
    expert = np.array([p[2] for p in positions])
    # only near-ties of the expert's own scores may differ (the untrained head adds ~0.01 logits)
    assert (chosen == expert).mean() > 0.97, (chosen != expert).sum()


def test_expert_features_follow_the_expert_scores():
    rules = Rules()
    featurize = ExpertFeaturizer(2)
    positions = _positions(rules, 1, seed=3)
    obs = np.stack([p[0] for p in positions])
    masks = np.stack([p[1] for p in positions])
    planes, scalars = featurize(obs, masks)
    assert planes.shape == (len(obs), NUM_EXPERT_PLANES, 52) and scalars.shape == (len(obs), NUM_EXPERT_SCALARS)
    for (o, m, action), pl, sc in zip(positions, planes, scalars, strict=True):
        if m[0] and m[1]:
            assert sc[1] == 1.0
            # the expert takes exactly when the feature favours taking (ties: the stock)
            assert (action == 1) == (sc[0] > 0)
        elif m[0] or m[1]:
            assert sc[1] == 0.0
        else:
            card = action - 2
            assert pl[0, card] == 1.0 and (pl[1, card] == 0.0 or pl[2, card] == 1.0)
            legal = np.flatnonzero(m[2:])
            assert (pl[1, legal] >= 0).all() and (pl[1, legal] <= OUT_OF_POOL).all()
            assert (pl[:, np.setdiff1d(np.arange(52), legal)] == 0).all()


def test_seats_not_to_move_get_no_expert_features():
    featurize = ExpertFeaturizer(2)
    obs, mask, _ = _positions(Rules(), 1)[0]
    planes, scalars = featurize(obs[None], np.zeros((1, 54), dtype=np.int8))
    assert not planes.any() and not scalars.any()


def test_expert_features_need_solver_features():
    with pytest.raises(ValueError, match="needs solver_features"):
        build_network("cardnet", num_players=2, solver_features=False, expert_features=True)
