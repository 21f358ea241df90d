"""Rendering HellaSwag as OLMES rc requests, against reading the same columns with pyarrow.

``hub_validation.parquet`` replicated to each size and converted once to a sample file as
``sdvm-hf convert`` writes it (streamed: row groups of 16,384 rows, with its record; not
timed). A file written whole (``write_parquet`` of a ``load``) is one row group up to 1M rows,
which any reader decodes whole: the render's memory follows the input's row groups.

Each run is a fresh subprocess (wall time and peak RSS). The render is
``render_requests(samples, "olmes-rc")`` run to its end (every row back to its published row,
the OLMES query and choices, 8 ``Request`` s per row: 4 conditional, 4 unconditional); the
dump is ``write_requests(samples, folder, "olmes-rc")`` (the same requests as AI2's dump lines,
about 1 KiB each, gzip). The floor is ``pq.read_table(samples, columns=[context, choices,
extra]).to_pylist()``, the same columns as Python strings. The issue's target: the render
within 2x of the floor. Floor, render and dump alternate; medians.

Each line of the request dump repeats its document (AI2's layout), so the dump writes about
9 KiB of JSON per row where the floor reads 1: its ratio says where it stands, and that its
memory stays flat in the input's size.

    python benchmarks/render_hellaswag.py [--realdata ../shared/realdata] [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from _data import PEAK, REALDATA, replicated

from sdvm_hf import stream, write_parquet

_CHILD = (
    PEAK
    + """
import json, sys, time
import pyarrow.parquet as pq
from sdvm_hf.formulations import render_requests, write_requests
path, how, out = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()  # after the imports, the same for all
if how == "dump":
    rows = write_requests(path, out, "olmes-rc").documents
elif how == "render":
    rows = sum(not request.idx for request in render_requests(path, "olmes-rc")) // 2
else:
    rows = len(pq.read_table(path, columns=["context", "choices", "extra"]).to_pylist())
seconds = time.perf_counter() - start
print(json.dumps({"rows": rows, "seconds": seconds, "peak": peak_bytes()}))
"""
)


def run(path: Path, how: str, out: Path) -> dict[str, float]:
    """One fresh process: its rows, seconds (within the process) and peak RSS."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), how, str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Measure each size and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--realdata", type=Path, default=REALDATA)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for rows in args.sizes:
            source = folder / "source.parquet"
            pq.write_table(
                replicated(args.realdata, "hellaswag/hub_validation.parquet", rows), source
            )
            samples = folder / "samples.parquet"
            write_parquet(stream("hellaswag", data_files=str(source)), samples)
            seconds: dict[str, list[float]] = {"floor": [], "render": [], "dump": []}
            peaks: dict[str, list[float]] = {how: [] for how in seconds}
            for _ in range(args.repeats):
                for how in seconds:
                    work = run(samples, how, folder / "requests")
                    assert work["rows"] == rows, (how, work["rows"])
                    seconds[how].append(work["seconds"])
                    peaks[how].append(work["peak"])
            floor = statistics.median(seconds["floor"])
            for how, label in (("render", "render_requests"), ("dump", "write_requests ")):
                median = statistics.median(seconds[how])
                print(
                    f"{label} olmes-rc {rows:>9,} rows {median:7.2f} s vs floor {floor:6.2f} s "
                    f"{median / floor:5.2f}x  peak RSS {max(peaks[how]) / 2**20:,.0f} MiB "
                    f"(floor {max(peaks['floor']) / 2**20:,.0f} MiB)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
