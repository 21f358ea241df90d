"""Writing a sample file batch by batch, Parquet or JSON Lines, atomically.

Parquet row groups are encoded and written in a thread beside the caller (pyarrow releases
the GIL while it writes), so a stream's conversion of the next batch runs while the last one
is written: a conversion takes about the longer of the two, not their sum. At most one row
group waits for the thread, so memory stays bounded.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._atomic import AtomicFile, block_signals_in_this_thread, named
from sdvm_hf.arrow import DECODE_ROWS, WRITE_OPTIONS, decode, empty_table
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
        self._groups: _InThread | None = None
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
                self._parquet = pq.ParquetWriter(self._file.path, table.schema, **WRITE_OPTIONS)
                self._groups = _InThread(self._parquet.write_table, "sdvm_hf-parquet-writer")
            self._waiting.append(table.cast(self._parquet.schema))
            self._waiting_rows += table.num_rows
            self._waiting_bytes += table.nbytes
            if self._waiting_rows >= ROW_GROUP_ROWS or self._waiting_bytes >= ROW_GROUP_BYTES:
                self._flush()
        self.rows += table.num_rows

    def _flush(self) -> None:
        """Write the tables waiting as one row group (small batches make no tiny groups)."""
        if self._groups is not None and self._waiting:
            self._groups.submit(pa.concat_tables(self._waiting))
        self._waiting, self._waiting_rows, self._waiting_bytes = [], 0, 0

    def close(self) -> None:
        """Finish the file and move it into place (unless it was discarded)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._flush()
            if self._groups is not None:
                self._groups.finish()  # every row group written, or the thread's error
            if self._parquet is not None and self.record is not None:
                self._parquet.add_key_value_metadata(self.record.metadata())
            self._finish()
            if self._parquet is None and self._text is None:  # nothing came: no sample
                empty = empty_table(sample_schema())
                pq.write_table(
                    empty.replace_schema_metadata(with_record(empty.schema, self.record).metadata),
                    self._file.path,
                )
        except OSError as error:
            self._abandon()
            raise named(error, self._file.destination) from error
        except BaseException:
            self._abandon()
            raise
        self._file.commit()

    def discard(self) -> None:
        """Write nothing: remove what was written, leave ``path`` as it was."""
        if self._closed:
            return
        self._closed = True
        self._abandon()

    def _abandon(self) -> None:
        """Stop writing and remove the temporary file; an error closing it changes nothing."""
        try:
            with suppress(Exception):  # a full disk may refuse the close too: the file goes
                self._finish()
        finally:
            self._file.discard()

    def _finish(self) -> None:
        writer, text = self._parquet, self._text
        if self._groups is not None:
            self._groups.stop()
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


class _InThread:
    """``call(item)`` for each item submitted, in order, in a thread beside the caller.

    At most one item waits while another is being handled. The thread's first error is raised
    by the next :meth:`submit` or by :meth:`finish`; nothing is handled after it.
    """

    def __init__(self, call: Callable[[pa.Table], object], name: str) -> None:
        self._call = call
        self._items: queue.Queue[pa.Table | None] = queue.Queue(maxsize=1)
        self._error: BaseException | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        block_signals_in_this_thread()  # Ctrl-C and SIGTERM stay the main thread's
        while (item := self._items.get()) is not None:
            if self._error is None and not self._stopping:
                try:
                    self._call(item)
                except BaseException as error:  # raised in the caller's thread
                    self._error = error

    def submit(self, item: pa.Table) -> None:
        """Hand ``item`` over (waiting while one is already waiting)."""
        if self._error is not None:
            raise self._error
        self._items.put(item)

    def finish(self) -> None:
        """Wait until every item is handled; raise the thread's error, if any."""
        if self._thread.is_alive():
            self._items.put(None)
            self._thread.join()
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        """Handle nothing more and end the thread (after an error, or a discard)."""
        self._stopping = True
        if self._thread.is_alive():
            self._items.put(None)
            self._thread.join()
