"""Start-up: ``import sdvm_hf`` and ``sdvm-hf --help`` against the import floor (issue #19).

The floor is a fresh interpreter running ``import pyarrow, pyarrow.parquet, pyarrow.compute,
pydantic`` (what any use of the package needs); each case is a fresh interpreter too, run
alternately with the floor, medians of ``--repeats`` (wall time of the whole process, so
Python's own start-up is in both). Targets: ``import sdvm_hf`` <= 1.15x the floor,
``sdvm-hf --help`` under 0.3 s. Also printed: a bare interpreter, and the first names a user
takes (``from sdvm_hf import load, write_parquet``), which import pyarrow and pydantic.

Python reads a module's bytecode from ``__pycache__`` when it is there; pip writes it for every
module of a wheel it installs, but an editable checkout on a machine that sets
``PYTHONDONTWRITEBYTECODE=1`` (this one does) compiles each of the package's modules at every
start, while pyarrow and pydantic, installed from wheels, have theirs. So each case is
measured twice: as the checkout is, and with the package's bytecode written first (as an
installed wheel has it), which is what the targets are read against.

    python benchmarks/startup.py [--repeats 11]
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


PACKAGE = Path(__file__).resolve().parent.parent / "sdvm_hf"


@contextmanager
def bytecode() -> Iterator[None]:
    """The package's modules compiled to ``__pycache__``, as pip installs a wheel; removed
    again afterwards where this wrote them."""
    before = {path for path in PACKAGE.rglob("__pycache__")}
    compileall.compile_dir(PACKAGE, quiet=1)
    try:
        yield
    finally:
        for path in PACKAGE.rglob("__pycache__"):
            if path not in before:
                shutil.rmtree(path, ignore_errors=True)


def both(repeats: int) -> list[str]:
    """The report for the checkout as it is, then with the package's bytecode."""
    runs = repeats * len(CASES)
    floor, seconds = measure(repeats)
    out = ["as the checkout is (no bytecode written when PYTHONDONTWRITEBYTECODE is set):"]
    out += lines(floor, seconds, runs, targets=False)
    with bytecode():
        floor, seconds = measure(repeats)
    out += ["with the package's bytecode, as an installed wheel has it:"]
    return out + lines(floor, seconds, runs)


def lines(floor: float, seconds: dict[str, float], runs: int, targets: bool = True) -> list[str]:
    """The report: the floor, then each case with its ratio and its targets."""
    out = [f"floor ({FLOOR}): {floor * 1000:.1f} ms, median of {runs} fresh processes"]
    for name, (_, target) in CASES.items():
        took = seconds[name]
        goals = []
        if target is not None and targets:
            verdict = "met" if took / floor <= target else "MISSED"
            goals.append(f"target <= {target:.2f}x: {verdict}")
        if name.endswith("--help") and targets:
            goals.append(f"target < 300 ms: {'met' if took < 0.3 else 'MISSED'}")
        goal = f"  ({'; '.join(goals)})" if goals else ""
        out.append(f"{name:<42} {took * 1000:7.1f} ms  {took / floor:5.2f}x{goal}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    print("\n".join(both(args.repeats)))


if __name__ == "__main__":
    main()
