"""Sample files: Parquet in the sample schema, and SDVM wire JSON Lines, chosen by extension.

Writes are atomic (the file appears only when complete); reads check every row.

=====================  ===================================================================
``.parquet``           the sample table (:mod:`sdvm_hf.arrow.schema`)
``.jsonl``             one wire dict per line (what the SDVM service exchanges)
``.jsonl.gz``          the same, gzip-compressed
=====================  ===================================================================
"""

from __future__ import annotations

import glob
import gzip
import json
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._atomic import AtomicFile, atomic_path, named
from sdvm_hf.arrow._codec import DECODE_ROWS, decode
from sdvm_hf.arrow._concat import concatenate_tables
from sdvm_hf.arrow._parquet import parquet_file_batches
from sdvm_hf.arrow._validate import canonical, check_schema, checked_table
from sdvm_hf.arrow.schema import sample_schema
from sdvm_hf.arrow.sequence import SampleBatches, SampleSequence, samples_to_table
from sdvm_hf.errors import SampleTableError
from sdvm_hf.record import Record, metadata, with_record
from sdvm_hf.samples import MultipleChoiceSample

__all__ = [
    "FORMATS",
    "Format",
    "SampleWriter",
    "format_of",
    "iter_jsonl",
    "iter_parquet",
    "read_jsonl",
    "read_parquet",
    "read_samples",
    "write_jsonl",
    "write_parquet",
    "write_samples",
]

Format = Literal["parquet", "jsonl", "jsonl.gz"]
"""A sample file's format, named by its extension."""

FORMATS: tuple[Format, ...] = ("parquet", "jsonl", "jsonl.gz")


def format_of(path: str | os.PathLike[str]) -> Format:
    """The format a file name says (``.parquet``, ``.jsonl``, ``.jsonl.gz``), or ``ValueError``."""
    name = Path(path).name
    for candidate in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(f".{candidate}"):
            return candidate
    raise ValueError(
        f"{path}: cannot tell the sample file format; name it .parquet, .jsonl or .jsonl.gz"
    )


# -- Parquet -------------------------------------------------------------------------------


def write_table(table: pa.Table, path: str | os.PathLike[str]) -> None:
    """Write a sample table to ``path`` atomically (the file appears only when complete)."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


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
        with SampleWriter(path, "parquet") as writer:  # a stream: batch by batch
            for table in samples.tables():
                writer.write(table)
            writer.record = converted_record(samples, writer.rows, len(samples.rejects))
        return writer.rows
    if isinstance(samples, pa.Table | SampleSequence):
        table = SampleSequence(samples).table if isinstance(samples, pa.Table) else samples.table
    else:
        table = checked_table(samples_to_table(samples), "samples")
    if isinstance(samples, SampleSequence):
        record = converted_record(samples, table.num_rows, len(samples.rejects))
        table = table.replace_schema_metadata(with_record(table.schema, record).metadata)
    write_table(table, path)
    return int(table.num_rows)


def converted_record(
    samples: SampleBatches,
    rows: int,
    rejected: int,
    rejects: str | os.PathLike[str] | None = None,
) -> Record | None:
    """The record of a file of ``rows`` converted samples, where the loader knew their origin."""
    if samples.provenance is None:
        return None
    record = samples.provenance()
    record["stages"] = [{"stage": "convert", "rows": rows}]
    record["rejects"] = {
        "path": None if rejects is None else str(Path(rejects).resolve()),
        "count": rejected,
    }
    return record


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
        raise FileNotFoundError(f"no such file: {path}")
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
        raise FileNotFoundError(f"no such file: {path}")
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


# -- JSON Lines ----------------------------------------------------------------------------


def _open_text(path: Path, mode: Literal["r", "w"], gz: bool) -> IO[str]:
    if gz:
        return gzip.open(path, f"{mode}t", encoding="utf-8")  # type: ignore[return-value]
    return path.open(mode, encoding="utf-8")


def write_jsonl(samples: Iterable[MultipleChoiceSample], path: str | os.PathLike[str]) -> int:
    """Write ``samples`` to ``path``, one wire dict per line (UTF-8; gzip for ``.gz``).

    Returns how many; the file appears only when every line is written. Every sample is
    checked before anything is written (a sample built around the validators, e.g. with
    ``model_construct``, is refused).
    """
    if not isinstance(samples, SampleBatches):  # loaded and streamed samples come checked
        samples = [_checked(sample) for sample in samples]
    count = 0
    with atomic_path(path) as tmp, _open_text(tmp, "w", str(path).endswith(".gz")) as out:
        for sample in samples:
            out.write(_wire_line(sample))
            count += 1
    return count


def _wire_line(sample: MultipleChoiceSample) -> str:
    return json.dumps(sample.to_dict(), ensure_ascii=False, allow_nan=False) + "\n"


def _checked(sample: MultipleChoiceSample) -> MultipleChoiceSample:
    return type(sample)(**sample.__dict__)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is out of range (JSON has no infinity)")
    return value


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def parse_json(text: str) -> Any:
    """Strict JSON: no ``NaN``/``Infinity``, no number that overflows to infinity.

    Nesting too deep for Python's parser is a ``ValueError`` like any other bad line.
    """
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError("nested too deeply to parse") from None


def jsonl_records(
    path: str | os.PathLike[str], *, keep_going: bool = False
) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for each non-blank line of a JSON Lines file.

    A line that is not JSON raises ``ValueError`` naming the file and line, or with
    ``keep_going`` is yielded as that error in place of the value.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    with _open_text(path, "r", path.name.endswith(".gz")) as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield number, parse_json(line)
            except ValueError as error:
                if not keep_going:
                    raise ValueError(f"{path}, line {number}: {error}") from error
                yield number, error


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[MultipleChoiceSample]:
    """Yield typed samples from a wire JSON Lines file (e.g. what the service returned).

    Blank lines are skipped. A bad line raises ``ValueError`` naming the file and line.
    """
    for number, record in jsonl_records(path):
        try:
            yield MultipleChoiceSample.from_dict(record)
        except ValueError as error:  # ValidationError is a ValueError
            raise ValueError(f"{path}, line {number}: {error}") from error


def read_jsonl(path: str | os.PathLike[str]) -> SampleSequence:
    """Read a wire JSON Lines file as a lazy sequence of typed samples, as :func:`read_parquet`.

    :func:`iter_jsonl` streams the file instead.
    """
    return SampleSequence(samples_to_table(iter_jsonl(path)), source=str(path))


# -- by extension --------------------------------------------------------------------------


ROW_GROUP_ROWS = 16_384
"""Rows a :class:`SampleWriter` gathers before it writes a Parquet row group: a stream's
batches are written as they come, a thousand small files' rows do not make a thousand
tiny groups."""


class SampleWriter:
    """Sample tables written to a sample file batch by batch, never the whole table.

    Parquet takes the tables in one schema (the first table's), in row groups of at least
    :data:`ROW_GROUP_ROWS` rows but the last (tables are gathered up to that many); JSON
    Lines takes each sample's wire dict. The file appears when the writer closes without error;
    :meth:`discard` leaves an earlier file at ``path`` as it was.
    """

    def __init__(self, path: str | os.PathLike[str], format: Format | None = None) -> None:
        self.format: Format = format or format_of(path)
        self.rows = 0
        """The samples written so far."""
        self._file = AtomicFile(path)
        self._parquet: pq.ParquetWriter | None = None
        self._text: IO[str] | None = None
        self._closed = False
        self._waiting: list[pa.Table] = []
        self._waiting_rows = 0
        self.record: Record | None = None
        """A record to keep in the Parquet file's metadata (see :mod:`sdvm_hf.record`): set
        any time before :meth:`close`, so it can say how many rows were written."""
        if self.format != "parquet":
            self._text = _open_text(self._file.path, "w", self.format == "jsonl.gz")

    def write(self, table: pa.Table) -> None:
        """Append a (canonical, checked) sample table; an ``OSError`` names the file."""
        try:
            self._write(table)
        except OSError as error:  # a full disk: name the file, not only the system's text
            raise named(error, self._file.destination) from error

    def _write(self, table: pa.Table) -> None:
        if self._text is not None:
            for batch in table.to_batches(max_chunksize=DECODE_ROWS):
                for sample in decode(batch):
                    self._text.write(_wire_line(sample))
        else:
            if self._parquet is None:
                self._parquet = pq.ParquetWriter(self._file.path, table.schema)
            self._waiting.append(table.cast(self._parquet.schema))
            self._waiting_rows += table.num_rows
            if self._waiting_rows >= ROW_GROUP_ROWS:
                self._flush()
        self.rows += table.num_rows

    def _flush(self) -> None:
        """Write the tables waiting as one row group (small batches make no tiny groups)."""
        if self._parquet is not None and self._waiting:
            self._parquet.write_table(pa.concat_tables(self._waiting))
        self._waiting, self._waiting_rows = [], 0

    def close(self) -> None:
        """Finish the file and move it into place (unless it was discarded)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._flush()
            if self._parquet is not None and self.record is not None:
                self._parquet.add_key_value_metadata(metadata(self.record))
            self._finish()
            if self._parquet is None and self._text is None:  # nothing came: no sample
                empty = sample_schema().empty_table()
                pq.write_table(
                    empty.replace_schema_metadata(with_record(empty.schema, self.record).metadata),
                    self._file.path,
                )
        except OSError as error:
            self._file.discard()
            raise named(error, self._file.destination) from error
        except BaseException:
            self._file.discard()
            raise
        self._file.commit()

    def discard(self) -> None:
        """Write nothing: remove what was written, leave ``path`` as it was."""
        if self._closed:
            return
        self._closed = True
        try:
            self._finish()
        finally:
            self._file.discard()

    def _finish(self) -> None:
        writer, text = self._parquet, self._text
        if writer is not None:
            writer.close()
        if text is not None:
            text.close()

    def __enter__(self) -> SampleWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


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
