"""Writing a sample file batch by batch, Parquet or JSON Lines, atomically."""

from __future__ import annotations

import os
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._atomic import AtomicFile, named
from sdvm_hf.arrow import DECODE_ROWS, decode
from sdvm_hf.arrow.schema import sample_schema
from sdvm_hf.files._format import Format, format_of
from sdvm_hf.files._jsonl import _open_text, _wire_line
from sdvm_hf.record import Record, with_record

__all__ = ["ROW_GROUP_BYTES", "ROW_GROUP_ROWS", "SampleWriter"]

ROW_GROUP_ROWS = 16_384
"""Rows a :class:`SampleWriter` gathers before it writes a Parquet row group: a stream's
batches are written as they come, a thousand small files' rows do not make a thousand
tiny groups."""

ROW_GROUP_BYTES = 32 << 20
"""Bytes after which a :class:`SampleWriter` writes the tables it gathered, however few rows:
wide rows (long texts) make row groups of about this size, not of :data:`ROW_GROUP_ROWS`
rows (a 1 GB column of 10k rows held whole took 2 GB)."""


class SampleWriter:
    """Sample tables written to a sample file batch by batch, never the whole table.

    Parquet takes the tables in one schema (the first table's), in row groups of at least
    :data:`ROW_GROUP_ROWS` rows or :data:`ROW_GROUP_BYTES` bytes but the last (tables are
    gathered up to that many); JSON Lines takes each sample's wire dict. The file appears
    when the writer closes without error; :meth:`discard` leaves an earlier file at ``path``
    as it was.
    """

    def __init__(self, path: str | os.PathLike[str], format: Format | None = None) -> None:
        self.format: Format = format or format_of(path)
        self.rows = 0
        """The samples written so far."""
        self._parquet: pq.ParquetWriter | None = None
        self._text: IO[str] | None = None
        self._closed = False
        self._waiting: list[pa.Table] = []
        self._waiting_rows = 0
        self._waiting_bytes = 0
        self.record: Record | None = None
        """A record to keep in the Parquet file's metadata (see :mod:`sdvm_hf.record`): set
        any time before :meth:`close`, so it can say how many rows were written."""
        self._file = AtomicFile(path)
        try:  # an interrupt from here on leaves no temporary file
            if self.format != "parquet":
                self._text = _open_text(self._file.path, "w", self.format == "jsonl.gz")
        except BaseException:
            self._file.discard()
            raise

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
            self._waiting_bytes += table.nbytes
            if self._waiting_rows >= ROW_GROUP_ROWS or self._waiting_bytes >= ROW_GROUP_BYTES:
                self._flush()
        self.rows += table.num_rows

    def _flush(self) -> None:
        """Write the tables waiting as one row group (small batches make no tiny groups)."""
        if self._parquet is not None and self._waiting:
            self._parquet.write_table(pa.concat_tables(self._waiting))
        self._waiting, self._waiting_rows, self._waiting_bytes = [], 0, 0

    def close(self) -> None:
        """Finish the file and move it into place (unless it was discarded)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._flush()
            if self._parquet is not None and self.record is not None:
                self._parquet.add_key_value_metadata(self.record.metadata())
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
