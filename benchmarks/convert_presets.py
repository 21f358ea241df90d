"""Convert each preset's fixture rows, replicated to 100,000 rows, to sample Parquet.

No other files needed (the rows are the test fixtures). For every preset, the median of 7
alternating runs of the table form (read Parquet, convert, write sample Parquet) is printed
as a ratio to plain pyarrow reading and writing the same file, measured in the same run. A
ratio far above the others would mean per-row Python in that preset's shaping.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from _timing import medians, report

from sdvm_hf import PRESETS
from sdvm_hf.files import write_table

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
ROWS = 100_000
FILES = {
    "arc": "arc/ARC-Challenge-train.parquet",
    "openbookqa": "openbookqa/main-train.parquet",
    "commonsense_qa": "commonsense_qa/default-validation.parquet",
    "piqa": "piqa/default-validation.parquet",
    "social_i_qa": "social_i_qa/default-validation.parquet",
    "winogrande": "winogrande/winogrande_xl-train.parquet",
    "swag": "swag/regular-validation.parquet",
    "truthfulqa": "truthfulqa/multiple_choice-validation.parquet",
    "sciq": "sciq/default-validation.parquet",
    "copa": "copa/copa-validation.parquet",
}


def measure(name: str, file: str, folder: Path) -> None:
    """Time one preset's table form against the plain floor."""
    rows = pq.read_table(FIXTURES / file)
    big = pa.concat_tables([rows] * -(-ROWS // rows.num_rows)).slice(0, ROWS)
    src, plain, ours = (folder / f"{name}.{n}.parquet" for n in "spo")
    pq.write_table(big.combine_chunks(), src)
    mapping = PRESETS[name].mapping(big.column_names)

    def floor() -> None:
        pq.write_table(pq.read_table(src), plain)

    def table_form() -> None:
        write_table(mapping.table(pq.read_table(src)), ours)

    floor_s, table_s = medians(floor, table_form)
    report(f"{name}: read + convert + write", floor_s, table_s)


def main() -> None:
    print(f"each preset's fixture rows replicated to {ROWS:,} rows; medians")
    print("floor: plain pyarrow read + write of the source")
    with tempfile.TemporaryDirectory() as folder:
        for name, file in FILES.items():
            measure(name, file, Path(folder))


if __name__ == "__main__":
    main()
