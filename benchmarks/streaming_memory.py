"""Peak memory of streaming conversion: flat in the input's size, and against datasets' own.

HellaSwag's ``hub_validation.parquet`` is replicated to 100k, 1M and 5M rows in a temporary
Parquet file; each run is a fresh subprocess that streams the file through
``stream("hellaswag", data_files=...)`` (every sample built, then dropped) and
reports its peak RSS (``resource.getrusage``); so does ``sdvm-hf convert hellaswag
--data-files FILE`` (which streams, summary and rejects included). The ratios are against
the 100k-row figure.
``datasets``' own streaming of the same file (``load_dataset("parquet", streaming=True)``,
rows iterated) is measured the same way at 1M rows.

    python benchmarks/streaming_memory.py [--realdata ../shared/realdata]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
from _data import PEAK

_CHILD = (
    PEAK
    + """
import json, sys
path, how = sys.argv[1], sys.argv[2]
rows = 0
if how == "ours":
    from sdvm_hf import stream
    for _ in stream("hellaswag", data_files=path):
        rows += 1
elif how == "write":
    from sdvm_hf import stream, write_parquet
    rows = write_parquet(stream("hellaswag", data_files=path), path + ".out.parquet")
elif how == "command":
    import contextlib, io
    import pyarrow.parquet as pq
    from sdvm_hf.cli import main
    out = path + ".cmd.parquet"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["convert", "hellaswag", "--data-files", path, "-o", out, "--quiet"]) == 0
    rows = pq.read_metadata(out).num_rows
else:
    import datasets
    for _ in datasets.load_dataset("parquet", data_files=path, split="train", streaming=True):
        rows += 1
print(json.dumps({"rows": rows, "peak": peak_bytes()}))
"""
)


def replicate(source: Path, rows: int, path: Path) -> None:
    """Write ``source``'s rows repeated to ``rows`` rows, in row groups of 10k rows."""
    table = pq.read_table(source)
    with pq.ParquetWriter(path, table.schema) as writer:
        written = 0
        while written < rows:
            part = table.slice(0, min(table.num_rows, rows - written))
            writer.write_table(part, row_group_size=10_000)
            written += part.num_rows


def peak(path: Path, how: str) -> tuple[int, int]:
    """Rows seen and peak RSS in bytes of one fresh subprocess."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), how], check=True, capture_output=True, text=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return int(result["rows"]), int(result["peak"])


def main() -> None:
    """Measure and print peaks and ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--realdata", type=Path, default=Path("/work/shared/realdata"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    args = parser.parse_args()
    source = args.realdata / "hellaswag" / "hub_validation.parquet"
    with tempfile.TemporaryDirectory() as tmp:
        base: int | None = None
        write_base: int | None = None
        command_base: int | None = None
        for rows in args.sizes:
            path = Path(tmp) / f"hellaswag-{rows}.parquet"
            replicate(source, rows, path)
            seen, bytes_ = peak(path, "ours")
            assert seen == rows, (seen, rows)
            written, wrote = peak(path, "write")
            assert written == rows, (written, rows)
            converted, command = peak(path, "command")
            assert converted == rows, (converted, rows)
            base = base or bytes_
            write_base = write_base or wrote
            command_base = command_base or command
            print(
                f"sdvm_hf streaming {rows:>9,} rows: peak {bytes_ / 2**20:7.0f} MiB, "
                f"{bytes_ / base:4.2f}x the first size; streamed into write_parquet: "
                f"{wrote / 2**20:5.0f} MiB, {wrote / write_base:4.2f}x; sdvm-hf convert: "
                f"{command / 2**20:5.0f} MiB, {command / command_base:4.2f}x"
            )
            if rows == 1_000_000:
                _, theirs = peak(path, "datasets")
                print(
                    f"datasets streaming {rows:>8,} rows: peak {theirs / 2**20:7.0f} MiB "
                    f"(ours is {bytes_ / theirs:4.2f}x)"
                )
            path.unlink()
            Path(str(path) + ".out.parquet").unlink()
            Path(str(path) + ".cmd.parquet").unlink()


if __name__ == "__main__":
    main()
