"""The real rows the benchmarks run on, replicated to a size, and their common options."""

from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REALDATA = Path("/work/shared/realdata")

PEAK = """
def peak_bytes():
    # VmHWM, this program's own peak RSS. getrusage's ru_maxrss also counts the parent's
    # memory at the fork (Linux carries it across exec): the children of a benchmark that
    # holds a replicated table reported that table as their own peak.
    try:
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmHWM:"))
    except OSError:  # no /proc: ru_maxrss (KiB on Linux, bytes on macOS)
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
"""
"""Code that defines ``peak_bytes()`` in a benchmark's child process."""


def options(description: str, rows: int = 1_000_000, repeats: int = 5) -> argparse.ArgumentParser:
    """``--realdata``, ``--rows`` and ``--repeats``, which every size-driven benchmark takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--realdata", type=Path, default=REALDATA)
    parser.add_argument("--rows", type=int, default=rows)
    parser.add_argument("--repeats", type=int, default=repeats)
    return parser


def replicated(realdata: Path, file: str, rows: int) -> pa.Table:
    """The real file's rows repeated to ``rows`` rows."""
    source = pq.read_table(realdata / file)
    return pa.concat_tables([source] * -(-rows // source.num_rows)).slice(0, rows)
