"""Parts of a split for parallel readers: ``DataLoader`` workers and distributed ranks.

A source has *shards*, parts that can be read on their own: the row groups of local Parquet
files (read alone, with their row numbers from the files' metadata), the files of other
local formats (each file is converted alone; the ones before it are read to number its
rows), or the whole split (the Hub). A :class:`Part` names which shards one reader reads and,
of the batches it reads, which it converts: with fewer shards than readers, every reader
reads the shards but converts only every ``count``-th batch, so no row is converted twice.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf.arrow import batch_rows
from sdvm_hf.sources._local import LocalRows
from sdvm_hf.sources.source import Source, kind_of, reader_of, stream_batches

__all__ = ["WHOLE", "Part", "plan", "shard_batches", "shard_count"]


@dataclass(frozen=True)
class Part:
    """Which rows of a split one reader takes: some shards, and every ``count``-th batch."""

    shards: tuple[int, ...] | None = None
    """The source's shards read, in order (:func:`shard_count`); ``None``: the whole split."""
    index: int = 0
    """Of the batches read, those numbered ``index`` modulo :attr:`count` are converted."""
    count: int = 1

    def keeps(self, number: int) -> bool:
        """Whether the batch numbered ``number`` (from 0, in reading order) is this part's."""
        return number % self.count == self.index


WHOLE = Part()
"""The whole split, every batch."""


def plan(shards: int, index: int, count: int) -> Part:
    """Reader ``index`` of ``count``: whole shards when there are enough, else every count-th batch.

    >>> plan(5, 1, 2), plan(1, 1, 2).count
    (Part(shards=(1, 3), index=0, count=1), 2)
    """
    if not 0 <= index < count:
        raise ValueError(f"reader {index} of {count}: expected 0 <= index < count")
    if count == 1:
        return WHOLE
    if shards >= count:
        return Part(tuple(range(index, shards, count)))
    return Part(None, index, count)


@dataclass(frozen=True)
class _Piece:
    """Rows of one Parquet row group that belong to the split (or its slice)."""

    file: str
    group: int
    first_row: int
    """The split's number of the first row kept."""
    skip: int
    """Rows of the group before the first one kept (a slice's start)."""
    rows: int


def _pieces(source: Source) -> list[_Piece] | None:
    """The row groups of a local Parquet source within its slice; ``None`` for other sources."""
    files = source.files
    if files is None or kind_of(files) != "parquet":
        return None
    groups: list[tuple[str, int, int]] = []
    for file in files:
        try:
            metadata = pq.read_metadata(file)
        except (pa.ArrowException, OSError) as error:
            raise ValueError(f"{file}: {error}") from None
        groups += [
            (file, g, metadata.row_group(g).num_rows) for g in range(metadata.num_row_groups)
        ]
    start, stop = source.spec.bounds(sum(rows for _, _, rows in groups))
    pieces, row = [], 0
    for file, group, rows in groups:
        low, high = max(start, row), min(row + rows, stop if stop is not None else row + rows)
        if low < high:
            pieces.append(_Piece(file, group, low, low - row, high - low))
        row += rows
    return pieces or None  # no rows: the plain read gives the empty table with its columns


def shard_count(source: Source) -> int:
    """How many shards the source has: Parquet row groups, other local files, else 1."""
    pieces = _pieces(source)
    if pieces is not None:
        return len(pieces)
    if source.files is not None and not source.spec.sliced:
        return len(source.files)
    return 1


def shard_batches(
    source: Source, batch_size: int, shards: Sequence[int] | None
) -> Iterator[tuple[int, pa.Table]]:
    """The batches of ``shards`` (``None``: all), each with the split's number of its first row."""
    pieces = _pieces(source) if shards is not None else None
    if pieces is not None:
        assert shards is not None
        for number in shards:
            yield from _piece_batches(pieces[number], batch_size)
    elif shards is None or shard_count(source) == 1:
        yield from stream_batches(source, batch_size)
    else:
        yield from _file_batches(source, batch_size, set(shards))


def _piece_batches(piece: _Piece, batch_size: int) -> Iterator[tuple[int, pa.Table]]:
    try:
        parquet = pq.ParquetFile(piece.file, pre_buffer=False)
        offset = 0  # in the row group
        # fewer rows when they are wide
        rows = batch_rows(parquet.metadata, batch_size, groups=[piece.group])
        for batch in parquet.iter_batches(batch_size=rows, row_groups=[piece.group]):
            low = max(piece.skip - offset, 0)
            high = min(piece.skip + piece.rows - offset, batch.num_rows)
            if low < high:
                table = pa.Table.from_batches([batch.slice(low, high - low)])
                yield piece.first_row + offset + low - piece.skip, table
            offset += batch.num_rows
    except (pa.ArrowException, OSError) as error:
        raise ValueError(f"{piece.file}: {error}") from None


def _file_batches(
    source: Source, batch_size: int, wanted: set[int]
) -> Iterator[tuple[int, pa.Table]]:
    """The batches of the wanted files (unsliced), the files before them read to count rows."""
    assert source.files is not None
    rows = reader_of(source)
    assert isinstance(rows, LocalRows)
    row = 0
    last = max(wanted)
    for number, file in enumerate(source.files[: last + 1]):
        one = LocalRows([file], rows.kind, rows.csv)
        for batch in one.batches(batch_size):
            if number in wanted and batch.num_rows:
                yield row, batch
            row += batch.num_rows
