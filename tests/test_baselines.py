"""The baselines benchmark (benchmarks/baselines.py): every algorithm end to end on a tiny budget, its files,
``--resume``, its refusals, the from-scratch checks and the agent adapter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from training.baselines import ALGOS, missing_modules
from training.baselines.common import RunContext, ScoreAgent
from training.baselines.config import BaselinesConfig, check_hyperparameters
from training.baselines.report import summarize, t_interval
from training.common.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "baselines.py"
SMOKE = ROOT / "configs" / "baselines_smoke.yaml"


def run(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def benchmark_cli():
    """``benchmarks/baselines.py`` as a module (it is a script, not part of a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("baselines_cli", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("baselines") / "bench"
    return out, run("--config", str(SMOKE), "--out", str(out))


@pytest.mark.slow
def test_every_algorithm_runs_end_to_end(smoke) -> None:
    out, proc = smoke
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "baselines.json").read_text())
    cfg = load_config(BaselinesConfig, SMOKE)
    installed = [a for a in ALGOS if not missing_modules(a)]
    assert set(report["skipped"]) == set(ALGOS) - set(installed)
    runs = {r["algo"]: r for r in report["runs"]}
    assert set(runs) == set(installed)
    for algo, r in runs.items():
        assert r["status"] == "done" and r["seed"] == 0, algo
        steps = [e["step"] for e in r["evaluations"]]  # one point fewer when a chunk passed two (a long game)
        assert 1 <= len(steps) <= 2 and steps[0] >= cfg.eval_steps()[0] and steps[-1] >= cfg.steps, (algo, steps)
        assert steps == sorted(set(steps)) and steps[-1] == r["steps"], (algo, steps)
        seconds = [e["learn_seconds"] for e in r["evaluations"]]
        assert 0 < seconds[0] <= seconds[-1] == pytest.approx(r["learn_seconds"], rel=1e-3), (algo, seconds)
        assert r["steps_per_second"] == pytest.approx(r["steps"] / r["learn_seconds"])
        for e in r["evaluations"]:
            assert [x["opponent"] for x in e["results"]] == ["greedy-v0", "expert-v0"]
            assert all(x["deals"] == 2 and x["games"] == 4 and np.isfinite(x["score_diff"]) for x in e["results"])
    assert set(report["summary"]) == set(installed)
    assert report["versions"]["three-thirteen"] and report["step_definition"].startswith("one decision")
    assert (out / "baselines.png").stat().st_size > 10_000
    assert not list((out / "results").glob("*.partial.json"))


@pytest.mark.slow
def test_resume_skips_finished_runs_and_refuses_changes(smoke) -> None:
    out, first = smoke
    assert first.returncode == 0
    before = json.loads((out / "baselines.json").read_text())["runs"]
    again = run("--config", str(SMOKE), "--out", str(out), "--resume")
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout.count("finished before, skipped") == len(before)
    assert json.loads((out / "baselines.json").read_text())["runs"] == before
    refused = run("--config", str(SMOKE), "--out", str(out), "--resume", "--steps", "400")
    assert refused.returncode == 2 and "--resume cannot change steps" in refused.stderr
    fresh = run("--config", str(SMOKE), "--out", str(out))
    assert fresh.returncode == 2 and "already holds files: add --resume" in fresh.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "stepz=3"], "unknown config key(s) ['stepz']"),
    (["--algos", "ppo", "alphazero"], "algos=['ppo', 'alphazero'] is not allowed"),
    (["--seeds", "1", "1"], "seeds=[1, 1] is not allowed"),
    (["--set", "hyperparameters={ppo: {network_kwargs: {solver_features: true}, anneal_lr: false}}"],
     "solver_features: false"),
    (["--set", "hyperparameters={ppo: {init_checkpoint: x.pt, anneal_lr: false}}"], "init_checkpoint must be null"),
    (["--set", "hyperparameters={ppo: {anneal_lr: true, network: mlp}}"], "anneal_lr must be false"),
    (["--set", "hyperparameters={ppo: {total_steps: 5, anneal_lr: false, network: mlp}}"],
     "['total_steps'] are set by the benchmark"),
    (["--algos", "rlcard-dmc", "--set", "hyperparameters={rlcard-dmc: {batch: 3}}"], "unknown key(s) ['batch']"),
    (["--algos", "rllib-ppo", "--set", "hyperparameters={rllib-ppo: {opponent_mix: 0.5}}"], "opponent_mix must be 0"),
    (["--set", "hyperparameters={dqn: {}}"], "unknown algorithm(s) ['dqn']"),
])
def test_bad_configs_stop_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture, args: list[str],
                                              message: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        benchmark_cli().main(["--config", str(SMOKE), "--out", str(tmp_path / "b"), *args])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err, err[-2000:]
    assert not (tmp_path / "b").exists()


def test_evaluation_opponents_that_do_not_fit_the_game_stop_before_training(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture) -> None:
    """A 2-player network among the eval_opponents of a 3-player benchmark trained up to the first evaluation
    and only then stopped with a CheckpointError traceback; now refused in one line before anything runs."""
    with pytest.raises(SystemExit) as exit_info:
        benchmark_cli().main(["--config", str(SMOKE), "--out", str(tmp_path / "b"), "--algos", "ppo", "--set",
                              "num_players=3", "--set", "eval_opponents=[random-v0, ppo-2p-v1]"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err, err[-2000:]
    line = err.strip().splitlines()[-1]
    assert "eval_opponents: 'ppo-2p-v1' cannot play this run's games" in line and "3 players" in line
    assert not (tmp_path / "b").exists()


def test_the_benchmark_config_is_valid_and_from_scratch(tmp_path: Path) -> None:
    cfg = load_config(BaselinesConfig, ROOT / "configs" / "baselines.yaml")
    assert cfg.algos == list(ALGOS) and len(cfg.seeds) >= 3 and cfg.num_players == 2
    assert cfg.eval_opponents == ["random-v0", "greedy-v0", "expert-v0"]
    check_hyperparameters(cfg, tmp_path)  # every section's keys are its framework's
    for algo in ("ppo", "batch-ppo"):
        ppo = cfg.params(algo)
        assert ppo.get("init_checkpoint") is None and not ppo["network_kwargs"].get("expert_features")
        assert ppo["network"] == "mlp" or ppo["network_kwargs"]["solver_features"] is False
    # the batched trainer learns with the same network as ppo: only the engine differs
    assert cfg.params("batch-ppo")["network_kwargs"] == cfg.params("ppo")["network_kwargs"]
    with pytest.raises(ConfigError, match=r"tianshou-dqn: unknown config key\(s\) \['learning_rat'\]"):
        check_hyperparameters(load_config(BaselinesConfig, ROOT / "configs" / "baselines.yaml", [
            "algos=[tianshou-dqn]", "hyperparameters={tianshou-dqn: {learning_rat: 0.1}}"]), tmp_path)


def test_eval_steps_cover_the_budget() -> None:
    cfg = BaselinesConfig(steps=1000, eval_points=4)
    assert cfg.eval_steps() == [250, 500, 750, 1000]
    assert BaselinesConfig(steps=10, eval_points=3).eval_steps() == [4, 7, 10]


def test_score_agent_plays_the_best_legal_action() -> None:
    scores = np.tile(np.arange(54, dtype=np.float32), (3, 1))
    agent = ScoreAgent(lambda obs: scores[:len(obs)], "test")
    masks = np.zeros((3, 54), dtype=np.int8)
    masks[0, [0, 1]] = 1
    masks[1, [5, 40, 53]] = 1
    masks[2, [7]] = 1
    obs = np.zeros((3, 294), dtype=np.float32)
    rngs = [np.random.default_rng(i) for i in range(3)]
    assert agent.act_batch(obs, masks, rngs) == [1, 53, 7]
    assert agent.act(obs[1], masks[1], rngs[1]) == 53
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(obs[0], np.zeros(54, dtype=np.int8), rngs[0])


def test_summary_over_seeds_uses_the_last_evaluation() -> None:
    def result(seed: int, final: float) -> dict:
        evals = [{"step": s, "learn_seconds": s / 10, "results": [{"opponent": "greedy-v0", "score_diff": d}]}
                 for s, d in ((50, 99.0), (100, final))]
        return {"algo": "ppo", "seed": seed, "status": "done", "steps": 100, "learn_seconds": 10.0,
                "wall_seconds": 12.0, "steps_per_second": 10.0, "evaluations": evals}

    summary = summarize([result(0, 1.0), result(1, 3.0), result(2, 5.0),
                         {**result(3, -50.0), "status": "running"}], ["greedy-v0"])
    final = summary["ppo"]["final"]["greedy-v0"]
    assert summary["ppo"]["seeds"] == [0, 1, 2] and final["mean"] == pytest.approx(3.0)
    assert final["ci95"] == pytest.approx(t_interval([1.0, 3.0, 5.0]))
    assert final["ci95"][0] == pytest.approx(3.0 - 4.302653 * 2.0 / np.sqrt(3), abs=1e-5)
    assert t_interval([2.0]) is None


def test_run_context_rules_are_the_default_game() -> None:
    ctx = RunContext(seed=0, num_players=2, work_dir=Path("."))
    assert ctx.rules.num_players == 2 and ctx.rules.rounds == tuple(range(1, 12))


@pytest.mark.parametrize("algo", ["openspiel-dqn", "openspiel-nfsp", "rlcard-dqn", "tianshou-dqn"])
def test_steps_are_the_decisions_the_framework_learned_from(tmp_path: Path, algo: str) -> None:
    if missing_modules(algo):
        pytest.skip(f"{algo} needs {missing_modules(algo)}")
    from training.baselines import make_trainer

    params = load_config(BaselinesConfig, SMOKE).params(algo)
    trainer = make_trainer(algo, params, RunContext(seed=1, num_players=2, work_dir=tmp_path), 400, 2)
    try:
        trainer.train_until(150)
        assert trainer.steps == 150 if algo.startswith("openspiel") else trainer.steps >= 150
        if algo == "tianshou-dqn":  # whole collects of step_per_collect steps
            assert trainer.steps < 150 + trainer.p.step_per_collect
        trainer.train_until(300)
        if algo.startswith("openspiel"):  # every decision is one agent step (no game ends this early)
            inner = [a._rl_agent if algo.endswith("nfsp") else a for a in trainer.agents]
            assert sum(a._iteration for a in trainer.agents) == trainer.steps == 300
            assert sum(len(a.replay_buffer) for a in inner) >= 300 - 2 - (300 if algo.endswith("nfsp") else 0)
        elif algo == "rlcard-dqn":
            assert trainer.dqn.total_t == trainer.steps >= 300  # every transition fed, whole games
        else:
            assert len(trainer.buffer) == trainer.steps >= 300  # every learner step of the Gymnasium env
        assert trainer.learn_seconds > 0
        agent = trainer.agent()
        from tt_env import three_thirteen_v0

        env = three_thirteen_v0.raw_env()
        env.reset(seed=0)
        obs = env.observe(env.agent_selection)
        assert agent.act(obs["observation"], obs["action_mask"], np.random.default_rng(0)) in (0, 1)
    finally:
        trainer.close()


@pytest.mark.parametrize(("params", "message"), [
    ({"network_kwargs": {"solver_features": True}, "anneal_lr": False}, "solver_features: false"),
    ({"network_kwargs": {"solver_features": False, "expert_features": True}, "anneal_lr": False}, "not from scratch"),
    ({"network": "mlp", "init_checkpoint": "x.pt", "anneal_lr": False}, "init_checkpoint must be null"),
    ({"network": "mlp"}, "anneal_lr must be false"),
])
@pytest.mark.parametrize("algo", ["ppo", "batch-ppo"])
def test_our_ppo_must_start_from_scratch(tmp_path: Path, params: dict, message: str, algo: str) -> None:
    from training.baselines.ours import batch_ppo_config, selfplay_config

    make = {"ppo": selfplay_config, "batch-ppo": batch_ppo_config}[algo]
    ctx = RunContext(seed=3, num_players=2, work_dir=tmp_path)
    with pytest.raises(ConfigError, match=f"hyperparameters.{algo}: .*{message}"):
        make(params, ctx, 1000)
    cfg = make({"network": "mlp", "anneal_lr": False}, ctx, 1000)
    assert (cfg.total_steps, cfg.init_checkpoint, cfg.network, cfg.seed) == (1000, None, "mlp", 3)
    assert (cfg.eval_every, cfg.run_dir) == (0, str(tmp_path))


def test_table_gives_the_interval_over_seeds_or_over_deals(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from training.baselines.report import table

    def result(seed: int, final: float) -> dict:
        evals = [{"step": 100, "learn_seconds": 60.0,
                  "results": [{"opponent": "greedy-v0", "score_diff": final, "ci95": 4.0}]}]
        return {"algo": "rlcard-dmc", "seed": seed, "status": "done", "steps": 100, "learn_seconds": 60.0,
                "wall_seconds": 70.0, "steps_per_second": 100 / 60, "evaluations": evals}

    one = table(summarize([result(0, 2.0)], ["greedy-v0"]), ["greedy-v0"])
    assert "| `rlcard-dmc` | 1 | 100 | 1.0 min | 2 | +2.0 ± 4.0 (1 seed: over deals) |" in one
    three = table(summarize([result(0, 1.0), result(1, 3.0), result(2, 5.0)], ["greedy-v0"]), ["greedy-v0"])
    assert "| 3 | 100 | 1.0 min | 2 | +3.0 [-2.0, +8.0] |" in three
    with pytest.raises(SystemExit):
        benchmark_cli().main(["--report", "--out", str(tmp_path / "none")])
    assert "holds no benchmark" in capsys.readouterr().err
