"""Our batch converter inside a user's own ``dataset.map`` chain: filter -> map -> to_parquet,
then the file read back as typed samples.

    python recipes/map_pipeline.py [OUT.parquet]
"""

from __future__ import annotations

import sys
from importlib import resources

import datasets

from sdvm_hf import HELLASWAG, MultipleChoiceCompletionSample, read_parquet

out = sys.argv[1] if len(sys.argv) > 1 else "out/hellaswag-activitynet.parquet"
source = str(resources.files("sdvm_hf") / "data" / "hellaswag_validation.parquet")

ds = datasets.load_dataset("parquet", data_files={"validation": source}, split="validation")
ds = ds.filter(lambda row: row["source_id"].startswith("activitynet"))  # the user's step
samples = ds.map(  # our converter
    HELLASWAG.batch,
    batched=True,
    with_indices=True,
    remove_columns=ds.column_names,
    features=HELLASWAG.features(ds.features),
    fn_kwargs={"split": "validation"},
)
samples.to_parquet(out)  # datasets writes

typed = read_parquet(out)  # and it reads back
assert len(typed) == ds.num_rows
assert all(isinstance(sample, MultipleChoiceCompletionSample) for sample in typed)
print(f"{ds.num_rows} ActivityNet rows -> {len(typed)} typed samples in {out}")
print(typed[0].to_dict())
