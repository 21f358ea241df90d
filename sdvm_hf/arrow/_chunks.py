"""Tables of any size in pieces under Arrow's 2 GiB of 32-bit offsets.

A string or list column holds at most 2 GiB in one array; kernels that concatenate a
column's chunks first (``take``, ``combine_chunks``, flattening a list) overflow past that,
as a 4M-row HellaSwag table did. The checks, ``take`` and the table form of a mapping work
through these pieces instead, and their output schema is the same as in one piece.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from sdvm_hf.arrow._values import empty_table, scalar

CHUNK_BYTES = 1 << 30
"""The most bytes a table is processed in at once: well under Arrow's 2 GiB of 32-bit
offsets, so that no kernel that concatenates a column (``take``, ``combine_chunks``,
flattening a list) overflows, however many rows the table has."""

BATCH_BYTES = 32 << 20
"""About the most bytes a stream reads and converts at a time, however few rows that is:
16,384 HellaSwag rows take 18 MB, so only wide rows (long texts) make batches of fewer rows
than a stream's row count. A batch holds whole rows: a row wider than this is a batch."""


def row_chunks(table: pa.Table, limit: int | None = None) -> Iterator[tuple[int, pa.Table]]:
    """``(first row, slice)`` covering ``table`` in order, each slice about ``limit`` bytes.

    The slices share the table's memory. Rows are assumed to be of similar size; ``limit``
    (default :data:`CHUNK_BYTES`) is half of what would overflow, to leave room for rows
    larger than the average.
    """
    limit = CHUNK_BYTES if limit is None else limit
    rows = table.num_rows
    size = table.nbytes if rows else 0
    step = rows if size <= limit else max(1, rows * limit // size)
    for start in range(0, max(rows, 1), max(step, 1)):
        yield start, table.slice(start, step)


def bounded(
    batches: Iterator[tuple[int, pa.Table]], limit: int | None = None
) -> Iterator[tuple[int, pa.Table]]:
    """``(first row, batch)`` pairs, a batch of more than ``limit`` bytes cut into slices.

    ``limit`` defaults to :data:`BATCH_BYTES`. The slices (:func:`row_chunks`) share the
    batch's memory; the first rows are the split's, as the batches' were. A batch within the
    limit comes through as it is, so the cost is one ``nbytes`` a batch.
    """
    limit = BATCH_BYTES if limit is None else limit
    for first, batch in batches:
        if batch.nbytes <= limit:
            yield first, batch
            continue
        for start, part in row_chunks(batch, limit):
            yield first + start, part


def take(
    table: pa.Table, positions: np.ndarray, limit: int | None = None, size: int | None = None
) -> pa.Table:
    """The rows of ``table`` at ``positions``, in that order, at any size.

    Arrow's ``take`` concatenates a column's chunks first and overflows past 2 GiB of string
    data; here each piece of about ``limit`` bytes (default :data:`CHUNK_BYTES`) is taken
    chunk by chunk and put back in order. ``size`` is ``table.nbytes`` when the caller knows
    it (measuring it costs as much as taking a batch of rows).
    """
    positions = np.asarray(positions, np.int64)
    limit = CHUNK_BYTES if limit is None else limit
    size = table.nbytes if size is None else size
    if size <= limit or not len(positions):
        return table.take(pa.array(positions, pa.int64()))
    batches = table.to_batches()
    starts = np.cumsum([0, *(batch.num_rows for batch in batches)])
    step = max(1, len(positions) * limit // size)
    pieces = [
        _by_chunk(table.schema, batches, starts, positions[first : first + step])
        for first in range(0, len(positions), step)
    ]
    return pa.concat_tables(pieces)


def take_by_chunk(table: pa.Table, positions: np.ndarray) -> pa.Table:
    """The rows of ``table`` at ``positions``, in that order, copied chunk by chunk.

    For a few rows of a table of many chunks: Arrow's ``take`` of a table concatenates each
    column's chunks first, a copy of the whole table (two rows of 100 MB in ten chunks:
    0.25 s).
    """
    batches = table.to_batches()
    starts = np.cumsum([0, *(batch.num_rows for batch in batches)])
    return _by_chunk(table.schema, batches, starts, np.asarray(positions, np.int64))


def _by_chunk(
    schema: pa.Schema, batches: list[pa.RecordBatch], starts: np.ndarray, positions: np.ndarray
) -> pa.Table:
    """The rows at ``positions`` of the batches that start at ``starts``, in that order."""
    if not len(positions):
        return empty_table(schema)
    chunk = np.searchsorted(starts, positions, side="right") - 1
    order = np.argsort(chunk, kind="stable")
    ordered = positions[order]
    owners, firsts = np.unique(chunk[order], return_index=True)
    ends = [*firsts[1:], len(ordered)]
    taken = [
        batches[owner].take(pa.array(ordered[first:end] - starts[owner]))
        for owner, first, end in zip(owners, firsts, ends, strict=True)
    ]
    merged = pa.Table.from_batches(taken, schema=schema)
    if np.array_equal(order, np.arange(len(positions))):  # already in the chunks' order
        return merged
    return merged.combine_chunks().take(pa.array(np.argsort(order), pa.int64()))


def constant(value: str | None, n: int) -> pa.Array:
    """``n`` copies of ``value`` (``None``: nulls) as a string array, sharing its memory.

    Arrays are immutable, so every batch takes a slice of one array per value, grown to the
    next power of two, instead of filling fresh memory: a CSV file's blocks, each of its own
    row count, filled 1M MMLU rows' constant columns (the subject a file's name gives, the
    sample's kind and style, its empty blocks) with 70 MB of fresh memory. Past
    :data:`_SHARED_ROWS` a value is repeated afresh (``pa.repeat``, ten times ``fill_null``'s
    speed). pyarrow pickles a slice with its whole buffers: a column so pickles at most twice
    its rows.
    """
    if n > _SHARED_ROWS:
        return _repeat(value, n)
    return _shared(value, 1 << max(n - 1, 0).bit_length()).slice(0, n)


_SHARED_ROWS = 1 << 17


def _repeat(value: str | None, n: int) -> pa.Array:
    return pa.repeat(scalar(value, pa.string()), n)


_shared = functools.lru_cache(maxsize=16)(_repeat)
