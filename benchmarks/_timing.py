"""Median timing for benchmarks: ratios against a floor measured in the same run."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable


def median_seconds(work: Callable[[], object], repeats: int = 5) -> float:
    """The median wall time of ``work`` over ``repeats`` runs (after one warm-up)."""
    work()
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(name: str, seconds: float, floor: float, target: float | None = None) -> None:
    """Print one line: the time, its ratio to the floor, and the target when there is one."""
    ratio = seconds / floor
    goal = (
        ""
        if target is None
        else f"  (target <= {target:.1f}x: {'met' if ratio <= target else 'MISSED'})"
    )
    print(f"{name:<48} {seconds * 1000:9.1f} ms  {ratio:5.2f}x floor{goal}")
