"""Sample Parquet: the sample table, read memory-mapped and checked, written atomically."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._atomic import atomic_path
from sdvm_hf._restart import at_most_twice
from sdvm_hf.arrow import (
    WRITE_OPTIONS,
    canonical,
    check_schema,
    checked_table,
    concatenate_tables,
    decode,
    parquet_file_batches,
)
from sdvm_hf.arrow.sequence import SampleBatches, SampleSequence, samples_to_table
from sdvm_hf.errors import SampleTableError
from sdvm_hf.files._format import not_a_file
from sdvm_hf.files._writer import SampleWriter
from sdvm_hf.record import Record, with_record

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = [
    "canonical_file",
    "converted_record",
    "iter_parquet",
    "iter_parquet_tables",
    "parquet_batches",
    "parquet_files",
    "read_parquet",
    "read_parquet_table",
    "write_parquet",
    "write_table",
]


def write_table(table: pa.Table, path: str | os.PathLike[str]) -> None:
    """Write a sample table to ``path`` atomically (the file appears only when complete)."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **WRITE_OPTIONS)


def write_parquet(
    samples: Iterable[MultipleChoiceSample] | pa.Table, path: str | os.PathLike[str]
) -> int:
    """Write samples (or a sample table) to a Parquet file; return how many rows.

    A :class:`~sdvm_hf.StreamingSamples` is written batch by batch as it is
    converted: the whole table is never held.

    The file loads with :func:`read_parquet`, ``pyarrow.parquet.read_table`` and
    ``datasets.load_dataset("parquet", data_files=...)``. Writing is atomic: an error or a
    crash mid-write leaves no partial file at ``path``.
    """
    if isinstance(samples, SampleBatches) and not isinstance(samples, SampleSequence):
        stream = samples
        return at_most_twice(lambda: _write_stream(stream, path))  # the file is temporary
    if isinstance(samples, pa.Table | SampleSequence):
        table = SampleSequence(samples).table if isinstance(samples, pa.Table) else samples.table
    else:
        table = checked_table(samples_to_table(samples), "samples")
    if isinstance(samples, SampleSequence):
        record = converted_record(samples, table.num_rows, len(samples.rejects))
        table = table.replace_schema_metadata(with_record(table.schema, record).metadata)
    write_table(table, path)
    return int(table.num_rows)


def _write_stream(samples: SampleBatches, path: str | os.PathLike[str]) -> int:
    """A stream written batch by batch as it is converted: the whole table is never held."""
    with SampleWriter(path, "parquet") as writer:
        for table in samples.tables():
            writer.write(table)
        writer.record = converted_record(samples, writer.rows, len(samples.rejects))
    return writer.rows


def converted_record(
    samples: SampleBatches,
    rows: int,
    rejected: int,
    rejects: str | os.PathLike[str] | None = None,
    sha256: str | None = None,
) -> Record | None:
    """The record of a file of ``rows`` converted samples, where the loader knew their origin.

    ``rejects`` and ``sha256``: the file the rejected rows were written to, and its SHA-256.
    """
    if samples.provenance is None:
        return None
    return samples.provenance().converted(rows, rejected, rejects, sha256)


def read_parquet(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> SampleSequence:
    """Read sample Parquet files as a lazy sequence of typed samples.

    ``path`` is a file, a folder (its ``*.parquet`` files, sorted), a glob, or a list of
    these. The files are memory-mapped, and samples are built only when asked for (iteration
    decodes one batch at a time). Every file's schema is checked on its own, then the files
    are unified only where that is exact (string with large_string, an all-null column with
    any type, extra structs with different keys, see :func:`concatenate_samples`); a file
    that is not a sample table, or whose types conflict with another's, raises
    :class:`~sdvm_hf.errors.SampleTableError` naming it, whatever the order of the files.
    Every row is checked (vectorised) and a bad one is named.
    """
    files = parquet_files(path)
    tables = [canonical_file(file) for file in files]
    table = concatenate_tables(tables, [str(file) for file in files])
    source = str(files[0]) if len(files) == 1 else f"{len(files)} files ({files[0]}, ...)"
    return SampleSequence(table, source=source)


def iter_parquet(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], batch_rows: int = 8192
) -> Iterator[MultipleChoiceSample]:
    """Yield typed samples from sample Parquet files, reading ``batch_rows`` rows at a time.

    Takes what :func:`read_parquet` takes; each batch is checked before its samples are
    yielded (a bad row is named by its row in its file), and nothing but the current batch is
    held, so a pass over a file of any size needs the memory of one batch.
    """
    for table in iter_parquet_tables(path, batch_rows):
        yield from decode(table)


def iter_parquet_tables(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], batch_rows: int = 65_536
) -> Iterator[pa.Table]:
    """Sample Parquet files as checked sample tables of at most ``batch_rows`` rows each.

    What :func:`iter_parquet` decodes; a bad row is named by its row in its file.
    """
    for file in parquet_files(path):
        first_row = 0
        for batch in parquet_batches(file, batch_rows):
            yield checked_table(batch, str(file), first_row)
            first_row += batch.num_rows


def parquet_batches(path: str | os.PathLike[str], batch_rows: int) -> Iterator[pa.Table]:
    """A Parquet file's tables of ``batch_rows`` rows as they are, its schema checked first.

    A file that cannot be read, at its start or midway, is a ``SampleTableError`` naming it.
    """
    if not os.path.isfile(path):
        raise not_a_file(path)
    try:
        yield from parquet_file_batches(path, batch_rows, partial(check_schema, source=str(path)))
    except (pa.ArrowInvalid, OSError) as error:
        raise SampleTableError(f"{path} cannot be read as Parquet: {error}") from error


def parquet_files(path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The files a path, folder, glob or list of them names, in order; ``FileNotFoundError``."""
    if isinstance(path, str | os.PathLike):
        path = [path]
    files: list[Path] = []
    for item in path:
        text = os.fspath(item)
        if os.path.isdir(text):
            found = sorted(Path(text).glob("*.parquet"))
        elif os.path.isfile(text):
            found = [Path(text)]
        else:
            found = sorted(Path(match) for match in glob.glob(text))
        if not found and os.path.isdir(text):
            raise FileNotFoundError(f"{text} is a folder with no .parquet file in it")
        if not found:
            raise FileNotFoundError(f"no such file: {text}")
        files += found
    return files


def canonical_file(path: str | os.PathLike[str]) -> pa.Table:
    """One Parquet file as a canonical sample table (schema checked, rows not yet)."""
    table = read_parquet_table(path)
    check_schema(table.schema, str(path))
    return canonical(table)


def read_parquet_table(path: str | os.PathLike[str]) -> pa.Table:
    """A Parquet file as it is, unchecked; ``FileNotFoundError`` or ``SampleTableError``."""
    if not os.path.isfile(path):
        raise not_a_file(path)
    try:
        table = pq.read_table(path, memory_map=True)
        kept = pq.read_metadata(path).metadata or {}
    except (pa.ArrowInvalid, OSError) as error:
        raise SampleTableError(f"{path} cannot be read as Parquet: {error}") from error
    # a record added when the file was finished is in its footer, not in its Arrow schema
    ours = {key: value for key, value in kept.items() if key.startswith(b"sdvm_hf.")}
    if ours:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **ours})
    return table
