"""Threads that work ahead of a pipeline give way to the threads that wait for their work.

A streamed conversion is a pipeline: a thread reads and parses the next blocks, threads check
their text, a thread hashes the source files for the record, and the conversion and the
Parquet writer take the batches. The writer is the longest stage (1M HellaSwag rows: 3.4 s
of its own work), so it sets the pace; on two cores, every thread that runs ahead of it took
its core part of the time, and the command took 4.8 s where the writer alone needs 4.1.
Threads that work ahead run a little less favoured (:data:`AHEAD` nice levels below the
process, on Linux, where a thread's priority is its own): they still run whenever a core is
free, their queues bound how far ahead they get, and with cores to spare nothing changes.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import suppress

__all__ = ["AHEAD", "work_ahead"]

AHEAD = 10
"""Nice levels a thread that works ahead runs below the process (CFS: about a tenth of the
share of a thread at the process's level, when both want the same core)."""


def work_ahead() -> None:
    """Let the calling thread give way to the process's other threads (first thing in it).

    Only on Linux (elsewhere a thread shares its process's priority, so nothing changes); a
    refusal is ignored: priority is a preference, not a requirement.
    """
    if sys.platform != "linux" or threading.current_thread() is threading.main_thread():
        return
    with suppress(OSError):
        here = threading.get_native_id()
        target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + AHEAD)
        if os.getpriority(os.PRIO_PROCESS, here) < target:
            os.setpriority(os.PRIO_PROCESS, here, target)
