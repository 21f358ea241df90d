"""Sample files by extension (Parquet, or wire JSON Lines) and the rejects file beside them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from sdvm_hf._files import atomic_path
from sdvm_hf.arrow.parquet import read_parquet, write_parquet
from sdvm_hf.arrow.table import SampleSequence, samples_to_table
from sdvm_hf.errors import Reject
from sdvm_hf.jsonl import iter_jsonl, write_jsonl


def write_samples(samples: SampleSequence, path: str | Path, form: str | None = None) -> None:
    """Write a sample file: wire JSON Lines for ``.jsonl`` (or ``form="jsonl"``), else Parquet."""
    path = Path(path)
    if (form or ("jsonl" if path.suffix == ".jsonl" else "parquet")) == "jsonl":
        write_jsonl(samples, path)
    else:
        write_parquet(samples, path)


def read_samples(path: str | Path) -> SampleSequence:
    """A sample file (Parquet, or wire JSON Lines) as a checked, lazy sequence."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return SampleSequence(samples_to_table(iter_jsonl(path)), source=str(path))
    return read_parquet(path)


def rejects_path(output: str | Path) -> Path:
    """Where the rejects of a conversion go: ``NAME.rejects.jsonl`` beside the output."""
    output = Path(output)
    return output.with_name(output.name.split(".")[0] + ".rejects.jsonl")


def write_rejects(rejects: Sequence[Reject], path: str | Path) -> None:
    """Write rejects as JSON Lines: row, column, reason and the original row."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        for reject in rejects:
            record = {
                "row": reject.row,
                "column": reject.column,
                "reason": reject.reason,
                "original": reject.original,
            }
            out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
