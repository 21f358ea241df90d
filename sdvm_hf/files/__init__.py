"""Sample files: Parquet in the sample schema, and SDVM wire JSON Lines, chosen by extension.

Writes are atomic (the file appears only when complete); reads check every row.

=====================  ===================================================================
``.parquet``           the sample table (:mod:`sdvm_hf.arrow.schema`)
``.jsonl``             one wire dict per line (what the SDVM service exchanges)
``.jsonl.gz``          the same, gzip-compressed
=====================  ===================================================================
"""

from __future__ import annotations

import os

from sdvm_hf.arrow.sequence import SampleBatches, SampleSequence
from sdvm_hf.files._format import FORMATS, Format, format_of, not_a_file, special_kind
from sdvm_hf.files._jsonl import iter_jsonl, jsonl_records, parse_json, read_jsonl, write_jsonl
from sdvm_hf.files._parquet import (
    canonical_file,
    converted_record,
    iter_parquet,
    iter_parquet_tables,
    parquet_batches,
    parquet_files,
    read_parquet,
    read_parquet_table,
    write_parquet,
    write_table,
)
from sdvm_hf.files._writer import ROW_GROUP_BYTES, ROW_GROUP_ROWS, SampleWriter

__all__ = [
    "FORMATS",
    "ROW_GROUP_BYTES",
    "ROW_GROUP_ROWS",
    "Format",
    "SampleWriter",
    "canonical_file",
    "converted_record",
    "format_of",
    "iter_jsonl",
    "iter_parquet",
    "iter_parquet_tables",
    "jsonl_records",
    "not_a_file",
    "parquet_batches",
    "parquet_files",
    "parse_json",
    "read_jsonl",
    "read_parquet",
    "read_parquet_table",
    "read_samples",
    "special_kind",
    "write_jsonl",
    "write_parquet",
    "write_samples",
    "write_table",
]


def write_samples(
    samples: SampleBatches,
    path: str | os.PathLike[str],
    format: Format | None = None,
) -> int:
    """Write a sample file in ``format`` (default: the one its extension names)."""
    if (format or format_of(path)) == "parquet":
        return write_parquet(samples, path)
    return write_jsonl(samples, path)


def read_samples(path: str | os.PathLike[str]) -> SampleSequence:
    """A sample file (Parquet, or wire JSON Lines) as a checked, lazy sequence."""
    if format_of(path) == "parquet":
        return read_parquet(path)
    return read_jsonl(path)
