"""TensorBoard writers for resumed runs, whose purge of the steps after the saved state must hold.

TensorBoard reads a folder's event files in the order of their names,
``events.out.tfevents.<second>.<host>.<pid>.<counter>``: by the second each was opened, then by
text (so, in one second, counter 10 comes before counter 9). A resumed run's writer drops the
steps logged after its saved state only from the files read before its own. A run stopped and
resumed within one second (in one process: a notebook, a test) could have its purge read first
and do nothing, and the old steps would stay in its curves. So a purging writer first waits,
if it must, for a second later than every event file already in its folder.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from torch.utils.tensorboard import SummaryWriter

_EVENT_FILE = re.compile(r"^events\.out\.tfevents\.(\d+)\.")
MAX_WAIT = 1.1
"""Seconds: the longest wait, a second and the margin."""


def wait_past_event_files(log_dir: str | Path) -> None:
    """Sleep until the clock's second is later than the second of every event file in ``log_dir``
    (no wait when there are none or they are older; never more than ``MAX_WAIT`` seconds: a file
    stamped further ahead comes from a clock that was ahead, which waiting would not fix)."""
    seconds = [int(m.group(1)) for p in Path(log_dir).glob("events.out.tfevents.*")
               if (m := _EVENT_FILE.match(p.name))]
    if seconds:
        delay = max(seconds) + 1.01 - time.time()  # a margin: sleep's clock is not the wall clock
        if delay > 0:
            time.sleep(min(delay, MAX_WAIT))


def purging_writer(log_dir: str | Path, purge_step: int) -> SummaryWriter:
    """A ``SummaryWriter`` in ``log_dir`` that drops the steps at or after ``purge_step`` written
    by the files already there (read after them: see the module's docstring)."""
    wait_past_event_files(log_dir)
    return SummaryWriter(str(log_dir), purge_step=purge_step)
