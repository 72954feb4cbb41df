"""``training.common.signals.CaughtSignals``: while active the handlers are the subclass's, on exit
the previous ones are back; ``long_run``'s ``ChunkSignals`` leaves SIGHUP alone where it is ignored
(under ``nohup``), and a first signal with no trainer running is kept for the next one."""

from __future__ import annotations

import os
import signal

from training.common.resume import StopSignals
from training.long_run import ChunkSignals


def test_handlers_are_set_while_active_and_the_previous_ones_come_back() -> None:
    def previous(signum, frame):  # type: ignore[no-untyped-def]
        raise AssertionError("the previous handler was called while the caught signals were active")

    before = {sig: signal.signal(sig, previous) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with StopSignals() as stop:
            for sig in (signal.SIGINT, signal.SIGTERM):
                assert signal.getsignal(sig) == stop._handle
            os.kill(os.getpid(), signal.SIGTERM)
            assert stop.requested and stop.signum == signal.SIGTERM
        assert signal.getsignal(signal.SIGINT) is previous and signal.getsignal(signal.SIGTERM) is previous
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def test_an_ignored_sighup_stays_ignored_and_a_caught_one_is_passed_on() -> None:
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with ChunkSignals() as signals:
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN  # nohup: a closed terminal changes nothing
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        with ChunkSignals() as signals:
            assert signal.getsignal(signal.SIGHUP) == signals._handle
            os.kill(os.getpid(), signal.SIGHUP)  # no trainer running: kept for the next one
            assert signals.signum == signal.SIGHUP and signals.pending == signal.SIGHUP
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, before)
