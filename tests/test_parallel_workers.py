"""The test processes' share of the cores under pytest-xdist (``tests/conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from conftest import worker_threads


@pytest.mark.parametrize(("cores", "workers", "threads"), [(2, 2, 1), (64, 64, 1), (16, 4, 4), (1, 2, 1), (8, 3, 2),
                                                          (8, 0, 8)])
def test_each_worker_gets_its_share_of_the_cores(cores: int, workers: int, threads: int) -> None:
    assert worker_threads(cores, workers) == threads


@pytest.mark.skipif(not os.environ.get("PYTEST_XDIST_WORKER_COUNT"), reason="one test process: torch keeps its default")
def test_a_worker_and_the_processes_it_starts_use_its_share() -> None:
    share = os.environ["OMP_NUM_THREADS"]  # set by tests/conftest.py, unless whoever ran the tests chose it
    assert str(torch.get_num_threads()) == share
    child = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"], capture_output=True,
                           text=True, timeout=120)
    assert child.stdout.strip() == share
