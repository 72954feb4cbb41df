"""Ray RLlib training (issue 5): runs, loud failure, export without Ray, masks honoured.

Skipped when Ray RLlib is not installed (``pip install -e ".[rllib]"``). One small local Ray
(2 CPUs, session files in a fresh temp folder) is shared by the whole module; the command-line
run joins it with ``--address``, as a run on a cluster would. Games are one round, batches tiny.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.rllib, pytest.mark.slow,
              # RLlib re-registers its internal gymnasium id each time it builds an env runner
              pytest.mark.filterwarnings("ignore:.*rllib-multi-agent-env-v0 already in registry")]
ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from training import train_rllib  # noqa: E402  (needs Ray)
from training.rllib.env import LEARNER_POLICY  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TINY = dict(iterations=1, train_batch_size=200, minibatch_size=100, update_epochs=1,
            network_kwargs={"hidden_sizes": [32, 32]}, rules={"rounds": [1]}, export_every=0)


def tiny_config(tmp_path: Path, **overrides) -> train_rllib.RLlibConfig:
    cfg = train_rllib.RLlibConfig(**{**TINY, "out": str(tmp_path / "run"), **overrides})
    cfg.validate()
    return cfg


@pytest.fixture(scope="module")
def ray_address():
    """One local Ray for the module: 2 CPUs, its own login token and temp folder (not ~ or /tmp/ray)."""
    temp = tempfile.mkdtemp(prefix="tt-ray-")  # short: Ray's socket paths must stay under 108 chars
    own_token = not any(k in os.environ for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"))
    with pytest.MonkeyPatch.context() as mp:
        if own_token:  # else Ray writes a new token to ~/.ray/auth_token
            mp.setenv("RAY_AUTH_TOKEN", secrets.token_hex(32))
        try:
            ray.init(num_cpus=2, include_dashboard=False, _temp_dir=temp, log_to_driver=False)
            yield ray.get_runtime_context().gcs_address
        finally:
            ray.shutdown()
            shutil.rmtree(temp, ignore_errors=True)
            if own_token:
                os.environ.pop("RAY_AUTH_MODE", None)  # set to "token" by ray.init for the process


def test_one_iteration_without_env_runners(ray_address, tmp_path):
    summary = train_rllib.train(tiny_config(tmp_path, env_runners=0))
    run = tmp_path / "run"
    assert summary["env_steps"] >= 200
    meta = json.loads((run / "final.json").read_text())
    assert meta["format"] == "three-thirteen-checkpoint"
    assert meta["network"] == {"class": "MLPPolicy", "kwargs": {"num_players": 2, "hidden_sizes": [32, 32]}}
    assert meta["rules"]["rounds"] == [1] and meta["training_steps"] == summary["env_steps"]
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["env_steps"] >= 200
    assert (run / "config.yaml").is_file() and (run / "rllib").is_dir()


def test_command_line_with_one_env_runner_joins_the_cluster(ray_address, tmp_path):
    home, out = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    cmd = [sys.executable, "-m", "training.train_rllib", "--config", "configs/rllib_default.yaml",
           "--address", ray_address, "--env-runners", "1", "--iterations", "1", "--out", str(out),
           "--set", "train_batch_size=200", "--set", "minibatch_size=100", "--set", "update_epochs=1",
           "--set", "network_kwargs.hidden_sizes=[32, 32]", "--set", "rules.rounds=[1]"]
    proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, "HOME": str(home)}, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "iter 1/1" in proc.stdout and (out / "final.pt").is_file()
    assert list(home.iterdir()) == [], "Ray wrote to the home folder"
    # The exported policy plays through the evaluator, with no Ray involved.
    ev = subprocess.run([sys.executable, "-m", "training.evaluate", str(out / "final.pt"), "greedy-v0",
                         "--games", "1", "--rounds", "1"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert ev.returncode == 0, ev.stdout[-2000:] + ev.stderr[-2000:]


@pytest.mark.parametrize("env_runners", [0, 1])
def test_failing_environment_fails_the_run(ray_address, tmp_path, env_runners):
    # With RLlib's defaults the crashed env runner would be restarted (or dropped) and the
    # iterations would report 0 sampled steps while the script exits 0.
    if env_runners == 0:
        # sampling in this process: RLlib re-raises the environment's error as the cause of a RuntimeError
        with pytest.raises(RuntimeError) as info:
            train_rllib.train(tiny_config(tmp_path, env_runners=0, fail_at_step=30))
        cause = info.value.__cause__
        assert isinstance(cause, RuntimeError), repr(cause)
        assert str(cause) == "environment failed on purpose at step 30 (fail_at_step)"
    else:
        # a remote runner whose env raises exits (RLlib's actor manager), and with restarts off that kills the run
        with pytest.raises(ray.exceptions.ActorDiedError) as info:
            train_rllib.train(tiny_config(tmp_path, env_runners=1, fail_at_step=30))
        assert "MultiAgentEnvRunner" in str(info.value) and "exit code 1" in str(info.value), str(info.value)
    assert not (tmp_path / "run" / "final.pt").exists()
    assert (tmp_path / "run" / "metrics.jsonl").read_text() == ""  # no iteration was reported


@pytest.fixture(scope="module")
def trained_algo(ray_address, tmp_path_factory):
    """A 3-player algorithm after one iteration, half its episodes against greedy-v0 opponents."""
    cfg = tiny_config(tmp_path_factory.mktemp("algo"), num_players=3, opponent_mix=0.5, opponents=["greedy-v0"])
    algo = train_rllib.build_config(cfg, cfg.run_path).build_algo()
    try:
        assert train_rllib.sampled_steps(algo.train()) >= 200
        yield cfg, algo
    finally:
        algo.stop()


def sampled_batch(algo, episodes: int) -> tuple[list, np.ndarray, np.ndarray]:
    eps = algo.env_runner.sample(num_episodes=episodes, explore=True)
    agent_eps = [sa for ep in eps for sa in ep.agent_episodes.values()]
    obs = np.concatenate([sa.get_observations()["observations"] for sa in agent_eps])
    mask = np.concatenate([sa.get_observations()["action_mask"] for sa in agent_eps])
    return eps, obs, mask


def test_export_reloads_without_ray_with_identical_probabilities(trained_algo, tmp_path):
    cfg, algo = trained_algo
    _, obs, mask = sampled_batch(algo, episodes=2)
    to_move = mask.any(axis=1)  # the rows where the agent is to move
    obs, mask = obs[to_move], mask[to_move]
    assert len(obs) >= 10
    module = algo.get_module(LEARNER_POLICY)
    with torch.no_grad():
        out = module.forward_inference({"obs": {"observations": torch.as_tensor(obs),
                                                "action_mask": torch.as_tensor(mask)}})
    dist = module.get_inference_action_dist_cls().from_logits(out["action_dist_inputs"])
    rllib_probs = dist._dist.probs.numpy()
    assert np.all(rllib_probs[mask == 0] == 0)

    path = train_rllib.export(algo, cfg, tmp_path / "final.pt", iteration=1, env_steps=0)
    np.savez(tmp_path / "batch.npz", obs=obs, mask=mask)
    script = (
        "import sys; sys.modules['ray'] = None  # any 'import ray' now fails\n"
        "import numpy as np, torch\n"
        "from models.checkpoint import load_checkpoint\n"
        f"net, meta = load_checkpoint({str(path)!r}, num_players=3)\n"
        f"b = np.load({str(tmp_path / 'batch.npz')!r})\n"
        "with torch.no_grad():\n"
        "    dist, _ = net(b['obs'], b['mask'])\n"
        f"np.save({str(tmp_path / 'probs.npy')!r}, dist.probs.numpy())\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'ray' and sys.modules[m]]\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    exported = np.load(tmp_path / "probs.npy")
    np.testing.assert_allclose(exported, rllib_probs, rtol=1e-5, atol=1e-7)
    assert np.array_equal(exported.argmax(axis=1), rllib_probs.argmax(axis=1))


def test_no_illegal_action_in_sampled_episodes(trained_algo):
    _, algo = trained_algo
    episodes, _, _ = sampled_batch(algo, episodes=10)
    checked, modules = 0, set()
    for ep in episodes:
        for agent_id, sa in ep.agent_episodes.items():
            modules.add(ep.module_for(agent_id))
            masks = sa.get_observations()["action_mask"]
            actions = np.asarray(sa.get_actions())
            legal = masks[np.arange(len(actions)), actions]
            assert legal.all(), f"{agent_id} ({ep.module_for(agent_id)}) took illegal actions {actions[legal == 0]}"
            checked += len(actions)
    assert checked >= 50, "test did not sample enough actions"
    assert LEARNER_POLICY in modules


def test_cardnet_kwargs_follow_the_rules(tmp_path):
    """A CardNet learner gets the rules' ace rule, naturals and deck count (``CardNet.rule_kwargs``)."""
    cfg = tiny_config(tmp_path, network="cardnet", network_kwargs={"channels": 4, "hidden": 8},
                      rules={"rounds": [1], "decks": 2, "aces": "high_or_low"})
    kwargs = cfg.full_network_kwargs()
    assert (kwargs["decks"], kwargs["aces_high"], kwargs["num_players"]) == (2, True, 2)
