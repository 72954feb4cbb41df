"""``training/batch_ppo.py``: tiny runs that ship and resume, the critic, the update.

Its config: ``tests/test_batch_ppo_config.py``; its tables in a rollout:
``tests/test_batch_ppo_tables.py``; the credit assignment alone: ``tests/test_batch_rollout.py``."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import numpy as np
import pytest
import torch

from models.agent_loader import load_agent
from models.networks import MLPPolicy
from training import batch_ppo
from training.common.config import load_config
from training.common.resume import TENSORS
from training.common.run_utils import RunExistsError
from training.ppo.batch_collect import BatchTables, policy_step
from training.ppo.batch_config import TABLE_KINDS
from tt_env import three_thirteen_v0
from tt_env.agents import make_agent
from tt_env.engine.rules import Rules

from batch_ppo_runs import config, zero_value_mlp  # noqa: E402


def weights(run_path: Path, tag: str = "final") -> dict:
    return torch.load(run_path / "checkpoints" / f"{tag}.pt", weights_only=True)


def plays_a_legal_game(path: Path) -> None:
    """The checkpoint, loaded as an agent by path, plays a whole 2-player game against random-v0."""
    rules = Rules(rounds=(1, 2, 3))
    agent = make_agent(str(path), rules)
    other = make_agent("random-v0", rules)
    env = three_thirteen_v0.env(num_players=2, rounds=[1, 2, 3])
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    moves = 0
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        actor = agent if name == "player_0" else other
        action = actor.act(obs["observation"], obs["action_mask"], rng)
        assert obs["action_mask"][action], f"illegal action {action}"
        env.step(action)
        moves += 1
    assert moves > 10


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """An uninterrupted tiny run (every kind of table)."""
    path = tmp_path_factory.mktemp("reference")
    return batch_ppo.train(config(path, "ref")).path


def test_a_tiny_run_ships_a_checkpoint_that_plays(reference):
    assert (reference / "config.yaml").exists() and (reference / "eval.json").exists()
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(reference / "tb"))
    events.Reload()
    logged = set(events.Tags()["scalars"])
    assert {"charts/learning_rate", "charts/SPS", "losses/policy_loss", "eval/random-v0/score_diff",
            "charts/episodic_return"} <= logged
    assert {t for t in logged if t.startswith("charts/episodic_return_")} <= {
        f"charts/episodic_return_{k}" for k in TABLE_KINDS} and "charts/episodic_return_greedy-v0" in logged
    meta = json.loads((reference / "checkpoints" / "final.json").read_text())
    assert meta["training_steps"] >= 600 and meta["evaluation"]["results"]
    assert meta["extra"]["trainer"] == "training/batch_ppo.py"
    agent = load_agent(reference / "checkpoints" / "final.pt", Rules())
    assert agent.net.num_players == 2
    plays_a_legal_game(reference / "checkpoints" / "final.pt")


def test_a_stopped_run_resumes_bit_identically(tmp_path, monkeypatch, reference):
    real = batch_ppo.ppo_update
    calls = {"n": 0}

    def stop_on_third(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            signal.raise_signal(signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(batch_ppo, "ppo_update", stop_on_third)
    run = batch_ppo.train(config(tmp_path, "cut"))
    monkeypatch.undo()
    assert run.stopped_by == signal.SIGINT and not (run.checkpoints / "final.pt").exists()
    resumed = batch_ppo.train(config(tmp_path, "cut"), resume=True)
    assert resumed.stopped_by is None
    ref, got = weights(reference), weights(run.path)
    assert all(torch.equal(ref[k], got[k]) for k in ref), "resumed run differs from the uninterrupted one"
    assert json.loads((run.path / "eval.json").read_text()) == json.loads((reference / "eval.json").read_text())


def test_overwrite_rules(tmp_path, capsys):
    cfg = config(tmp_path, "again", "total_steps=50", "eval_every=0")
    batch_ppo.train(cfg)
    with pytest.raises(RunExistsError, match="--resume .* or --overwrite"):
        batch_ppo.train(cfg)
    with pytest.raises(SystemExit) as exc:
        batch_ppo.main(["--set", f"run_dir={tmp_path}", "--set", "name=again"])
    assert exc.value.code == 2 and "already holds a run" in capsys.readouterr().err
    assert batch_ppo.train(cfg, overwrite=True).stopped_by is None


def test_the_trainer_uses_the_window_across_chunks(tmp_path, monkeypatch):
    seen: list[float] = []
    real = batch_ppo.ppo_update

    def record(net, critic, optimizer, *args, **kwargs):
        seen.append(optimizer.param_groups[0]["lr"])
        return real(net, critic, optimizer, *args, **kwargs)

    monkeypatch.setattr(batch_ppo, "ppo_update", record)
    window = ["eval_every=0", "learning_rate=0.001", "anneal_start_step=200", "anneal_end_step=600"]
    batch_ppo.train(config(tmp_path, "lr", "total_steps=300", *window))
    first_chunk = len(seen)
    batch_ppo.train(config(tmp_path, "lr", "total_steps=600", *window), resume=True)
    assert seen[0] == 0.001 and all(a >= b for a, b in zip(seen, seen[1:], strict=False)), seen
    assert 0.0005 < seen[first_chunk] < 0.001, "the second chunk must go on down the same window"
    assert 0 <= seen[-1] < 0.0005


def test_privileged_critic_trains_and_its_checkpoint_acts_alone(tmp_path):
    run = batch_ppo.train(config(tmp_path, "priv", "privileged_critic=true", "critic_hidden_sizes=[32]",
                                 "total_steps=200", "eval_every=0"))
    tensors = torch.load(run.checkpoints / f"latest.{TENSORS}", weights_only=True)
    assert "critic" in tensors and tensors["critic"]["mlp.0.weight"].shape[1] > 400  # the state + seat
    final = weights(run.path)
    assert not any(k.startswith("mlp.") for k in final)  # the checkpoint is the policy network only
    plays_a_legal_game(run.checkpoints / "final.pt")


def at_first_update(monkeypatch) -> dict:
    """Filled at the run's first ``ppo_update``: copies of the network's and the critic's weights
    (``net``, ``critic``: None without one) and the optimiser's Adam ``eps`` (``adam_eps``)."""
    real, first = batch_ppo.ppo_update, {}

    def recording(net, critic, optimizer, data, cfg, gen):
        if not first:
            first.update(net={k: v.clone() for k, v in net.state_dict().items()},
                         critic=None if critic is None else {k: v.clone() for k, v in critic.state_dict().items()},
                         adam_eps=[g["eps"] for g in optimizer.param_groups])
        return real(net, critic, optimizer, data, cfg, gen)

    monkeypatch.setattr(batch_ppo, "ppo_update", recording)
    return first


def test_the_privileged_critic_is_trained_by_the_optimiser(tmp_path, monkeypatch):
    """The critic's weights are in the optimiser: the run's saved critic differs from the critic
    it started with (a critic left out of the optimiser would stay as initialised)."""
    first = at_first_update(monkeypatch)
    run = batch_ppo.train(config(tmp_path, "priv", "privileged_critic=true", "critic_hidden_sizes=[32]",
                                 "total_steps=200", "eval_every=0"))
    trained = torch.load(run.checkpoints / f"latest.{TENSORS}", weights_only=True)["critic"]
    assert first["adam_eps"] == [1e-5]  # Adam as CleanRL's PPO sets it
    assert set(trained) == set(first["critic"])
    assert all(not torch.equal(trained[k], v) for k, v in first["critic"].items()), "a critic tensor never changed"


def test_init_checkpoint_starts_the_run_from_its_weights(tmp_path, monkeypatch, reference):
    """The first update starts from the weights of ``init_checkpoint`` (the reference's final
    network), not from a fresh network's."""
    first = at_first_update(monkeypatch)
    start = reference / "checkpoints" / "final.pt"
    batch_ppo.train(config(tmp_path, "init", f"init_checkpoint={start}", "total_steps=100", "eval_every=0"))
    want = weights(reference)
    assert set(first["net"]) == set(want) and all(torch.equal(first["net"][k], want[k]) for k in want)


@pytest.mark.parametrize("dropped", ["tables", "update_rng"])
def test_a_resume_state_without_a_tensor_is_refused_in_one_line(tmp_path, reference, dropped):
    """A resume state whose tensors lack one the trainer needs is refused by name before anything
    is built from it (not as a KeyError deep in the restore)."""
    import shutil

    from test_resume_state import rewrite_attachment

    from models.checkpoint import CheckpointError, attachment_path, serialize_state

    shutil.copytree(reference, tmp_path / "ref")
    latest = tmp_path / "ref" / "checkpoints" / "latest.pt"
    tensors = torch.load(attachment_path(latest, TENSORS), weights_only=True)
    rewrite_attachment(latest, TENSORS, serialize_state({k: v for k, v in tensors.items() if k != dropped}))
    with pytest.raises(CheckpointError, match=rf"is damaged: its tensors lack \['{dropped}'\]"):
        batch_ppo.train(config(tmp_path, "ref", "total_steps=1200"), resume=True)


def test_the_update_reports_the_value_s_explained_variance(tmp_path):
    """``explained_variance`` = 1 - Var(returns - values) / Var(returns), over the rollout's rows."""
    cfg = config(tmp_path, "ev", "network=mlp", "network_kwargs={hidden_sizes: [16]}", "opponents={self: 1.0}")
    net = MLPPolicy(num_players=2, hidden_sizes=[16])
    data = BatchTables(cfg, net, None, torch.device("cpu")).collect(6, 0.99, 0.95)
    ret, value = data.ret.clone(), data.value.clone()
    stats = batch_ppo.ppo_update(net, None, torch.optim.Adam(net.parameters(), lr=1e-3), data, cfg,
                                 torch.Generator().manual_seed(0))
    want = 1 - float((ret - value).var()) / float(ret.var())
    assert len(ret) > 1 and float(ret.var()) > 0
    assert stats["explained_variance"] == pytest.approx(want, rel=1e-6)
    assert set(stats) == {"policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance"}


def test_trainers_build_cardnet_for_the_decks_of_their_rules(tmp_path):
    """A two-deck game trains a CardNet that counts two decks (its lookahead and solver bound),
    in the batched trainer and in selfplay alike; an explicit ``network_kwargs.decks`` wins."""
    from training import selfplay
    from training.common.config import SelfPlayConfig

    kw = "network_kwargs={channels: 8, hidden: 16, lookahead_features: true}"
    assert batch_ppo.build_net(config(tmp_path, "d2", kw, "rules.decks=2")).num_decks == 2
    assert batch_ppo.build_net(config(tmp_path, "d1", kw)).num_decks == 1
    assert batch_ppo.build_net(config(tmp_path, "dx", "network_kwargs={channels: 8, hidden: 16, decks: 3}",
                                      "rules.decks=2")).num_decks == 3
    sp = load_config(SelfPlayConfig, None, ["rules.decks=2", "rules.rounds=[1, 2]", kw])
    assert selfplay.build_net(sp).num_decks == 2


def test_a_finished_run_can_be_trained_longer(tmp_path, capsys):
    cfg = config(tmp_path, "ext", "total_steps=60", "eval_every=0", "opponents={self: 1.0}")
    batch_ppo.train(cfg)
    capsys.readouterr()
    batch_ppo.train(cfg, resume=True)
    assert "nothing to do" in capsys.readouterr().out
    run = batch_ppo.train(config(tmp_path, "ext", "total_steps=150", "eval_every=0", "opponents={self: 1.0}"),
                          resume=True)
    steps = [h["step"] for h in json.loads((run.path / "eval.json").read_text())]
    assert len(steps) == 2 and 60 <= steps[0] < 150 <= steps[1]


def test_the_update_makes_better_than_average_actions_more_likely(tmp_path):
    """One ``batch_ppo.ppo_update`` on a fixed rollout: the actions with a positive advantage gain
    probability, those with a negative one lose it, and the values move toward the returns."""
    from training.ppo.batch_collect import Rollout

    torch.manual_seed(0)
    cfg = config(tmp_path, "update", "network=mlp", "network_kwargs={hidden_sizes: [16]}", "update_epochs=4",
                 "num_minibatches=1", "learning_rate=0.01")
    net = zero_value_mlp()
    rows = 64
    x = torch.rand(rows, net.input_size)
    mask = torch.ones(rows, 54, dtype=torch.bool)
    action = torch.arange(rows) % 54
    with torch.no_grad():
        _, logprob, _, value = policy_step(net, x, mask, action=action)
    advantage = torch.where(torch.arange(rows) % 2 == 0, 1.0, -1.0)
    data = Rollout(x=x, mask=mask, action=action, logprob=logprob, value=value, advantage=advantage,
                   ret=torch.full((rows,), 2.0), critic_x=None)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    batch_ppo.ppo_update(net, None, optimizer, data, cfg, torch.Generator().manual_seed(0))
    with torch.no_grad():
        _, after, _, value_after = policy_step(net, x, mask, action=action)
    gain = after - logprob
    assert gain[advantage > 0].mean() > 0 > gain[advantage < 0].mean()
    assert (value_after - 2.0).abs().mean() < (value - 2.0).abs().mean()
