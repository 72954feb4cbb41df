"""Command-line arguments shared by the data tools (``python -m training.oracle_data``,
``python -m training.belief_data``): how many decisions to keep, the seed, the workers, the
output file and the progress bar, with the checks ``argparse`` types cannot make alone.

One owner, so that both tools take and refuse these arguments the same way.
"""

from __future__ import annotations

import argparse

from tt_env.cli_checks import int_at_least, seed_arg

def add_collection_arguments(parser: argparse.ArgumentParser, *, keep: float) -> None:
    """Add ``--keep`` (default ``keep``), ``--seed``, ``--workers``, ``--out``, ``--overwrite``, ``--quiet``."""
    parser.add_argument("--keep", type=float, default=keep, help=f"share of the decisions recorded (default {keep:g})")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the games (default 0)")
    parser.add_argument("--workers", type=int_at_least(1), default=1, help="worker processes (default 1)")
    parser.add_argument("--out", required=True, help="the .npz file to write")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def check_collection_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (``parser.error``) a ``--keep`` outside (0, 1] (``--players`` is ``cli_checks.players_arg``)."""
    if not 0.0 < args.keep <= 1.0:
        parser.error(f"--keep {args.keep} is not allowed: use a share in (0, 1]")
