"""Convert the real HellaSwag validation split, replicated to 100,000 rows, to sample Parquet.

Needs ../shared/realdata (or a path as the first argument). Every figure is a median of 7
alternating runs (5 for Dataset.map), printed as a ratio to a floor measured in the same run:

- table form (read Parquet, HELLASWAG.table, write sample Parquet) vs plain pyarrow reading and
  writing the same file;
- Dataset.map batch form (HELLASWAG.batch with features=) vs the same plain floor;
- iterating all typed samples of the converted file vs read_table(...).to_pylist().
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from _timing import medians, report

from sdvm_hf import read_parquet
from sdvm_hf.files import write_table
from sdvm_hf.presets.hellaswag import HELLASWAG

SOURCE = Path(
    sys.argv[1] if len(sys.argv) > 1 else "../shared/realdata/hellaswag/hub_validation.parquet"
)
ROWS = 100_000


def main() -> None:
    datasets.disable_progress_bars()
    datasets.disable_caching()
    real = pq.read_table(SOURCE)
    copies = -(-ROWS // real.num_rows)
    big = pa.concat_tables([real] * copies).slice(0, ROWS).combine_chunks()
    with tempfile.TemporaryDirectory() as folder:
        src, plain, ours, mapped = (
            Path(folder) / n
            for n in ("src.parquet", "plain.parquet", "ours.parquet", "mapped.parquet")
        )
        pq.write_table(big, src)

        def floor() -> None:
            pq.write_table(pq.read_table(src), plain)

        def table_form() -> None:
            write_table(HELLASWAG.table(pq.read_table(src), split="validation"), ours)

        dataset = datasets.Dataset.from_parquet(str(src))
        features = HELLASWAG.features(dataset.features)

        def batch_form() -> None:
            out = dataset.map(
                HELLASWAG.batch,
                batched=True,
                batch_size=10_000,
                with_indices=True,
                remove_columns=dataset.column_names,
                features=features,
            )
            out.to_parquet(str(mapped))

        floor_s, table_s = medians(floor, table_form)
        floor_b, batch_s = medians(floor, batch_form, repeats=5)

        def pylist() -> None:
            pq.read_table(ours).to_pylist()

        def samples() -> None:
            assert sum(1 for _ in read_parquet(ours)) == ROWS

        pylist_s, samples_s = medians(pylist, samples)
    print(f"HellaSwag validation x{copies} -> {ROWS:,} rows; medians")
    print(
        "floors: plain pyarrow read + write of the source; read_table().to_pylist() of the result"
    )
    report("table form: read + convert + write", floor_s, table_s, 1.3)
    report("Dataset.map batch form + to_parquet", floor_b, batch_s, 2.5)
    report("iterate typed samples vs to_pylist", pylist_s, samples_s, 2.0)


if __name__ == "__main__":
    main()
