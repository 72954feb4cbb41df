"""``training.ppo.batch_collect.BatchTables``' own state: its saves, its loads (which must know
where the tables are in their turn) and its engine's CUDA graphs (``cuda_graphs``)."""

from __future__ import annotations

import pytest
import torch
from step_trace import RecordedGraphs, stand_in
from batch_ppo_runs import config

from models.networks import MLPPolicy
from training.ppo.batch_collect import BatchTables
from training.ppo.batch_critic import PrivilegedCritic
from tt_env.batch import solver
from tt_env.batch.graphs import StepGraphs


def test_the_resume_state_is_a_snapshot(tmp_path):
    """``BatchTables.state_dict`` copies the games: the steps after it (which change a CPU's
    state in place) leave it as it was, so a checkpoint written later saves that moment."""
    cfg = config(tmp_path, "snapshot", "network=mlp", "network_kwargs={hidden_sizes: [16]}")
    tables = BatchTables(cfg, MLPPolicy(num_players=2, hidden_sizes=[16]), None, torch.device("cpu"))
    tables.collect(4, 0.99, 0.95)
    saved = tables.state_dict()
    kept = {k: v.clone() for k, v in saved.items() if k.startswith("game.")}
    tables.collect(6, 0.99, 0.95)
    assert all(torch.equal(saved[k], v) for k, v in kept.items())
    assert not torch.equal(saved["game.hands"], tables.game.state.hands)  # the games did move on


@pytest.mark.parametrize("first", [4, 5], ids=["saved before a draw", "saved before a discard"])
def test_tables_loaded_from_a_save_play_on_as_the_saved_ones(tmp_path, first):
    """A save after an odd number of moves leaves every table about to discard: the loaded
    tables must know it (the engine's lockstep is read again from them), or their discard steps
    would skip the go-out check and the round ends. Both go on with the same rollouts."""
    cfg = config(tmp_path, "load", "network=mlp", "network_kwargs={hidden_sizes: [16]}",
                 "opponents={self: 0.5, greedy-v0: 0.5}", "num_tables=64")
    net = MLPPolicy(num_players=2, hidden_sizes=[16])
    tables = BatchTables(cfg, net, None, torch.device("cpu"))
    tables.collect(first, 0.99, 0.95)
    loaded = BatchTables(cfg, net, None, torch.device("cpu"))
    loaded.load_state_dict(tables.state_dict())
    assert loaded.game._lockstep_phase == first % 2
    for _ in range(3):
        want, got = tables.collect(40, 0.99, 0.95), loaded.collect(40, 0.99, 0.95)
        for key in ("x", "mask", "action", "logprob", "value", "advantage", "ret"):
            assert torch.equal(getattr(want, key), getattr(got, key)), key
    assert all(torch.equal(v, getattr(loaded.game.state, k)) for k, v in tables.game.state.fields().items())


def test_rollouts_from_replayed_graphs_are_the_eager_rollouts(tmp_path, monkeypatch):
    """With ``cuda_graphs`` a rollout's engine steps are replays: it moves every table at every
    step, so they stay in lockstep. Run here with the CPU stand-in of the graphs
    (``tests/step_trace.py``, on the every-row path a GPU takes), the rollouts equal the eager
    tables', through a save and a load between them; only the warm-ups run eagerly."""
    monkeypatch.setattr(solver, "_c_least_penalty", stand_in(solver._c_least_penalty))
    cfg = config(tmp_path, "graphs", "network=mlp", "network_kwargs={hidden_sizes: [16]}", "privileged_critic=true",
                 "opponents={self: 0.4, greedy-v0: 0.3, random-v0: 0.3}", "num_tables=16")
    net = MLPPolicy(num_players=2, hidden_sizes=[16])
    critic = PrivilegedCritic(2, [16])
    both = []
    for graphed in (False, True):
        tables = BatchTables(cfg, net, critic, torch.device("cpu"))
        game = tables.game
        game._sparse, game._outputs, game._kernel_backend = False, None, "torch"  # a GPU's path
        if graphed:
            backend = RecordedGraphs(hosts=[game, game.state])
            game._graphs = StepGraphs(game, backend)
        rollouts = [tables.collect(15, 0.99, 0.95) for _ in range(2)]
        tables.load_state_dict(tables.state_dict())
        rollouts += [tables.collect(15, 0.99, 0.95) for _ in range(2)]
        both.append(rollouts)
    for want, got in zip(*both, strict=True):
        for key in ("x", "mask", "action", "logprob", "value", "advantage", "ret", "critic_x"):
            assert torch.equal(getattr(want, key), getattr(got, key)), key
    assert backend.replays == 60 - 4  # two eager warm-ups of each phase; the load keeps the lockstep


def test_the_cuda_graphs_key_reaches_the_engine(tmp_path, monkeypatch):
    from tt_env.batch import game as game_module

    seen = []
    monkeypatch.setattr(game_module, "step_graphs", lambda game, flag: seen.append(flag))
    for flag in ("false", "true"):
        cfg = config(tmp_path, "key", f"cuda_graphs={flag}", "network=mlp", "network_kwargs={hidden_sizes: [16]}")
        BatchTables(cfg, MLPPolicy(num_players=2, hidden_sizes=[16]), None, torch.device("cpu"))
    assert seen == [False, True]
