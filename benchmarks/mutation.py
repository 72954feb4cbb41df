"""Mutation testing with mutmut, one module at a time (not part of CI: hours on 2 shared cores).

    pip install "mutmut>=3.8"                         # the mutation extra: pip install -e ".[mutation]"
    python benchmarks/mutation.py training/ship.py    # one module (its tests are listed in MODULES)
    python benchmarks/mutation.py --all               # every module of MODULES, one after the other
    python benchmarks/mutation.py training/ship.py --survivors   # then: the diff of every surviving mutant
    python benchmarks/mutation.py training/ship.py --after       # after adding tests: rerun the survivors

mutmut changes one thing at a time in the module (an operator, a constant, a string, a removed
call or argument) and runs the tests that cover the changed function; a mutant is *killed* when
a test fails. The score is killed / (killed + survived); mutants no test reaches count as
survived too (mutmut's "no tests"). Each module is mutated in its own scratch copy of this
checkout (``--work``, default ``/tmp/tt-mutation-training/<module>``: the tracked files and the built C
extensions), so the checkout is never changed, and only the test files listed for the module run,
under ``nice -n 10`` with one worker (``--workers``). The summary of each run is written to
``<work>/<module>/summary.json``; ``docs/MUTATION.md`` has the scores and what survived.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRITON_TESTS = "tests/test_batch_triton_kernels.py"  # the Triton kernels, interpreted on a CPU
BATCH_PPO_TESTS = ["tests/test_batch_ppo.py", "tests/test_batch_ppo_tables.py"]  # the batched trainer
WEB_TESTS = ["tests/test_web_api.py", "tests/test_web_watch_and_results.py", "tests/test_web_limits.py",
             "tests/test_web_survivors.py", "tests/test_web_security.py", "tests/test_web_work_limits.py"]
MODULES: dict[str, list[str]] = {
    "training/ship.py": ["tests/test_ship.py"],
    "training/common/config.py": ["tests/test_config.py", "tests/test_config_values.py"],
    "training/common/value_checks.py": ["tests/test_config_values.py", "tests/test_config.py",
                                        "tests/test_batch_ppo_config.py"],
    "training/common/resume.py": ["tests/test_resume.py", "tests/test_resume_state.py"],
    "training/common/run_utils.py": ["tests/test_run_utils_overwrite.py", "tests/test_resume.py",
                                     "tests/test_run_lock.py", "tests/test_resume_state.py"],
    "training/long_run.py": ["tests/test_long_run.py", "tests/test_long_run_signals.py"],
    "training/common/long_run_report.py": ["tests/test_long_run.py"],
    "training/common/run_lock.py": ["tests/test_run_lock.py", "tests/test_lock_and_json_survivors.py"],
    "tt_env/evaluation/leaderboard.py": ["tests/test_leaderboard.py", "tests/test_oracle_pipeline.py"],
    "tt_env/evaluation/duplicate.py": ["tests/test_evaluate.py", "tests/test_eval_batch.py"],
    "tt_env/evaluation/evaluator.py": ["tests/test_evaluate.py", "tests/test_evaluate_cli.py",
                                       "tests/test_evaluate_labels.py"],
    "training/common/yaml_load.py": ["tests/test_config_input.py"],
    "models/checkpoint_agent.py": ["tests/test_eval_batch.py", "tests/test_network_agent.py",
                                   "tests/test_inference.py"],
    "models/checkpoint.py": ["tests/test_checkpoint.py", "tests/test_checkpoint_atomic.py"],
    "models/sb3_zip.py": ["tests/test_sb3_zip.py", "tests/test_sb3_refusals.py"],
    "tt_env/jsonio.py": ["tests/test_jsonio.py", "tests/test_strict_json_outputs.py",
                         "tests/test_lock_and_json_survivors.py"],
    "tt_env/cli_checks.py": ["tests/test_cli_checks.py", "tests/test_evaluate_cli.py", "tests/test_cli_refusals.py",
                             "tests/test_replay_cli.py"],
    "tt_env/ui/records.py": ["tests/test_records.py", "tests/test_replay_cli.py"],
    "tt_env/ui/play.py": ["tests/test_play.py", "tests/test_play_input.py"],
    "tt_env/env_checks.py": ["tests/test_env_errors.py", "tests/test_gym_env.py", "tests/test_batch_vector_env.py"],
    "tt_env/agents/expert.py": ["tests/test_expert_options.py", "tests/test_expert_equivalence.py",
                                "tests/test_agents.py"],
    # the modules of the belief, search, web and hardening issues (issue 25's audit)
    "tt_env/web/validate.py": WEB_TESTS,
    "tt_env/web/views.py": WEB_TESTS,
    "tt_env/web/watch_game.py": WEB_TESTS,
    "tt_env/web/app.py": WEB_TESTS,
    "tt_env/search/worlds.py": ["tests/test_determinize.py", "tests/test_search_details.py", "tests/test_seat_bugs.py"],
    "tt_env/agents/last_turn.py": ["tests/test_last_turn.py", "tests/test_seat_bugs.py"],
    "tt_env/rlcard/game.py": ["tests/test_rlcard_env.py", "tests/test_rlcard_hardening.py"],
    "tt_env/rlcard/env.py": ["tests/test_rlcard_env.py", "tests/test_rlcard_hardening.py"],
    "models/belief.py": ["tests/test_belief_files.py", "tests/test_belief_hardening.py", "tests/test_belief_worlds.py"],
    "models/belief_net.py": ["tests/test_belief_math.py", "tests/test_belief_files.py", "tests/test_seat_bugs.py"],
    "training/belief_data.py": ["tests/test_belief_tools.py", "tests/test_belief_hardening.py",
                                "tests/test_seat_bugs.py"],
    "training/train_belief.py": ["tests/test_belief_tools.py", "tests/test_belief_hardening.py",
                                 "tests/test_belief_survivors.py"],
    "training/baselines/runner.py": ["tests/test_baselines_resume.py"],
    # the PPO trainers' shared outer loop and end report
    "training/ppo/run_loop.py": ["tests/test_run_loop.py", "tests/test_tb_writer.py", "tests/test_resume.py",
                                 "tests/test_ppo_loop.py", "tests/test_signals.py", *BATCH_PPO_TESTS],
    "training/common/trainer_cli.py": ["tests/test_trainer_cli.py", "tests/test_resume.py", "tests/test_signals.py"],
    # the batched trainer's rollout and tables (issue 26)
    "training/ppo/batch_rollout.py": ["tests/test_batch_rollout.py", *BATCH_PPO_TESTS,
                                      "tests/test_batch_tables_state.py"],
    "training/ppo/batch_collect.py": [*BATCH_PPO_TESTS, "tests/test_batch_tables_state.py"],
    "training/ppo/batch_config.py": ["tests/test_batch_ppo_config.py", *BATCH_PPO_TESTS,
                                     "tests/test_config.py", "tests/test_config_files.py"],
    "training/batch_ppo.py": [*BATCH_PPO_TESTS, "tests/test_batch_ppo_config.py",
                              "tests/test_batch_tables_state.py", "tests/test_ppo_loop.py"],
    "training/common/tb_writer.py": ["tests/test_tb_writer.py", "tests/test_resume.py"],
    # the batched engine's interfaces and bridges (issue 26)
    "tt_env/batch/vector_env.py": ["tests/test_batch_vector_env.py", "tests/test_sb3_batched_vec_env.py"],
    "tt_env/batch/torchrl_env.py": ["tests/test_batch_torchrl.py"],
    "tt_env/batch/agents.py": ["tests/test_batch_agents.py", "tests/test_batch_moves.py"],
    "tt_env/batch/bridge.py": ["tests/test_batch_api.py", "tests/test_batch_state.py", "tests/test_batch_loads.py"],
    "tt_env/batch/timestep.py": ["tests/test_batch_api.py", "tests/test_batch_engine.py",
                                 "tests/test_batch_rewards.py"],
    "tt_env/batch/graphs.py": ["tests/test_batch_graphs.py", "tests/test_batch_tables_state.py"],
    "tt_env/batch/game.py": ["tests/test_batch_api.py", "tests/test_batch_engine.py", TRITON_TESTS],
    "tt_env/batch/go_out.py": ["tests/test_batch_solver.py", "tests/test_go_out_filter.py", "tests/test_batch_api.py"],
    "tt_env/batch/go_out_filter.py": ["tests/test_go_out_filter.py", "tests/test_batch_engine.py",
                                      TRITON_TESTS],
    "tt_env/batch/moves.py": ["tests/test_batch_moves.py", "tests/test_batch_engine.py", TRITON_TESTS],
    "tt_env/batch/solver.py": ["tests/test_batch_solver.py", "tests/test_batch_solver_triton.py"],
    "tt_env/batch/solver_inputs.py": ["tests/test_batch_solver.py"],
    "tt_env/batch/deal.py": ["tests/test_batch_engine.py", "tests/test_batch_api.py", "tests/test_batch_observe.py",
                             TRITON_TESTS],
    "tt_env/batch/state.py": ["tests/test_batch_state.py", "tests/test_batch_api.py",
                              "tests/test_batch_tables_state.py"],
    "tt_env/batch/observe.py": ["tests/test_batch_observe.py", "tests/test_batch_engine.py", TRITON_TESTS],
    "tt_env/batch/random_keys.py": ["tests/test_batch_random_keys.py", "tests/test_batch_api.py",
                                    "tests/test_batch_engine.py", TRITON_TESTS],
    "tt_env/batch/buffers.py": ["tests/test_batch_buffers.py", "tests/test_batch_api.py"],
    "tt_env/batch/global_state.py": ["tests/test_batch_global_state.py", *BATCH_PPO_TESTS],
    "tt_env/batch/step_inputs.py": ["tests/test_batch_api.py", "tests/test_batch_vector_env.py",
                                    "tests/test_batch_devices.py"],
    "tt_env/batch/devices.py": ["tests/test_batch_devices.py"],
    # the Triton modules' launchers (the kernels are in lru_cached builders, which mutmut leaves
    # alone: benchmarks/hand_mutants.py changes those). Not listed: go_out_filter_triton.py and
    # deal_triton.py, whose kernels call module-level helpers that read `tl`, which only
    # triton_build.build binds: mutmut's trampolines run the helpers in the module's own globals,
    # where the tests stop on "name 'tl' is not defined" and every mutant is left "not checked"
    "tt_env/batch/solver_triton.py": ["tests/test_batch_solver_triton.py", "tests/test_batch_solver.py"],
    "tt_env/batch/observe_triton.py": [TRITON_TESTS],
    "tt_env/batch/moves_triton.py": [TRITON_TESTS],
    # the PPO trainers' shared losses and the self-play trainer's update, tables and loop
    "training/ppo/losses.py": ["tests/test_ppo_losses.py", "tests/test_ppo_update.py", *BATCH_PPO_TESTS],
    "training/ppo/update.py": ["tests/test_ppo_update.py", "tests/test_ppo_loop.py", "tests/test_models.py"],
    "training/ppo/loop.py": ["tests/test_ppo_loop.py", "tests/test_run_loop.py", "tests/test_resume.py"],
    "training/common/evaluations.py": ["tests/test_ppo_loop.py", "tests/test_run_loop.py", "tests/test_resume.py",
                                       "tests/test_sb3_trainer.py"],
    "training/ppo/selfplay_tables.py": ["tests/test_selfplay_tables.py", "tests/test_ppo_loop.py",
                                        "tests/test_resume.py", "tests/test_resume_state.py"],
    "training/ppo/batch_critic.py": ["tests/test_batch_critic.py", *BATCH_PPO_TESTS,
                                     "tests/test_batch_ppo_config.py"],
    "training/selfplay.py": ["tests/test_ppo_loop.py", "tests/test_resume.py", "tests/test_trainer_cli.py"],
    "training/train_sb3.py": ["tests/test_sb3_trainer.py", "tests/test_trainer_cli.py", "tests/test_resume.py",
                              "tests/test_tb_writer.py", "tests/test_sb3_batched_vec_env.py", "tests/test_devices.py"],
}
"""Module -> the test files that cover it (only these run for its mutants). Not listed: tests that
run a module's script in a subprocess (``tests/test_training_smoke.py``): under mutmut's first,
recording run the script fails to import the recording trampolines, and every mutant is left
"not checked"."""
PACKAGES = ["tt_env", "models", "training"]


def copy_checkout(dest: Path, rev: str | None = None, *, fresh: bool = True) -> None:
    """The files of commit ``rev`` (None: the checkout's tracked files as they are now) and the
    built C extensions, in ``dest`` (emptied first when ``fresh``; mutmut's ``mutants/`` is kept otherwise)."""
    if fresh and dest.exists():
        shutil.rmtree(dest)
    # mutants/ exists before mutmut starts: Python caches a missing folder of PYTHONPATH as no
    # folder, and the tests of a first run then imported the checkout's unmutated packages
    (dest / "mutants").mkdir(parents=True, exist_ok=True)
    if rev is not None:
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    else:
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
        for name in files.decode().split("\0"):
            if name and (ROOT / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
    for package in ("engine", "batch"):  # the C meld solver and the batched engine's C loops
        for built in (ROOT / "tt_env" / package).glob("*.so"):
            shutil.copy2(built, dest / "tt_env" / package / built.name)


SKIPPED_LINES = [r"^\s*raise\b", r"^\s*parser\.(error|exit)\(", r"^\s*(except|finally)\b.*#\s*pragma: no cover"]
"""Statements not mutated: the wording of errors (``raise ...``, ``parser.error``), which the
tests check where the wording is the point (one line, naming the value); mutating the words
of every message would double the mutants and the hours. The conditions that raise are mutated."""


def setup_cfg(module: str, tests: list[str]) -> str:
    lines = ["[mutmut]", "source_paths=", *[f"    {p}" for p in PACKAGES], "only_mutate=", f"    {module}",
             "also_copy=", "    configs", "    README.md", "    setup.py", "    benchmarks", "    docs",
             "do_not_mutate_patterns=", *[f"    {p}" for p in SKIPPED_LINES],
             "pytest_add_cli_args_test_selection=", *[f"    {t}" for t in tests],
             "pytest_add_cli_args=", "    -p", "    no:cacheprovider", "    -q", ""]
    return "\n".join(lines)


def _folder(work: Path, module: str) -> Path:
    return work / module.replace("/", "_").removesuffix(".py")


def _mutmut(dest: Path, *args: str, log: Path | None = None) -> str:
    # the mutated copy's packages, also in the subprocesses some tests start (they inherit the mutant's name)
    # (with any PYTHONPATH given, after it: where mutmut itself is installed, say)
    # OMP_NUM_THREADS=1: mutmut forks a child per mutant from a process whose tests ran torch, and a
    # child forked from a process with an OpenMP thread pool hangs at its first parallel operation
    # (it ends as a "timeout" after many seconds instead of failing or passing)
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(dest / "mutants"), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "mutmut", *args]
    if log is None:
        return subprocess.run(command, cwd=dest, env=env, capture_output=True, text=True).stdout
    with open(log, "a") as f:
        subprocess.run(["nice", "-n", "10", *command], cwd=dest, env=env, stdout=f, stderr=subprocess.STDOUT)
    return ""


def _statuses(dest: Path) -> dict[str, str]:
    """Every mutant's name and status (``killed``, ``survived``, ``no tests``, ``timeout``, ``not checked``...)."""
    out = {}
    for line in _mutmut(dest, "results", "--all", "true").splitlines():
        name, _, status = line.strip().partition(": ")
        if status:
            out[name] = status
    return out


def _summary(module: str, dest: Path, name: str) -> dict:
    """Counts over the mutants of the run (the sample, when there is one) and the score."""
    statuses = _statuses(dest)
    sample = dest / "sample.txt"
    chosen = sample.read_text().split() if sample.exists() else sorted(statuses)
    counts: dict[str, int] = {}
    for mutant in chosen:
        counts[statuses.get(mutant, "gone")] = counts.get(statuses.get(mutant, "gone"), 0) + 1
    killed, survived, untested = counts.get("killed", 0), counts.get("survived", 0), counts.get("no tests", 0)
    scored = killed + survived + untested
    summary = {"module": module, "tests": MODULES[module], "mutants": len(statuses), "run": len(chosen),
               "counts": counts, "killed": killed, "survived": survived, "no_tests": untested,
               "score": round(killed / scored, 3) if scored else None,
               "survivors": [m for m in chosen if statuses.get(m) in ("survived", "no tests")]}
    (dest / name).write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _run_names(dest: Path, names: list[str], workers: int, log: Path) -> None:
    for start in range(0, len(names), 50):
        _mutmut(dest, "run", "--max-children", str(workers), *names[start:start + 50], log=log)


def run_module(module: str, work: Path, workers: int, rev: str | None = None, sample: int = 0,
               seed: int = 0) -> dict:
    """Mutate ``module`` in a fresh scratch copy (of commit ``rev``, or of the checkout); returns the summary.

    ``sample``: run only that many of its mutants, drawn at random with ``seed`` (0: all of them).
    """
    dest = _folder(work, module)
    copy_checkout(dest, rev)
    (dest / "setup.cfg").write_text(setup_cfg(module, MODULES[module]))
    log = dest / "mutmut-run.log"
    if not sample:
        _mutmut(dest, "run", "--max-children", str(workers), log=log)
        return _summary(module, dest, "summary.json")
    _mutmut(dest, "run", "--max-children", str(workers), "no.such.mutant", log=log)  # generates them, runs none
    names = sorted(_statuses(dest))
    chosen = sorted(random.Random(seed).sample(names, min(sample, len(names))))
    (dest / "sample.txt").write_text("\n".join(chosen) + "\n")
    _run_names(dest, chosen, workers, log)
    return _summary(module, dest, "summary.json")


def rerun_module(module: str, work: Path, workers: int) -> dict:
    """After new tests: the checkout's files over an earlier run's copy, the mutants of changed code run,
    and every earlier survivor run again with the tests as they are now (killed mutants stay killed)."""
    dest = _folder(work, module)
    before = json.loads((dest / "summary.json").read_text())
    copy_checkout(dest, None, fresh=False)
    (dest / "setup.cfg").write_text(setup_cfg(module, MODULES[module]))
    (dest / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)  # map the new tests to the functions
    if not (dest / "sample.txt").exists():
        _mutmut(dest, "run", "--max-children", str(workers), log=dest / "mutmut-rerun.log")  # changed code's mutants
    present = _statuses(dest)
    _run_names(dest, [n for n in before["survivors"] if n in present], workers, dest / "mutmut-rerun.log")
    sample = dest / "sample.txt"
    if sample.exists():  # mutants of changed code get new names: the sample keeps its size over what exists now
        chosen = [n for n in sample.read_text().split() if n in present]
        sample.write_text("\n".join(chosen) + "\n")
    return _summary(module, dest, "summary_after.json")


def show_survivors(module: str, work: Path) -> None:
    dest = _folder(work, module)
    latest = dest / "summary_after.json" if (dest / "summary_after.json").exists() else dest / "summary.json"
    for line in json.loads(latest.read_text())["survivors"]:
        print(f"== {line}\n{_mutmut(dest, 'show', line.split(':')[0])}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"modules to mutate, of {sorted(MODULES)}")
    parser.add_argument("--all", action="store_true", help="every module of MODULES")
    parser.add_argument("--work", default="/tmp/tt-mutation-training",
                        help="scratch folder (default /tmp/tt-mutation-training)")
    parser.add_argument("--workers", type=int, default=1, help="mutmut's parallel test runs (default 1)")
    parser.add_argument("--survivors", action="store_true", help="print the surviving mutants of an earlier run")
    parser.add_argument("--rev", help="mutate the files of this commit (default: the checkout as it is)")
    parser.add_argument("--sample", type=int, default=0, metavar="N",
                        help="run N mutants drawn at random (--seed) instead of all of them (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    parser.add_argument("--after", action="store_true",
                        help="rerun an earlier run's survivors (and changed code) with the checkout's tests now")
    args = parser.parse_args(argv)
    modules = sorted(MODULES) if args.all else args.modules
    unknown = [m for m in modules if m not in MODULES]
    if unknown or not modules:
        parser.error(f"give modules of {sorted(MODULES)} (or --all); unknown: {unknown}")
    work = Path(args.work)
    if args.survivors or args.after:  # both read an earlier run's summary: say so, not a traceback
        missing = [m for m in modules if not (_folder(work, m) / "summary.json").exists()]
        if missing:
            flag = "--survivors" if args.survivors else "--after"
            parser.error(f"{flag} reads an earlier run's summary, and {work} has none for {missing}: run "
                         f"'python benchmarks/mutation.py {' '.join(missing)} --work {work}' first")
    for module in modules:
        if args.survivors:
            show_survivors(module, work)
            continue
        if args.after:
            s = rerun_module(module, work, args.workers)
        else:
            s = run_module(module, work, args.workers, args.rev, args.sample, args.seed)
        print(f"{module}: {s['killed']} killed, {s['survived']} survived, {s['no_tests']} without tests of "
              f"{s['run']} run ({s['mutants']} mutants; {s['counts']}): score {s['score']}", flush=True)


if __name__ == "__main__":
    main()
