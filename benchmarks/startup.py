"""Start-up: ``import sdvm_hf`` and ``sdvm-hf --help`` against the import floor (issue #19).

The floor is a fresh interpreter running ``import pyarrow, pyarrow.parquet, pyarrow.compute,
pydantic`` (what any use of the package needs); each case is a fresh interpreter too, run
alternately with the floor, medians of ``--repeats`` (wall time of the whole process, so
Python's own start-up is in both). Targets: ``import sdvm_hf`` <= 1.15x the floor,
``sdvm-hf --help`` under 0.3 s. Also printed: a bare interpreter, and the first names a user
takes (``from sdvm_hf import load, write_parquet``), which import pyarrow and pydantic.

    python benchmarks/startup.py [--repeats 11]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

FLOOR = "import pyarrow, pyarrow.parquet, pyarrow.compute, pydantic"
PYTHON = [sys.executable, "-c"]
COMMAND = shutil.which("sdvm-hf") or str(Path(sys.executable).with_name("sdvm-hf"))

CASES: dict[str, tuple[list[str], float | None]] = {
    "python -c pass": ([*PYTHON, "pass"], None),
    "import sdvm_hf": ([*PYTHON, "import sdvm_hf"], 1.15),
    "from sdvm_hf import load, write_parquet": (
        [*PYTHON, "from sdvm_hf import load, write_parquet"],
        1.15,
    ),
    "sdvm-hf --help": ([COMMAND, "--help"], None),
    "sdvm-hf convert --help": ([COMMAND, "convert", "--help"], None),
    "sdvm-hf audit --help": ([COMMAND, "audit", "--help"], None),
}


def _run(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(repeats: int) -> tuple[float, dict[str, float]]:
    """The floor's median and each case's, fresh processes run alternately with the floor."""
    floor_argv = [*PYTHON, FLOOR]
    for argv, _ in CASES.values():  # warm the file cache once
        _run(argv)
    _run(floor_argv)
    floors: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(repeats):
        for name, (argv, _) in CASES.items():
            floors.append(_run(floor_argv))
            times[name].append(_run(argv))
    return statistics.median(floors), {name: statistics.median(t) for name, t in times.items()}


def lines(floor: float, seconds: dict[str, float], runs: int) -> list[str]:
    """The report: the floor, then each case with its ratio and its targets."""
    out = [f"floor ({FLOOR}): {floor * 1000:.1f} ms, median of {runs} fresh processes"]
    for name, (_, target) in CASES.items():
        took = seconds[name]
        goals = []
        if target is not None:
            verdict = "met" if took / floor <= target else "MISSED"
            goals.append(f"target <= {target:.2f}x: {verdict}")
        if name.endswith("--help"):
            goals.append(f"target < 300 ms: {'met' if took < 0.3 else 'MISSED'}")
        goal = f"  ({'; '.join(goals)})" if goals else ""
        out.append(f"{name:<42} {took * 1000:7.1f} ms  {took / floor:5.2f}x{goal}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    floor, seconds = measure(args.repeats)
    print("\n".join(lines(floor, seconds, args.repeats * len(CASES))))


if __name__ == "__main__":
    main()
