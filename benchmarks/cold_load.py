"""Cold load of local Parquet + write_parquet, against pq.read_table + pq.write_table.

For HellaSwag (``hub_validation.parquet``) and MMLU (``hub_all_test.parquet``), each
replicated to about 100k and to over 1M rows in a temporary folder:
``load_hellaswag(data_files=...)`` / ``load_mmlu(data_files=...)`` then ``write_parquet``,
against plain ``pq.read_table`` + ``pq.write_table`` of the same file (the floor), run
alternately, medians. Checks that nothing lands in the Hugging Face cache. Target <= 1.2x.

    python benchmarks/cold_load.py [--realdata ../shared/realdata] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

CACHE = Path(tempfile.mkdtemp(prefix="hf-cache-"))
os.environ["HF_DATASETS_CACHE"] = str(CACHE)  # before datasets is imported

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from _timing import medians, report  # noqa: E402

from sdvm_hf import load_hellaswag, load_mmlu, write_parquet  # noqa: E402

DATASETS = {
    "hellaswag": ("hellaswag/hub_validation.parquet", load_hellaswag),
    "mmlu": ("mmlu/hub_all_test.parquet", load_mmlu),
}


def replicate(source: Path, rows: int, path: Path) -> None:
    """Write ``source``'s rows repeated to ``rows`` rows as one Parquet file."""
    table = pq.read_table(source)
    copies = -(-rows // table.num_rows)
    pq.write_table(pa.concat_tables([table] * copies).slice(0, rows), path)


def main() -> None:
    """Measure both datasets at both sizes and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--realdata", type=Path, default=Path("/work/shared/realdata"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_400_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, (file, load) in DATASETS.items():
            for rows in args.sizes:
                source = folder / f"{name}-{rows}.parquet"
                replicate(args.realdata / file, rows, source)
                out = folder / "out.parquet"

                def floor(source: Path = source, out: Path = out) -> None:
                    pq.write_table(pq.read_table(source), out)

                def work(source: Path = source, out: Path = out, load: object = load) -> None:
                    write_parquet(load(data_files=source), out)  # type: ignore[operator]

                floor_s, work_s = medians(floor, work, args.repeats)
                report(f"{name} {rows:>9,} rows", floor_s, work_s, target=1.2)
                source.unlink()
    left = [p for p in CACHE.rglob("*") if p.is_file()]
    print(f"files in the HF cache: {len(left)}")


if __name__ == "__main__":
    main()
