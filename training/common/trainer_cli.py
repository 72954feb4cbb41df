"""What every PPO trainer's command does around its training loop: the CLI and the end-of-run report.

``training/selfplay.py``, ``training/batch_ppo.py`` and ``training/train_sb3.py`` share it (and
``training/main_job.py`` its exit codes), so their flags (``--config``,
``--set``, ``--resume``, ``--overwrite``, ``--device``), exit codes (2 for a refused config or run
folder, 1 for a diverged run, 128 + signal for a stop) and last lines are the same.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from models.checkpoint import CheckpointError
from training.common.config import ConfigError, config_arg_parser, parse_config
from training.common.device import add_device_arg, device_override
from training.common.resume import default_resume_command, resume_command
from training.common.run_utils import RunDir, RunExistsError, RunFolderError, TrainingDiverged
from tt_env.cli_checks import command_name


def report_end(run: RunDir, *, step: int, start_step: int, seconds: float, total_steps: int, stopped_by: int | None,
               command: str | None, trainer: str, saved_step: int | None = None) -> RunDir:
    """Record the learning speed and print how the run ended (stopped: how to resume; done: its files).

    ``saved_step`` is the step of the saved state a stopped run resumes from, where it is not
    ``step`` (SB3 saves at its last update, behind the steps it has collected since)."""
    run.learn_sps = (step - start_step) / max(seconds, 1e-9)
    if stopped_by is not None:
        run.stopped_by = stopped_by
        print(f"stopped at step {step if saved_step is None else saved_step} of {total_steps}: saved {run.latest}\n"
              f"resume with: {command or default_resume_command(trainer, run)}", flush=True)
        return run
    print(f"steps/s during learning: {run.learn_sps:.0f}")
    print(f"checkpoint: {run.checkpoints / 'final.pt'}\nlearning curve: {run.curve_png}")
    return run


def trainer_main(argv: list[str] | None, *, description: str, config_cls: type, prog: str,
                 train: Callable[..., Any]) -> None:
    """Parse a trainer's command line, run ``train(cfg, resume=, overwrite=, command=)``, exit as documented."""
    parser = config_arg_parser(description, config_cls, run_folder=True, prog=prog)
    add_device_arg(parser)
    args = parser.parse_args(argv)
    device_override(args)
    cfg = parse_config(parser, config_cls, args)
    train_or_exit(parser, train, cfg, resume=args.resume, overwrite=args.overwrite,
                  command=resume_command(command_name(prog), argv))


def train_or_exit(parser: argparse.ArgumentParser, train: Callable[..., Any], cfg: Any, *, resume: bool,
                  overwrite: bool, command: str, exists_hint: str = "") -> RunDir:
    """``train(cfg, resume=, overwrite=, command=)`` as a command runs it: a refused config, checkpoint
    or run folder is a usage error (exit 2; ``exists_hint`` is added to a run folder's "already holds a
    run"), a diverged run exits 1, and a run stopped by a signal exits 128 + its number."""
    try:
        run = train(cfg, resume=resume, overwrite=overwrite, command=command)
    except RunExistsError as exc:
        parser.error(f"{exc}{exists_hint}")
    except (ConfigError, CheckpointError, RunFolderError) as exc:
        parser.error(str(exc))
    except TrainingDiverged as exc:
        sys.exit(f"error: {exc}")
    if run.stopped_by is not None:
        sys.exit(128 + run.stopped_by)
    return run
