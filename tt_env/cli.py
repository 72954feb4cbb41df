"""The ``three-thirteen`` console command: one entry point for the project's tools.

    three-thirteen evaluate expert-v0 greedy-v0 --games 200     # = python -m training.evaluate ...
    three-thirteen play --opponents expert-v0                   # = python -m tt_env.ui.play ...
    three-thirteen train selfplay --config selfplay_default     # = python training/selfplay.py ...
    three-thirteen COMMAND --help                               # that command's own options

Each command is the module's own ``main(argv)``, imported only when it is run (so
``three-thirteen play`` needs neither torch nor Ray), with its ``--help`` and its one-line
refusals naming the command as typed (``three-thirteen evaluate``: ``tt_env.cli_checks.invoked_as``).
A command whose optional dependencies are missing stops with one line naming the package and
the extra that installs it (exit status 2). ``web`` runs ``tt_env.web.main`` where that module
is installed.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from . import __version__
from .cli_checks import invoked_as
from .optional import missing_dependency, missing_text

PROG = "three-thirteen"


@dataclass(frozen=True)
class Command:
    """A command: ``module.main(argv)``, what it does, and the extra its missing imports come from."""

    module: str
    summary: str
    extra: str = "train"


COMMANDS: dict[str, Command] = {
    "evaluate": Command("training.evaluate", "duplicate games between 2 to 6 agents: scores, win rates, intervals"),
    "leaderboard": Command("training.leaderboard", "every agent against expert-v0 at 2, 3 and 4 players"),
    "play": Command("tt_env.ui.play", "play in the terminal against agents", extra="render"),
    "replay": Command("tt_env.ui.replay", "replay a saved game (text, GIF or PNG frames)", extra="render"),
    "train": Command("", "train an agent: train selfplay | sb3 | batch-ppo | long-run | rllib "
                         "(three-thirteen train --help)"),
    "ship": Command("training.ship", "ship a trained checkpoint as a named agent"),
    "main-job": Command("training.main_job", "train a short self-play run, then evaluate it (the quick start)"),
    "web": Command("tt_env.web", "the browser app: play, watch and the leaderboard", extra="web"),
}
"""The commands, in the order ``--help`` lists them."""

TRAINERS: dict[str, Command] = {
    "selfplay": Command("training.selfplay", "our PPO, self-play and opponent pools (python training/selfplay.py)"),
    "sb3": Command("training.train_sb3", "sb3-contrib MaskablePPO against scripted opponents (training/train_sb3.py)"),
    "batch-ppo": Command("training.batch_ppo", "PPO on the batched engine, thousands of tables at once "
                                               "(python -m training.batch_ppo)"),
    "long-run": Command("training.long_run", "a long run in resumable chunks, carried between machines "
                                             "(python -m training.long_run)"),
    "rllib": Command("training.train_rllib", "Ray RLlib PPO, one machine or a cluster (python -m training.train_rllib)",
                     extra="rllib"),
}
"""The sub-choices of ``three-thirteen train``."""


def usage(prog: str, commands: dict[str, Command]) -> str:
    """The help text listing ``commands``."""
    width = max(len(name) for name in commands)
    lines = [f"usage: {prog} COMMAND [ARGUMENTS ...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {command.summary}" for name, command in commands.items()]
    lines += ["", f"{prog} COMMAND --help shows the options of each command."]
    if prog == PROG:
        lines.append(f"{prog} --version shows the installed version.")
    return "\n".join(lines)


def _refuse(prog: str, message: str) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2


def run_command(prog: str, command: Command, argv: list[str]) -> int:
    """Import ``command.module`` and run its ``main(argv)`` under the name ``prog``; the exit status."""
    try:
        module = importlib.import_module(command.module)
    except ImportError as exc:
        if getattr(exc, "name", None) == command.module:
            return _refuse(prog, f"the module {command.module} is not in this installation: install a "
                                 f"three-thirteen version that has it, with its {command.extra} extra "
                                 f"(pip install 'three-thirteen[{command.extra}]')")
        return _missing_module(prog, command, exc)
    with invoked_as(prog):
        try:
            result = module.main(argv)
        except ModuleNotFoundError as exc:  # an optional import inside the command (a trained agent's torch)
            return _missing_module(prog, command, exc)
    return result if isinstance(result, int) and not isinstance(result, bool) else 0


def _missing_module(prog: str, command: Command, exc: ImportError) -> int:
    """The one-line refusal for a missing optional package; other import errors are raised as they are."""
    missing = missing_dependency(exc, "this command")
    if missing is not None:
        return _refuse(prog, str(missing))
    ours = ("tt_env", "models", "training")
    if isinstance(exc, ModuleNotFoundError) and exc.name and not exc.name.startswith(ours):
        extra = f" (or pip install 'three-thirteen[{command.extra}]')"
        return _refuse(prog, missing_text(exc.name, "this command") + extra)
    raise exc


def _dispatch(prog: str, commands: dict[str, Command], argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(prog, commands))
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name == "--version" and prog == PROG:
        print(f"{PROG} {__version__}")
        return 0
    command = commands.get(name)
    if command is None:
        return _refuse(prog, f"{name!r} is not a command: use one of {', '.join(commands)} ({prog} --help)")
    if not command.module:  # train: one more level
        return _dispatch(f"{prog} {name}", TRAINERS, rest)
    return run_command(f"{prog} {name}", command, rest)


def main(argv: Sequence[str] | None = None) -> int:
    """The console command; returns the exit status (``SystemExit`` from a command passes through).

    A reader that closes the pipe early (``three-thirteen --help | head -3``) ends it quietly, with
    the shell's status for SIGPIPE (141), as the Python documentation advises: no traceback."""
    try:
        return _dispatch(PROG, COMMANDS, list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush goes nowhere
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
