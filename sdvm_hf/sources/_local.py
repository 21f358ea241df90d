"""Local files read with pyarrow, in place: nothing is copied into the ``datasets`` cache.

Parquet is memory-mapped when read whole, and read row group by row group with
``ParquetFile.iter_batches`` when streamed, JSON Lines (also ``.gz``) through
:mod:`sdvm_hf.sources._jsonl`, a JSON array file through the standard library as
``datasets`` reads one, and CSV through :mod:`sdvm_hf.sources._csv`. Column types are
those pyarrow infers, which is what ``datasets`` gives for the same files (its builders use
the same readers).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf.arrow import parquet_file_batches
from sdvm_hf.errors import InputError
from sdvm_hf.sources._csv import CsvLayout, concat_files, csv_batches, read_csv
from sdvm_hf.sources._jsonl import jsonl_blocks, named, read_jsonl, read_options

Kind = Literal["parquet", "jsonl", "json", "csv"]


def _json_array(file: str) -> pa.Table:
    """A JSON file holding an array of objects, read as ``datasets`` reads one.

    ``datasets`` rewrites the array as JSON Lines and hands it to ``pyarrow.json``; so does
    this, so the column types are the same.
    """
    import gzip

    import pyarrow.json as paj

    opener = gzip.open if file.endswith(".gz") else open
    try:
        with opener(file, "rt", encoding="utf-8") as text:
            data = json.load(text)
        if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
            raise InputError("expected a JSON array of objects (or JSON Lines, named .jsonl)")
        lines = "\n".join(json.dumps(row, ensure_ascii=False) for row in data).encode()
        return paj.read_json(io.BytesIO(lines), read_options=read_options())
    except (ValueError, UnicodeDecodeError, pa.ArrowException) as error:
        raise named(file, error) from None


def _parquet(file: str) -> pa.Table:
    try:
        return pq.read_table(file, memory_map=True)
    except (pa.ArrowException, OSError) as error:
        raise named(file, error) from None


def read_local(files: Sequence[str], kind: Kind, csv: CsvLayout) -> pa.Table:
    """The files as one table, read in place (Parquet memory-mapped)."""
    if kind == "csv":
        return read_csv(files, csv)
    if kind == "parquet":
        tables = [_parquet(file) for file in files]
    elif kind == "jsonl":
        tables = [read_jsonl(file) for file in files]
    else:
        tables = [_json_array(file) for file in files]
    return tables[0] if len(tables) == 1 else concat_files(tables, files)


def local_length(files: Sequence[str], kind: Kind) -> int | None:
    """The row count when the files say it without being read (Parquet), else ``None``."""
    if kind != "parquet":
        return None
    return sum(_rows(file) for file in files)


def _rows(file: str) -> int:
    try:
        return int(pq.read_metadata(file).num_rows)
    except (pa.ArrowException, OSError) as error:
        raise named(file, error) from None


def _parquet_batches(file: str, batch_size: int) -> Iterator[pa.Table]:
    try:
        yield from parquet_file_batches(file, batch_size)
    except (pa.ArrowException, OSError) as error:
        raise named(file, error) from None


def local_batches(
    files: Sequence[str], kind: Kind, csv: CsvLayout, batch_size: int
) -> Iterator[pa.Table]:
    """The files batch by batch (at most ``batch_size`` rows), holding one batch at a time."""
    for file in files:
        if kind == "parquet":
            yield from _parquet_batches(file, batch_size)
            continue
        if kind == "csv":
            yield from csv_batches(file, csv, batch_size)
            continue
        blocks = jsonl_blocks(file) if kind == "jsonl" else iter([_json_array(file)])
        for table in blocks:
            for offset in range(0, table.num_rows, batch_size):
                yield table.slice(offset, batch_size)


class LocalRows:
    """A split's local files, read in place."""

    def __init__(self, files: Sequence[str], kind: Kind, csv: CsvLayout) -> None:
        """Read ``files``, all of one ``kind``, CSV ones as ``csv`` says."""
        self.files, self.kind, self.csv = files, kind, csv

    def table(self) -> pa.Table:
        return read_local(self.files, self.kind, self.csv)

    def batches(self, batch_size: int) -> Iterator[pa.Table]:
        return local_batches(self.files, self.kind, self.csv, batch_size)

    def length(self) -> int | None:
        return local_length(self.files, self.kind)
