"""Write 100,000 samples to Parquet and read them back as typed samples.

Floor: plain pyarrow building a table from the same columns, writing it, reading it and
turning it into Python rows (``to_pylist``), in the same run.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from _timing import medians, report

from sdvm_hf import MultipleChoiceCompletionSample, read_parquet, write_parquet

ROWS = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000


def main() -> None:
    samples = [
        MultipleChoiceCompletionSample(
            context=f"A person does thing number {i}. they",
            choices=[f"ending {i} {k}" for k in range(4)],
            answer_index=i % 4,
            extra={"ind": i, "activity_label": "Thing", "source_id": f"src~{i}", "split": "val"},
        )
        for i in range(ROWS)
    ]
    columns = {
        "style": [s.style for s in samples],
        "context": [s.context for s in samples],
        "choices": [s.choices for s in samples],
        "answer_index": [s.answer_index for s in samples],
        "extra": [s.extra for s in samples],
    }
    with tempfile.TemporaryDirectory() as folder:
        plain, ours = Path(folder) / "plain.parquet", Path(folder) / "ours.parquet"

        def floor_write() -> None:
            pq.write_table(pa.table(columns), plain)

        def floor_read() -> None:
            pq.read_table(plain).to_pylist()

        def our_write() -> None:
            write_parquet(samples, ours)

        def our_read() -> None:
            assert len(list(read_parquet(ours))) == ROWS

        floor_w, w = medians(floor_write, our_write)
        floor_r, r = medians(floor_read, our_read)
    print(f"{ROWS:,} samples, medians of 7 alternating runs")
    report("write_parquet vs pa.table + write_table", floor_w, w)
    report("read_parquet + samples vs read + to_pylist", floor_r, r)
    report("round trip vs plain pyarrow round trip", floor_w + floor_r, w + r)


if __name__ == "__main__":
    main()
