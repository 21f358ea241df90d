"""Reading a Parquet file batch by batch in flat memory: for sources and sample files alike."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf.arrow import _chunks
from sdvm_hf.arrow._values import empty_table

WRITE_OPTIONS: dict[str, object] = {"dictionary_pagesize_limit": 4 << 20}
"""How sample tables are written to Parquet: pyarrow's defaults, but a 4 MiB dictionary budget
a column chunk, not 1 MiB.

A sample file keeps every choice in one list column, where a source often has a column per
choice (MMLU's A to D), each with a budget of its own: with one column's budget, the values
four columns held in their dictionaries overflowed it, and the column was written plain,
hashed for nothing. Choices that repeat (True/False, numbers, a split with repeated rows) so
stay dictionary-encoded as in the source. On the realdata splits, where choices rarely
repeat, files are within 1% of the 1 MiB budget's and take as long to write; on the 1M-row MMLU
CSV of ``benchmarks/layouts.py`` (every test line 75 times), the write took 0.4 s, not 1.5 s,
and the file is 14 MiB, not 238."""


def batch_rows(
    metadata: pq.FileMetaData,
    rows: int,
    limit: int | None = None,
    groups: Sequence[int] | None = None,
) -> int:
    """``rows``, or fewer: as many as hold about ``limit`` bytes of the widest row group.

    ``limit`` defaults to :data:`~sdvm_hf.arrow._chunks.BATCH_BYTES`; ``groups`` are the row
    groups to be read (default: all). A row's bytes are its row group's uncompressed size over
    its rows (from the footer, read once): a file of long texts is read a few hundred rows at a
    time, not thousands. Parquet's size is the encoded one, below Arrow's for repeated values
    (dictionaries): streams also cut what comes out bigger
    (:func:`~sdvm_hf.arrow._chunks.bounded`).
    """
    limit = _chunks.BATCH_BYTES if limit is None else limit
    widest = 0.0
    for index in range(metadata.num_row_groups) if groups is None else groups:
        group = metadata.row_group(index)
        if group.num_rows:
            widest = max(widest, group.total_byte_size / group.num_rows)
    return max(1, min(rows, int(limit // widest))) if widest else rows


def parquet_file_batches(
    file: str | os.PathLike[str],
    batch_size: int,
    check: Callable[[pa.Schema], None] | None = None,
) -> Iterator[pa.Table]:
    """A Parquet file batch by batch, holding one batch (an empty file as one empty table).

    A batch has at most ``batch_size`` rows, and fewer when the rows are wide
    (:func:`batch_rows`), so that it holds about :data:`~sdvm_hf.arrow._chunks.BATCH_BYTES`.

    ``check`` sees the schema before any batch is read. Errors are pyarrow's (an
    ``ArrowException`` or ``OSError``): each caller names the file in its own terms.
    """
    # Not memory-mapped: mapped pages stay resident, so the whole file would count.
    # pre_buffer (pyarrow's default) keeps every row group it read alive until the
    # file is closed: a stream over 1M rows held 0.6 GB of Arrow buffers at its end
    parquet = pq.ParquetFile(file, pre_buffer=False)
    if check is not None:
        check(parquet.schema_arrow)
    if parquet.metadata.num_rows == 0:  # no batch, but the schema: what the columns hold
        yield empty_table(parquet.schema_arrow)
    rows = batch_rows(parquet.metadata, batch_size)
    for batch in parquet.iter_batches(batch_size=rows):
        yield pa.Table.from_batches([batch])
