"""Export of HellaSwag sample files, against pq.read_table + pq.write_table of the same rows.

``hub_validation.parquet`` replicated to each size, converted once to a sample file (with its
record, not timed); then ``export(samples, folder)`` (every row back in Rowan/hellaswag's
layout, the card, the per-row record) against plain ``pq.read_table`` + ``pq.write_table`` of
the sample file (the floor), run alternately, medians. The issue's target is a ratio; #19's
goal is 1.3x. The export reads its input memory-mapped (as ``read_parquet`` does), so a
second line gives the ratio to the floor with ``pq.read_table(memory_map=True)``, which is
faster than the plain read where memory is short.

    python benchmarks/export_hellaswag.py [--realdata ../shared/realdata] [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from _data import REALDATA, replicated
from _timing import medians, report

from sdvm_hf import export, load, write_parquet


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
            write_parquet(load("hellaswag", data_files=str(source)), samples)

            def floor(samples: Path = samples) -> None:
                pq.write_table(pq.read_table(samples), folder / "floor.parquet")

            def mapped(samples: Path = samples) -> None:
                pq.write_table(pq.read_table(samples, memory_map=True), folder / "floor.parquet")

            def work(samples: Path = samples) -> None:
                export(samples, folder / "export", overwrite=True)

            floor_s, work_s = medians(floor, work, args.repeats)
            report(f"export hellaswag {rows:>9,} rows", floor_s, work_s, target=1.3)
            floor_s, work_s = medians(mapped, work, args.repeats)
            report(f"  against a memory-mapped read {rows:>9,}", floor_s, work_s)


if __name__ == "__main__":
    main()
