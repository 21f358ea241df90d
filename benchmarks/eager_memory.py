"""Peak memory of the eager path against plain pyarrow on the same data.

HellaSwag's ``hub_validation.parquet`` is replicated to 1M rows; each figure is a fresh
subprocess's peak RSS (``resource.getrusage``): ``load_hellaswag(data_files=...)`` +
``write_parquet`` against ``pq.read_table`` + ``pq.write_table`` of the same file. Target: at
most 1.5x.

    python benchmarks/eager_memory.py [--rows 1000000] [--realdata ../shared/realdata]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _data import PEAK
from streaming_memory import replicate

_CHILD = (
    PEAK
    + """
import json, sys
path, how = sys.argv[1], sys.argv[2]
if how == "ours":
    from sdvm_hf import load_hellaswag, write_parquet
    rows = write_parquet(load_hellaswag(data_files=path), path + ".ours.parquet")
else:
    import pyarrow.parquet as pq
    table = pq.read_table(path)
    pq.write_table(table, path + ".floor.parquet")
    rows = table.num_rows
print(json.dumps({"rows": rows, "peak": peak_bytes()}))
"""
)


def peak(path: Path, how: str) -> int:
    """Peak RSS in bytes of one fresh subprocess doing ``how``."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), how], check=True, capture_output=True, text=True
    )
    return int(json.loads(done.stdout.strip().splitlines()[-1])["peak"])


def main() -> None:
    """Measure and print both peaks and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--realdata", type=Path, default=Path("/work/shared/realdata"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hellaswag.parquet"
        replicate(args.realdata / "hellaswag" / "hub_validation.parquet", args.rows, path)
        floor, ours = peak(path, "floor"), peak(path, "ours")
    print(
        f"eager load + write_parquet, {args.rows:,} rows: peak {ours / 2**20:6.0f} MiB vs "
        f"pq.read_table + pq.write_table {floor / 2**20:6.0f} MiB: {ours / floor:4.2f}x "
        "(target <= 1.5x)"
    )


if __name__ == "__main__":
    main()
