"""Median timing for benchmarks: ratios against a floor measured in the same run.

The floor and the work under test run alternately, so that both see the same load on a
shared, noisy machine; the figures are medians.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable


def _once(work: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def medians(
    floor: Callable[[], object], work: Callable[[], object], repeats: int = 7
) -> tuple[float, float]:
    """Median seconds of ``floor`` and of ``work``, run alternately after one warm-up each."""
    floor()
    work()
    floors, works = [], []
    for _ in range(repeats):
        floors.append(_once(floor))
        works.append(_once(work))
    return statistics.median(floors), statistics.median(works)


def report(name: str, floor: float, seconds: float, target: float | None = None) -> None:
    """Print one line: the time, its ratio to the floor, and the target when there is one."""
    ratio = seconds / floor
    goal = (
        ""
        if target is None
        else f"  (target <= {target:.1f}x: {'met' if ratio <= target else 'MISSED'})"
    )
    print(
        f"{name:<44} {seconds * 1000:8.1f} ms vs floor {floor * 1000:8.1f} ms  {ratio:5.2f}x{goal}"
    )
