"""The cold load's batches: chunk-aligned zero-copy slices against the fixed 65,536-row grid.

A Parquet file whose row groups are not a multiple of 65,536 rows (100,000 here, and a slice
``[10:]`` of pyarrow's default layout) made every other fixed-grid slice straddle two chunks
and be copied whole (``combine_chunks``). ``load_hellaswag(data_files=F)`` + ``write_parquet``
with today's batches and with the fixed grid, against ``pq.read_table`` + ``pq.write_table``
of the same file (the floor); the load alone against ``pq.read_table``; and the batches alone
(the copies the fixed grid made); alternately, medians.

    python benchmarks/regrouped.py [--realdata ../shared/realdata] [--rows 1000000] [--repeats 5]
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from _data import options, replicated
from _timing import _once, medians

from sdvm_hf import load_hellaswag, write_parquet
from sdvm_hf.sources import _convert


def fixed_grid(table: pa.Table, first_row: int, rows: int) -> Iterator[tuple[int, pa.Table]]:
    """The batches before: a slice every ``rows`` rows, copied whole when it straddles."""
    for offset in range(0, table.num_rows, rows):
        part = table.slice(offset, rows)
        if part.column(0).num_chunks > 1 if part.num_columns else False:
            part = part.combine_chunks()
        yield first_row + offset, part


def main() -> None:
    args = options(__doc__.splitlines()[0]).parse_args()
    whole = replicated(args.realdata, "hellaswag/hub_validation.parquet", args.rows)
    aligned = _convert.regrouped
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = {
            "row groups of 100,000": (folder / "rg100k.parquet", "validation", 100_000),
            "default row groups, [10:]": (folder / "default.parquet", "validation[10:]", None),
        }
        for name, (path, split, group) in cases.items():
            pq.write_table(whole, path, row_group_size=group)
            out = folder / "out.parquet"

            def floor(path: Path = path, out: Path = out) -> None:
                pq.write_table(pq.read_table(path), out)

            def work(path: Path = path, out: Path = out, split: str = split) -> None:
                write_parquet(load_hellaswag(split, data_files=path), out)

            def read(path: Path = path) -> None:
                pq.read_table(path)

            def load(path: Path = path, split: str = split) -> None:
                load_hellaswag(split, data_files=path)

            table = pq.read_table(path, memory_map=True).slice(10 if "[10:]" in split else 0)

            def ours_batches(table: pa.Table = table) -> object:
                return list(aligned(table, 0, _convert.BATCH_ROWS))

            def grid_batches(table: pa.Table = table) -> object:
                return list(fixed_grid(table, 0, _convert.BATCH_ROWS))

            before_alone, ours_alone = medians(grid_batches, ours_batches, args.repeats)
            print(
                f"{args.rows:,} HellaSwag rows, {name}, the batches alone: aligned "
                f"{ours_alone * 1000:.1f} ms, fixed grid {before_alone * 1000:.1f} ms"
            )
            del table
            pairs: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
                "load + write_parquet": (floor, work),
                "load only": (read, load),
            }
            for what, (base_work, our_work) in pairs.items():
                times: dict[str, list[float]] = {"floor": [], "aligned": [], "fixed grid": []}
                for repeat in range(args.repeats + 1):
                    floors = _once(base_work)
                    _convert.regrouped = aligned
                    ours = _once(our_work)
                    _convert.regrouped = fixed_grid
                    before = _once(our_work)
                    _convert.regrouped = aligned
                    if repeat:  # the first round warms up
                        times["floor"].append(floors)
                        times["aligned"].append(ours)
                        times["fixed grid"].append(before)
                base = statistics.median(times["floor"])
                print(f"{args.rows:,} HellaSwag rows, {name}, {what}: floor {base * 1000:.0f} ms")
                for label in ("aligned", "fixed grid"):
                    seconds = statistics.median(times[label])
                    print(
                        f"  {label:<12} {seconds * 1000:8.0f} ms  {seconds / base:5.2f}x the floor"
                    )


if __name__ == "__main__":
    main()
