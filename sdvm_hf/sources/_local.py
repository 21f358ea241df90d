"""Local files read with pyarrow, in place: nothing is copied into the ``datasets`` cache.

Parquet is memory-mapped when read whole, and read row group by row group with
``ParquetFile.iter_batches`` when streamed, JSON
Lines (also ``.gz``) goes through ``pyarrow.json`` (whole, or a few megabytes of lines at a
time), a JSON array file through the standard library as ``datasets`` reads one, and CSV
through :mod:`sdvm_hf.sources._csv`. Column types are those pyarrow infers, which is what
``datasets`` gives for the same files (its builders use the same readers).
"""

from __future__ import annotations

import io
import json
import zlib
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf.arrow import parquet_file_batches
from sdvm_hf.errors import InputError
from sdvm_hf.sources._csv import CsvLayout, concat_files, csv_batches, read_csv

if TYPE_CHECKING:  # pyarrow.json and gzip are imported by the first JSON read
    import pyarrow.json as paj

Kind = Literal["parquet", "jsonl", "json", "csv"]

_JSONL_BLOCK = 8 << 20
"""Bytes of JSON Lines parsed at a time when streaming."""


def _read_options() -> paj.ReadOptions:
    """How every JSON file is read: 4 MB blocks, one thread.

    pyarrow's default 1 MB blocks fail on a longer line. One thread: pyarrow 26's threaded
    JSON reader crashed the process (a segfault) on a column whose type changes within a
    block, and gave a different error on each run.
    """
    import pyarrow.json as paj

    return paj.ReadOptions(block_size=4 << 20, use_threads=False)


def _named(file: str, error: Exception | str) -> InputError:
    return InputError(f"{file}: {error}")


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
        return paj.read_json(io.BytesIO(lines), read_options=_read_options())
    except (ValueError, UnicodeDecodeError, pa.ArrowException) as error:
        raise _named(file, error) from None


def _jsonl(file: str) -> pa.Table:
    import pyarrow.json as paj

    try:
        return paj.read_json(file, read_options=_read_options())
    except pa.ArrowException as error:
        blocks = _line_blocks(file)
        bad = next((n for first, block in blocks if (n := _not_json(first, block))), None)
        raise _named(file, f"line {bad} is not JSON: {error}" if bad else error) from None
    except (OSError, EOFError) as error:
        raise _named(file, error) from None


def _not_json(first: int, block: list[bytes]) -> int | None:
    """The number of the first line of ``block`` that is not JSON (pyarrow says a block's row)."""
    for number, line in enumerate(block, start=first):
        try:
            if line.strip():
                json.loads(line)
        except ValueError:
            return number
    return None


def _parquet(file: str) -> pa.Table:
    try:
        return pq.read_table(file, memory_map=True)
    except (pa.ArrowException, OSError) as error:
        raise _named(file, error) from None


def read_local(files: Sequence[str], kind: Kind, csv: CsvLayout) -> pa.Table:
    """The files as one table, read in place (Parquet memory-mapped)."""
    if kind == "csv":
        return read_csv(files, csv)
    if kind == "parquet":
        tables = [_parquet(file) for file in files]
    elif kind == "jsonl":
        tables = [_jsonl(file) for file in files]
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
        raise _named(file, error) from None


def _open_lines(file: str) -> IO[bytes]:
    if file.endswith(".gz"):
        import gzip

        return gzip.open(file, "rb")  # type: ignore[return-value]
    return open(file, "rb")


def _line_blocks(file: str) -> Iterator[tuple[int, list[bytes]]]:
    """A JSON Lines file a few megabytes of whole lines at a time, with the first's number.

    A file that cannot be read (a truncated ``.gz``) is named.
    """
    number = 1
    try:
        with _open_lines(file) as lines:
            while block := lines.readlines(_JSONL_BLOCK):
                yield number, block
                number += len(block)
    except (OSError, EOFError, zlib.error) as error:
        raise _named(file, error) from None


def _parsed(file: str, first: int, block: list[bytes], schema: pa.Schema | None = None) -> pa.Table:
    import pyarrow.json as paj

    options = paj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    block_bytes = io.BytesIO(b"".join(block))
    try:
        return paj.read_json(block_bytes, read_options=_read_options(), parse_options=options)
    except pa.ArrowException as error:
        bad = _not_json(first, block)
        if bad is not None:
            raise _named(file, f"line {bad} is not JSON: {error}") from None
        raise _named(file, f"lines {first} to {first + len(block) - 1}: {error}") from None


def _jsonl_schema(file: str) -> pa.Schema:
    """The column types of the whole file, as :func:`_jsonl` infers them, one block at a time.

    Each block's inferred types are unified as pyarrow unifies a whole file's blocks (a
    column null at first takes its later type, integers that meet decimals become
    doubles, a key first seen late is added), so every block of a stream has one schema.
    """
    schema: pa.Schema | None = None
    for first, block in _line_blocks(file):
        found = _parsed(file, first, block).schema
        try:
            schema = found if schema is None else _unify(schema, found)
        except pa.ArrowException as error:
            raise _named(file, f"lines {first} to {first + len(block) - 1}: {error}") from None
    if schema is None:
        raise _named(file, ValueError("Empty JSON file"))
    return schema


def _unify(schema: pa.Schema, other: pa.Schema) -> pa.Schema:
    """The two blocks' types unified as pyarrow's reader unifies a file's blocks.

    Beyond ``unify_schemas``' permissive promotion, a column of timestamps that meets other
    text, or timestamps of another unit, becomes text, as the reader makes it.
    """
    texts = {
        field.name
        for field in other
        if field.name in schema.names
        and (types := (field.type, schema.field(field.name).type))[0] != types[1]
        and any(pa.types.is_timestamp(t) for t in types)
        and all(pa.types.is_timestamp(t) or pa.types.is_string(t) for t in types)
    }

    def as_text(fields: pa.Schema) -> pa.Schema:
        return pa.schema(f.with_type(pa.string()) if f.name in texts else f for f in fields)

    return pa.unify_schemas([as_text(schema), as_text(other)], promote_options="permissive")


def _jsonl_blocks(file: str) -> Iterator[pa.Table]:
    """A JSON Lines file a few megabytes of lines at a time, every block in the file's types.

    The types come from a first pass over the file (:func:`_jsonl_schema`, which holds one
    block at a time), so a key first seen on the last line, or a column null until then,
    gives the table the whole file gives.
    """
    schema = _jsonl_schema(file)
    for first, block in _line_blocks(file):
        yield _parsed(file, first, block, schema)


def _parquet_batches(file: str, batch_size: int) -> Iterator[pa.Table]:
    try:
        yield from parquet_file_batches(file, batch_size)
    except (pa.ArrowException, OSError) as error:
        raise _named(file, error) from None


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
        blocks = _jsonl_blocks(file) if kind == "jsonl" else iter([_json_array(file)])
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
