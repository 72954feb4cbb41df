"""Command-line arguments shared by the data tools (``python -m training.oracle_data``,
``python -m training.belief_data``): how many decisions to keep, the seed, the workers, the
output file and the progress bar, with the checks ``argparse`` types cannot make alone.

One owner, so that both tools take and refuse these arguments the same way.
"""

from __future__ import annotations

import argparse
import os

from tt_env.cli_checks import int_at_least, seed_arg

MAX_WORKERS = 256
"""The most worker processes a data tool starts (each a whole Python with torch)."""


def add_collection_arguments(parser: argparse.ArgumentParser, *, keep: float) -> None:
    """Add ``--keep`` (default ``keep``), ``--seed``, ``--workers``, ``--out``, ``--overwrite``, ``--quiet``."""
    parser.add_argument("--keep", type=float, default=keep, help=f"share of the decisions recorded (default {keep:g})")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the games (default 0)")
    parser.add_argument("--workers", type=int_at_least(1, MAX_WORKERS), default=1,
                        help=f"worker processes, 1..{MAX_WORKERS} (default 1; at most one a game)")
    parser.add_argument("--out", required=True, help="the .npz file to write")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def check_collection_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (``parser.error``) a ``--keep`` outside (0, 1] (``--players`` is ``cli_checks.players_arg``), and
    cap ``--workers`` at ``--games``."""
    if args.workers > args.games:  # (a worker without a game would start for nothing)
        args.workers = args.games
    if not 0.0 < args.keep <= 1.0:
        parser.error(f"--keep {args.keep} is not allowed: use a share in (0, 1]")


def check_data_files(parser: argparse.ArgumentParser, paths: list[str]) -> None:
    """Refuse (``parser.error``) a ``--data`` file given twice: its positions would count twice, and
    a copy of them would sit in the held-out tail as well as in training."""
    seen: dict[str, str] = {}
    for path in paths:
        key = os.path.realpath(path)
        if key in seen:
            parser.error(f"--data {path}: given twice (as {seen[key]} too): give each file once")
        seen[key] = path
