"""An input sample file a slice at a time, and the original rows its stages started from.

A Parquet sample file is read batch by batch (each batch checked as ``read_samples`` checks
the whole file), so an export holds one slice of its input, and of its original, at a time;
the two are cut at the same rows. A file read whole (JSON Lines, or one whose ``extra``
lists missing keys, whose canonical types may differ from batch to batch) is sliced in
memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf.arrow.schema import EXTRA_MISSING
from sdvm_hf.exporter._types import ExportError, Part
from sdvm_hf.exporter.policy import Policy
from sdvm_hf.files import format_of, iter_parquet_tables, read_samples
from sdvm_hf.record import content_hash, content_hash_of

__all__ = ["SLICE_ROWS", "Input", "open_input", "originals_of"]

SLICE_ROWS = 65_536
"""Rows exported at a time."""


@dataclass(frozen=True)
class Input:
    """A sample file to read a slice at a time: its path, its row count, or its whole table."""

    path: Path
    count: int
    table: pa.Table | None = None
    """The whole checked table, for a file read whole; ``None``: read batch by batch."""

    def slices(self, rows: int) -> Iterator[pa.Table]:
        """The file's checked sample tables of ``rows`` rows each (the last may be shorter).

        A file of no rows gives one table of no rows (its columns).
        """
        if self.table is not None:
            yield from _cut([self.table], rows)
        else:
            yield from _cut(iter_parquet_tables(self.path, rows), rows)

    def content_hash(self) -> str:
        """:func:`~sdvm_hf.record.content_hash` of the file's checked table."""
        if self.table is not None:
            return content_hash(self.table)
        return content_hash_of(self.slices(SLICE_ROWS))


def open_input(path: Path) -> Input:
    """The sample file at ``path``, its rows checked as they are read.

    A Parquet file is read batch by batch; any other (and one that cannot be read as a sample
    file: ``read_samples`` then says why) is read whole.
    """
    if format_of(path) == "parquet":
        try:
            schema = pq.read_schema(path)
            count = pq.read_metadata(path).num_rows
        except (pa.ArrowInvalid, OSError):
            pass  # read_samples names the file and what is wrong with it
        else:
            if EXTRA_MISSING not in schema.names:
                return Input(path, count)
    table = read_samples(path).table
    return Input(path, table.num_rows, table)


def _cut(tables: Iterator[pa.Table] | list[pa.Table], rows: int) -> Iterator[pa.Table]:
    """``tables`` one after another, cut again into tables of ``rows`` rows each."""
    held: pa.Table | None = None
    given = False
    for table in tables:
        held = table if held is None else pa.concat_tables([held, table])
        while held.num_rows >= rows:
            yield held.slice(0, rows)
            given = True
            held = held.slice(rows)
    if held is not None and (held.num_rows or not given):
        yield held


def originals_of(
    part: Part, current: Input, policy: Policy, annotate: bool
) -> tuple[bool, Input | None, str]:
    """Whether the file is its own original (a convert output); else its original rows.

    The original rows are those before the stages, or ``None`` when they are not found; then
    a note says the counts cannot tell the changed rows (a file with stages). A record from
    before the stages kept a content hash of what they read is trusted, and a note says so.
    """
    original_path = None if part.record is None else part.record.convert_output(part.path)
    if original_path is not None and original_path.resolve() == part.path.resolve():
        return True, None, ""
    staged = part.record is not None and len(part.record.stages) > 1
    unknown = (
        f"{part.name}: the rows its stages changed are not known (the convert output they "
        "started from is gone or was made again): its rows are published as the file holds "
        "them, all counted as kept"
        if staged
        else ""
    )
    if original_path is None:
        if policy.publishes_original or annotate:
            raise ExportError(
                f"{part.path}: the original rows are not found (its record names no convert "
                "output that still exists), so the original policy and --annotate cannot run"
            )
        return False, None, unknown
    originals = open_input(original_path)
    read = part.record.stages[1].input_hash if part.record and len(part.record.stages) > 1 else None
    if read is not None and originals.content_hash() != read:
        if not (policy.publishes_original or annotate):
            return False, None, unknown  # neither published nor compared: said, not hidden
        raise ExportError(
            f"{original_path} is not the file the stages of {part.path} started from (its "
            "content hash differs from what the first stage read: it was made again or "
            "edited since), so its rows cannot be published or compared as the originals; "
            "export with the replace or drop policy and no --annotate, or run the stages again"
        )
    if originals.count != current.count:
        raise ExportError(
            f"{part.path} has {current.count} rows, its original {original_path} "
            f"{originals.count}: a stage must keep every row"
        )
    unchecked = (
        f"{part.name}: its record (from an older sdvm_hf) holds no content hash of the rows its "
        f"first stage read, so {original_path.name}, the convert output they started from, "
        "could not be checked and was taken as found: run the stages again to have it checked"
        if staged and read is None
        else ""
    )
    return False, originals, unchecked
