"""The finished batches of a run, ``<output>.parts/batch-NNNNNN.parquet``, and when to trust one.

A part records what made it (the stage, batch size and conventions), the rows it holds, a
hash of the input rows it was made from, and a hash of its own content. A rerun reuses a part
only when all of these match the batch it stands for and the part reads back to exactly the
content it was written with; a part that cannot be read, holds other rows, or was changed
after it was written is named in the log and its batch is sent again (the part is replaced).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._atomic import atomic_path
from sdvm_hf.arrow import WRITE_OPTIONS, row_chunks
from sdvm_hf.service._base import BLOCK_COLUMNS, ServiceError

log = logging.getLogger("sdvm_hf.service.roundtrip")

RUN_KEY = b"sdvm_hf.run"
"""The run that made a part: stage, batch size, conventions (a JSON object)."""
ROWS_KEY = b"sdvm_hf.rows"
"""A hash of the input rows a part was made from."""
SPAN_KEY = b"sdvm_hf.part_rows"
"""The input rows a part holds, ``first..last`` (``0..99``)."""
CONTENT_KEY = b"sdvm_hf.part_content"
"""A hash of the part's own rows as written: a part changed after it was written differs."""
PART_KEYS = (RUN_KEY, ROWS_KEY, SPAN_KEY, CONTENT_KEY)

HASH_BYTES = 4 << 20
"""Bytes of a part turned into Python rows at a time to hash it: its rows' JSON is hashed
slice by slice, so an answer of large samples is never held as Python objects whole."""


def rows_hash(batch: pa.Table) -> str:
    """A hash of a batch's rows: its column types and every logical value, in order.

    Computed from the values (not the buffers), so a slice of a larger table and an equal
    standalone table hash alike, and any change in any column changes the hash.
    """
    schema = batch.schema.remove_metadata()
    return _rows_json_hash(hashlib.sha256(f"{schema}\n".encode()), batch)


def content_hash(part: pa.Table) -> str:
    """A hash of a part's values, in order.

    Its types are checked against the input's apart: Parquet names a list's item ``element``,
    which changes the schema's text, not its type.
    """
    return _rows_json_hash(hashlib.sha256(), part)


def _rows_json_hash(digest: Any, table: pa.Table) -> str:
    """``digest`` fed ``json.dumps(table.to_pylist())``, made slice by slice, as a hex string.

    The text fed is exactly the whole list's JSON (``[`` rows joined by ``", "`` ``]``), so the
    hashes parts already record still match; only a slice of about :data:`HASH_BYTES` is held
    as Python rows and JSON text at a time (a 5 MB sample is one slice of its own).
    """
    digest.update(b"[")
    first = True
    for _, piece in row_chunks(table, HASH_BYTES):
        if not piece.num_rows:
            continue
        rows = json.dumps(piece.to_pylist(), ensure_ascii=False, default=repr)[1:-1]
        digest.update((rows if first else ", " + rows).encode())
        first = False
    digest.update(b"]")
    return str(digest.hexdigest())


def span(start: int, count: int) -> str:
    """``first..last`` of ``count`` rows from ``start``."""
    return f"{start}..{start + count - 1}"


@dataclass
class Parts:
    """The folder of finished batches."""

    folder: Path
    run: dict[str, Any]
    """The stage, batch size and conventions: parts of another run are refused."""

    def path(self, number: int) -> Path:
        return self.folder / f"batch-{number:06d}.parquet"

    def reusable(self, number: int, batch: pa.Table, start: int) -> pa.Table | None:
        """Batch ``number``'s part when it holds exactly its rows as written, else ``None``.

        ``None`` means: send the batch again. A part of another run raises.
        """
        part = self.path(number)
        if not part.exists():
            return None
        try:
            table = pq.read_table(part)
        except (pa.ArrowInvalid, OSError) as error:
            self._replaced(number, f"cannot be read ({_first_line(error)})")
            return None
        meta = table.schema.metadata or {}
        try:
            recorded = json.loads(meta.get(RUN_KEY, b"{}"))
        except ValueError:
            recorded = None
        if not isinstance(recorded, dict):
            self._replaced(number, "has no readable record of the run that made it")
            return None
        if recorded != self.run:
            differ = [
                f"{key} {recorded.get(key)!r}, not {value!r}"
                for key, value in self.run.items()
                if recorded.get(key) != value
            ]
            raise ServiceError(
                f"{self.folder} holds the parts of another run ({'; '.join(differ)}); "
                "rerun with the same options, or remove it to start over"
            )
        problem = self._problem(table, meta, batch, start)
        if problem is not None:
            self._replaced(number, problem)
            return None
        return table

    def _problem(
        self, table: pa.Table, meta: dict[bytes, bytes], batch: pa.Table, start: int
    ) -> str | None:
        """Why ``table`` is not the finished form of ``batch`` (``None`` when it is)."""
        if meta.get(ROWS_KEY, b"").decode(errors="replace") != rows_hash(batch):
            return "was made from input rows that have changed since"
        if table.num_rows != batch.num_rows:
            return f"holds {table.num_rows} rows, the batch has {batch.num_rows}"
        expected = span(start, batch.num_rows)
        held = meta.get(SPAN_KEY, b"").decode(errors="replace")
        if held != expected:
            return f"holds rows {held or '(unrecorded)'}, the batch is rows {expected}"
        if table.schema.remove_metadata() != batch.schema.remove_metadata():
            return "has other columns or types than the input"
        for name in batch.column_names:  # the row keys: what no stage may change
            if name not in BLOCK_COLUMNS and not table.column(name).equals(batch.column(name)):
                return f"holds other rows than the batch (column {name!r} differs)"
        if meta.get(CONTENT_KEY, b"").decode(errors="replace") != content_hash(table):
            return "was changed after it was written"
        return None

    def _replaced(self, number: int, why: str) -> None:
        part = self.path(number)
        log.warning("%s %s; sending batch %d again (the part is replaced)", part, why, number)

    def write(self, number: int, part: pa.Table, input_hash: str, start: int) -> None:
        """Write batch ``number``'s part with its record: run, rows, input and content hashes."""
        meta = {
            **(part.schema.metadata or {}),
            RUN_KEY: json.dumps(self.run).encode(),
            ROWS_KEY: input_hash.encode(),
            SPAN_KEY: span(start, part.num_rows).encode(),
            CONTENT_KEY: content_hash(part).encode(),
        }
        # Written in memory first: a part is small, and the Parquet writer's many small
        # writes cost more, straight to a file, than the whole encoding does
        sink = pa.BufferOutputStream()
        pq.write_table(part.replace_schema_metadata(meta), sink, **WRITE_OPTIONS)
        with atomic_path(self.path(number)) as tmp:
            tmp.write_bytes(sink.getvalue())

    def remove(self) -> None:
        """Remove the folder and every part in it (the output is written: they are done).

        The parts are removed side by side: on a file system that discards freed blocks at
        once (ext4 mounted with ``discard``) each removal waits for the disk, about 3 ms a
        part one after the other, and those waits overlap.
        """
        with contextlib.suppress(OSError):
            files = list(self.folder.iterdir())
            with ThreadPoolExecutor(min(16, len(files) or 1)) as pool:
                for _ in pool.map(_unlink, files):
                    pass
        shutil.rmtree(self.folder, ignore_errors=True)

    def drop_if_empty(self) -> None:
        if self.folder.is_dir() and not any(self.folder.glob("batch-*.parquet")):
            shutil.rmtree(self.folder)


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
