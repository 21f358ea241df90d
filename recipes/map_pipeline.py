"""Our batch converter inside a user's own ``dataset.map`` chain: filter -> map -> to_parquet,
then the file read back as typed samples; rejected rows travel inside the mapped dataset.

    python recipes/map_pipeline.py [--out OUT.parquet] [--num-proc 2]
"""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

import datasets

from sdvm_hf import MultipleChoiceCompletionSample, read_parquet
from sdvm_hf.convert.mapping import split_rejects
from sdvm_hf.presets.hellaswag import HELLASWAG

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--out", type=Path, default=Path("out/hellaswag-activitynet.parquet"))
parser.add_argument("--num-proc", type=int, default=None)
args = parser.parse_args()

source = str(resources.files("sdvm_hf") / "data" / "hellaswag_validation.parquet")
ds = datasets.load_dataset("parquet", data_files={"validation": source}, split="validation")
ds = ds.filter(lambda row: row["source_id"].startswith("activitynet"))  # the user's step
mapped = ds.map(  # our converter, keeping bad rows as data instead of stopping
    HELLASWAG.batch,
    batched=True,
    with_indices=True,
    num_proc=args.num_proc,
    remove_columns=ds.column_names,
    features=HELLASWAG.features(ds.features, on_error="skip"),
    fn_kwargs={"split": "validation", "on_error": "skip"},
)
converted = split_rejects(mapped)  # the samples, and the rows left out with their reasons
args.out.parent.mkdir(parents=True, exist_ok=True)
datasets.Dataset(datasets.table.InMemoryTable(converted.table)).to_parquet(args.out)

typed = read_parquet(args.out)  # and it reads back
assert len(typed) + len(converted.rejects) == ds.num_rows
assert all(isinstance(sample, MultipleChoiceCompletionSample) for sample in typed)
print(f"{ds.num_rows} ActivityNet rows -> {len(typed)} typed samples in {args.out}")
print(f"{len(converted.rejects)} rejected")
print(typed[0].to_dict())
