"""Rejecting a million rows: speed (rows/s) and memory, against plain pyarrow on the same data.

Every row of a 1M-row HellaSwag table gets a label the mapping refuses (``"9"``), and the
table form converts it with ``on_error="skip"``: every row becomes a reject (row, column,
expected, got), the original rows stay in Arrow. The floor is a plain pyarrow pass over the
same table (``pc.match_substring_regex`` on the labels plus ``take`` of every row). Memory is
measured in a fresh process per figure (peak RSS), against the Arrow size of the input.

    python benchmarks/reject_rows.py [ROWS]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from _data import PEAK
from _timing import medians, report

from sdvm_hf.presets.hellaswag import HELLASWAG

REAL = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "hellaswag"
BUNDLED = Path(__file__).resolve().parents[1] / "sdvm_hf" / "data" / "hellaswag_validation.parquet"


def bad_table(rows: int) -> pa.Table:
    source = REAL / "hub_validation.parquet"
    seed = pq.read_table(source if source.exists() else BUNDLED)
    table = pa.concat_tables([seed] * (rows // seed.num_rows + 1)).slice(0, rows).combine_chunks()
    return table.set_column(table.schema.get_field_index("label"), "label", pa.array(["9"] * rows))


def peak_rss(rows: int, convert: bool) -> float:
    """Peak RSS in GB of a fresh process that builds the table and (optionally) rejects it."""
    code = PEAK + (
        "import sys; sys.path.insert(0, 'benchmarks');"
        "from reject_rows import bad_table; from sdvm_hf.presets.hellaswag import HELLASWAG;"
        f"t = bad_table({rows});"
        + (
            "r = HELLASWAG.convert(t, split='v', on_error='skip');"
            "assert len(r.rejects) == t.num_rows;"
            if convert
            else ""
        )
        + "print(peak_bytes())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(done.stdout.strip()) / 1e9


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    table = bad_table(rows)

    def floor() -> object:
        bad = pc.invert(pc.match_substring_regex(table.column("label"), r"^[0-3]$"))
        return table.take(pc.indices_nonzero(bad))

    def reject() -> object:
        result = HELLASWAG.convert(table, split="validation", on_error="skip")
        assert len(result.rejects) == rows and result.table.num_rows == 0
        return result

    floor_s, work_s = medians(floor, reject, repeats=5)
    report(f"reject {rows:,} rows (table form, skip)", floor_s, work_s)
    print(f"{'rows per second':<44} {rows / work_s:12,.0f}  (target >= 100,000)")
    base, after = peak_rss(rows, convert=False), peak_rss(rows, convert=True)
    print(
        f"{'peak RSS: input built / input rejected':<44} {base:.2f} GB / {after:.2f} GB "
        f"(input in Arrow: {table.nbytes / 1e9:.2f} GB)"
    )


if __name__ == "__main__":
    main()
