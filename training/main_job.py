"""The main job: train a short run with the default config, then evaluate it and ``ppo-2p-v0``.

    python -m training.main_job                 # a few minutes on 2 CPU cores
    python -m training.main_job --deals 200     # tighter intervals, longer evaluation
    python -m training.main_job --resume        # continue a stopped run (or evaluate a finished one)
    python -m training.main_job --overwrite     # delete runs/main_job and train again

1. ``training/selfplay.py`` with ``configs/main_job.yaml`` (progress bar shown), written to
   ``runs/main_job/``;
2. duplicate evaluation (``training.evaluate``) of the new agent and of the shipped
   ``ppo-2p-v0`` against each scripted opponent (``random-v0``, ``greedy-v0``, ``expert-v0``);
3. a table of the score differences (agent minus opponent, lower is better, 95% interval)
   and win rates, and where the checkpoint and the learning curve went.
"""

from __future__ import annotations

import sys
from pathlib import Path

from training.common.config import SelfPlayConfig, add_run_folder_args, parse_config
from training.common.device import add_device_arg, device_override
from tt_env.evaluation.stats import interval_text
from tt_env.evaluation.evaluator import evaluate
from training.common.resume import resume_command
from training.common.run_utils import RunDir, RunFolderError
from training.common.trainer_cli import train_or_exit
from training.common.value_checks import agent_fit_problem
from training.selfplay import train
from tt_env.agents import list_agents
from tt_env.agents.registry import without_rule_mismatch_hint
from tt_env.cli_checks import CommandParser, command_name, int_at_least, output_dir_problem, seed_arg, workers_note
from tt_env.engine.rules import Rules
from tt_env.jsonio import write_json

DEFAULT_CONFIG = "main_job"
"""The shipped config ``configs/main_job.yaml`` (found in the installed package too:
``training.common.config_files``)."""
OPPONENTS = ("random-v0", "greedy-v0", "expert-v0")


SHIPPED = "ppo-2p-v0"
"""The shipped agent evaluated beside the new one, where it fits the run's rules."""


def evaluation_table(agents: dict[str, str], opponents: tuple[str, ...], deals: int, seed: int,
                     workers: int, rules: Rules) -> list[dict]:
    """One row per (agent, opponent): mean score difference with its 95% interval, win rate."""
    rows = []
    for label, spec in agents.items():
        for opp in opponents:
            report, _ = evaluate([spec, opp], deals, seed, rules, workers=workers, progress=True)
            pair = next(p for p in report["pairwise"] if p["a"] == spec)
            agent = report["agents"][0]
            rows.append({"agent": label, "opponent": opp, "deals": deals, "games": report["games_played"],
                         "score_diff": pair["mean_score_diff"], "ci95": pair["ci95"],
                         "win_rate": agent["win_rate"], "win_rate_ci95": agent["win_rate_ci95"]})
    return rows


def print_table(rows: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Duplicate evaluation, 2 players (score: final total, lower is better)",
                  caption="score diff: agent minus opponent [95% interval]; negative means the agent is better")
    for col in ("agent", "opponent", "games", "score diff [95% CI]", "win rate [95% CI]"):
        table.add_column(col, justify="left" if col in ("agent", "opponent") else "right")
    for r in rows:
        table.add_row(r["agent"], r["opponent"], str(r["games"]),
                      f"{r['score_diff']:+.1f} {interval_text(r['ci95'], '+.1f')}",
                      f"{r['win_rate']:.3f} {interval_text(r['win_rate_ci95'], '.3f')}")
    Console().print(table)


def shipped_problem(rules: Rules) -> str | None:
    """Why :data:`SHIPPED` cannot play ``rules`` (another scoring, say), or None when it can."""
    if SHIPPED not in list_agents():
        return f"{SHIPPED} is not installed"
    return agent_fit_problem(SHIPPED, rules)


def run_checkpoint_problem(checkpoint: Path, rules: Rules) -> str | None:
    """Why ``--skip-training`` cannot evaluate the run's ``checkpoint`` in games of ``rules`` (read from its
    sidecar: trained with other scoring, say), or None when it can."""
    from models.checkpoint import CheckpointError, check_compatible, read_metadata
    from tt_env.observation import OBS_VERSION, observation_size

    try:
        meta = read_metadata(checkpoint)
    except (CheckpointError, OSError) as exc:
        return f"cannot read the run's checkpoint: {exc}"
    try:
        check_compatible(meta, num_players=rules.num_players, obs_version=OBS_VERSION,
                         obs_size=observation_size(rules.num_players), rules=rules, where=f"checkpoint {checkpoint}")
    except CheckpointError as exc:
        return (f"{without_rule_mismatch_hint(exc)}; the run was trained with other rules than this config's; "
                f"give the config and --set it was trained with (see {checkpoint.parent.parent / 'config.yaml'})")
    return None


def main(argv: list[str] | None = None) -> None:
    parser = CommandParser(prog="python -m training.main_job", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=DEFAULT_CONFIG,
                        help="self-play config: a YAML file or a shipped config's name (default: main_job)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override one config key (repeatable)")
    parser.add_argument("--deals", type=int_at_least(1), default=30,
                        help="duplicate deals per pairing, >= 1 (default 30)")
    parser.add_argument("--seed", type=seed_arg, default=2024, help="evaluation seed, >= 0 (default 2024)")
    parser.add_argument("--workers", type=int_at_least(1), default=2,
                        help="evaluation worker processes, >= 1 (default 2)")
    parser.add_argument("--skip-training", action="store_true", help="evaluate an existing run's final.pt")
    add_run_folder_args(parser)
    add_device_arg(parser)
    args = parser.parse_args(argv)
    if args.skip_training and args.overwrite:
        parser.error("--overwrite is not allowed with --skip-training: nothing is trained, so nothing would be "
                     "overwritten; give one of them")
    device_override(args)
    cfg = parse_config(parser, SelfPlayConfig, args)  # rejected here, before training
    if cfg.num_players != 2:
        parser.error(f"num_players={cfg.num_players} is not allowed here: the main job trains and evaluates "
                     f"2 players; for other counts train with python -m training.selfplay and evaluate with "
                     f"python -m training.evaluate or training.leaderboard")
    rules = cfg.eval_rules()  # the run's scoring, over every round
    run_path = Path(cfg.run_dir) / cfg.name
    checkpoint = run_path / "checkpoints" / "final.pt"
    problem = output_dir_problem(run_path)  # the run and main_job_eval.json go there: refuse now, not after training
    if problem:
        parser.error(f"run folder {run_path} (run_dir/name of the config): {problem}")
    note = workers_note(args.workers)
    if note:
        print(note, file=sys.stderr)
    if not args.skip_training:
        print(f"== training: {cfg.total_steps} steps of training/selfplay.py ({args.config})")
        train_or_exit(parser, train, cfg, resume=args.resume, overwrite=args.overwrite,
                      command=resume_command(command_name("python -m training.main_job"), argv),
                      exists_hint="; or --skip-training to only evaluate it")
    if not checkpoint.exists():
        parser.error(f"{checkpoint} does not exist: train the run first (without --skip-training)")
    run = RunDir(cfg.run_dir, cfg.name)  # held while evaluating: no --overwrite deletes the checkpoint meanwhile
    try:
        run.lock.acquire("the evaluation would read and write the folder while that run changes it")
    except RunFolderError as exc:
        parser.error(str(exc))
    try:
        problem = run_checkpoint_problem(checkpoint, rules) if args.skip_training else None
        if problem:  # else the evaluation would stop on it with a traceback
            parser.error(f"--skip-training: {problem}")
        agents = {f"{cfg.name} (new)": str(checkpoint)}
        problem = shipped_problem(rules)
        if problem is None:
            agents[f"{SHIPPED} (shipped)"] = SHIPPED
        else:
            print(f"{SHIPPED} left out of the evaluation: {problem}", file=sys.stderr)
        print(f"== evaluation: {args.deals} duplicate deals (x2 seatings) per pairing, seed {args.seed}")
        rows = evaluation_table(agents, OPPONENTS, args.deals, args.seed, args.workers, rules)
        print_table(rows)
        write_json(run_path / "main_job_eval.json", rows)
    finally:
        run.release()
    print(f"checkpoint:     {checkpoint} (+ {checkpoint.with_suffix('.json').name})")
    print(f"learning curve: {run_path / 'learning_curve.png'}")
    print(f"TensorBoard:    tensorboard --logdir {run_path / 'tb'}")
    print(f"this table:     {run_path / 'main_job_eval.json'}")


if __name__ == "__main__":
    main()
