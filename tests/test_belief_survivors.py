"""Tests written against one-line bugs of the belief tools that a mutation audit found surviving
(issue 25): the tilt's rows at 3 and more players, and the best epoch kept by training."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from models.belief_net import BeliefNet, unseen_and_unknown  # noqa: E402
from test_seat_bugs import positions  # noqa: E402
from training import belief_data, train_belief  # noqa: E402
from training.belief_eval import tilt_probs  # noqa: E402
from tt_env.engine import game  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402
from tt_env.observation import encode, get_layout  # noqa: E402


@pytest.mark.parametrize("n", [3, 4])
def test_the_tilts_rows_are_each_opponents_unknown_cards(n):
    rules = Rules(num_players=n, rounds=[5])
    lay = get_layout(n)
    differing = 0
    for state, seat in positions(rules, seed=11, every=2, limit=60, agent="greedy-v0"):
        obs = encode(state, seat)
        mask = game.action_mask(state)
        probs = tilt_probs(obs, mask, rules, worlds=3, rng=np.random.default_rng(0))
        unseen, unknown = unseen_and_unknown(obs[None], n, rules.num_decks)
        np.testing.assert_allclose(probs.sum(axis=1), unknown[0], atol=1e-9)
        assert (probs >= -1e-12).all() and (probs <= unseen[0][None] + 1e-9).all()
        taken = lay.view(obs, "opponent_taken").reshape(n - 1, 52).sum(axis=1)
        differing += len(set(taken.tolist())) > 1
    assert differing  # positions where the opponents hold different numbers of known cards


def test_training_keeps_the_best_epoch(tmp_path):
    data = tmp_path / "d.npz"
    belief_data.main(["--games", "4", "--keep", "0.5", "--seed", "2", "--quiet", "--out", str(data),
                      "--agents", "expert-v0", "greedy-v0"])
    arrays, meta = belief_data.load(data)
    rules = Rules.from_dict(meta["rules"])
    rows = train_belief.Rows(arrays, rules, history=True)
    is_val = np.isin(rows.game, [0])
    train_index, val_index = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same sums, so the same epochs, whatever ran before
    try:
        torch.manual_seed(0)
        net = BeliefNet(2, width=8, blocks=1)
        net, history = train_belief.train(rows, net, train_index, val_index, epochs=6, lr=3.0, batch=64,
                                          weight_decay=0.0, seed=0, log=lambda *_: None)
    finally:
        torch.set_num_threads(threads)
    losses = [h["val_nll"] for h in history]
    assert int(np.argmin(losses)) != len(losses) - 1  # the last epoch is not the best here
    with torch.no_grad():
        kept = float(train_belief.nll_per_card(net, rows.take(val_index)))
    assert kept == pytest.approx(min(losses), rel=1e-4)
