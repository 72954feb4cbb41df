"""Shared set-up of the test processes.

Under pytest-xdist (the README's ``python -m pytest -q -n auto --dist loadfile``) every worker
would start as many torch threads as the machine has cores, so that on a machine of N cores N
workers would run N * N threads and spend their time switching between them. Each worker, and
the processes its tests start, gets its share of the cores instead.
"""

from __future__ import annotations

import os


def worker_threads(cores: int, workers: int) -> int:
    """torch threads for each of ``workers`` processes sharing ``cores`` (at least one)."""
    return max(1, cores // max(1, workers))


def pytest_configure(config) -> None:
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not workers or "OMP_NUM_THREADS" in os.environ:  # one process, or threads chosen by the caller
        return
    from tt_env.cli_checks import available_cpus

    threads = worker_threads(available_cpus(), int(workers))
    os.environ["OMP_NUM_THREADS"] = str(threads)  # for the trainers and scripts the tests start
    import torch

    torch.set_num_threads(threads)
