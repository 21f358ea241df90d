"""Rendering HellaSwag as OLMES rc requests, against reading the same columns with pyarrow.

``hub_validation.parquet`` replicated to each size and converted once to a sample file as
``sdvm-hf convert`` writes it (streamed: row groups of 16,384 rows, with its record; not
timed). A file written whole (``write_parquet`` of a ``load``) is one row group up to 1M rows,
which any reader decodes whole: the render's memory follows the input's row groups.

Each run is a fresh subprocess (wall time and peak RSS): the work is
``write_requests(samples, folder, "olmes-rc")`` (every row back to its published row, the
OLMES query and choices, 8 request lines of about 1 KiB per row, gzip); the floor is
``pq.read_table(samples, columns=[context, choices, extra]).to_pylist()``, the same columns
as Python strings. Floor and work alternate; medians.

Each line of the request dump repeats its document (AI2's layout), so the work writes about
9 KiB of JSON per row where the floor reads 1: the ratio is far above the issue's 2x; the
figures say where it stands, and that the render's memory stays flat in the input's size.

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
from _data import REALDATA, replicated

from sdvm_hf import stream, write_parquet

_CHILD = """
import json, resource, sys, time
import pyarrow.parquet as pq
from sdvm_hf.formulations import write_requests
path, how, out = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()  # after the imports, the same for both
if how == "render":
    rows = write_requests(path, out, "olmes-rc").documents
else:
    rows = len(pq.read_table(path, columns=["context", "choices", "extra"]).to_pylist())
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
try:  # ru_maxrss counts the parent's memory at the fork; VmHWM is this program's own
    with open("/proc/self/status") as status:
        peak = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmHWM:"))
except OSError:
    pass
print(json.dumps({"rows": rows, "seconds": seconds, "peak": peak}))
"""


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
            floors, works, peaks = [], [], []
            for _ in range(args.repeats):
                floors.append(run(samples, "floor", folder)["seconds"])
                work = run(samples, "render", folder / "requests")
                assert work["rows"] == rows
                works.append(work["seconds"])
                peaks.append(work["peak"])
            floor, seconds = statistics.median(floors), statistics.median(works)
            print(
                f"render olmes-rc {rows:>9,} rows  {seconds:8.2f} s vs floor {floor:6.2f} s  "
                f"{seconds / floor:5.2f}x  peak RSS {max(peaks) / 2**20:,.0f} MiB",
                flush=True,
            )


if __name__ == "__main__":
    main()
