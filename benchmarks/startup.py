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
        None,
    ),
    "sdvm-hf --help": ([COMMAND, "--help"], None),
    "sdvm-hf convert --help": ([COMMAND, "convert", "--help"], None),
    "sdvm-hf audit --help": ([COMMAND, "audit", "--help"], None),
}


def _run(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    floor_argv = [*PYTHON, FLOOR]
    for argv, _ in CASES.values():  # warm the file cache once
        _run(argv)
    _run(floor_argv)
    floors: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.repeats):
        for name, (argv, _) in CASES.items():
            floors.append(_run(floor_argv))
            times[name].append(_run(argv))
    floor = statistics.median(floors)
    print(f"floor ({FLOOR}): {floor * 1000:.1f} ms, median of {len(floors)} fresh processes")
    for name, (_, target) in CASES.items():
        seconds = statistics.median(times[name])
        goals = []
        if target is not None:
            goals.append(
                f"target <= {target:.2f}x: {'met' if seconds / floor <= target else 'MISSED'}"
            )
        if name.endswith("--help"):
            goals.append(f"target < 300 ms: {'met' if seconds < 0.3 else 'MISSED'}")
        goal = f"  ({'; '.join(goals)})" if goals else ""
        print(f"{name:<42} {seconds * 1000:7.1f} ms  {seconds / floor:5.2f}x{goal}")


if __name__ == "__main__":
    main()
