"""The size a card gives a split: its table's Arrow bytes in one layout, however it was built.

``Table.nbytes`` counts the buffers a table happens to hold: a column read in place from the
sample file has no validity bitmap where a copy of it has one, and each chunk rounds its
bitmaps up to a byte. The card's ``num_bytes`` is the ``nbytes`` of the table as one chunk
laid out as Arrow's ``take`` (and so a table's ``filter``) lays it out: a validity bitmap on
every string, binary and list array, on a fixed-width array only where it holds a null
(``nbytes`` counts an offset per row, and a struct's children but not its own bitmap). That
is what an export that copied its rows into place reported; counting it from the columns'
lengths and null counts gives the same number without the copy.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ANNOTATIONS", "split_bytes", "taken_bytes"]

ANNOTATIONS = ("sdvm_status", "sdvm_failing", "original_")
"""The columns ``--annotate`` adds (``original_`` a prefix), built in one chunk as written."""


def split_bytes(table: pa.Table, *, whole: bool) -> int:
    """The card's ``num_bytes`` of a split's ``table``.

    The published columns count as :func:`taken_bytes` gives them; so does every column of a
    configuration cut from the whole table (MMLU's subjects, a ``filter`` of it). The
    annotations of the ``whole`` table are built as they are written, and count as they are.
    """
    return sum(
        int(column.nbytes) if whole and name.startswith(ANNOTATIONS) else taken_bytes(column)
        for name, column in zip(table.column_names, table.columns, strict=True)
    )


def taken_bytes(column: pa.ChunkedArray) -> int:
    """``column.take(every row)``'s ``nbytes`` (one chunk), counted rather than copied."""
    size = _size(column.type, list(column.chunks))
    if size is None:  # a type not counted here: copy it
        return int(column.take(pa.array(np.arange(len(column), dtype=np.int64))).nbytes)
    return size


def _size(dtype: pa.DataType, chunks: list[pa.Array]) -> int | None:
    """The bytes of ``chunks`` as one array laid out as ``take`` lays it out; ``None``: unknown."""
    rows = sum(len(chunk) for chunk in chunks)
    bitmap = -(-rows // 8)
    nulls = sum(chunk.null_count for chunk in chunks)
    if pa.types.is_null(dtype):
        return 0
    if pa.types.is_boolean(dtype):
        return (bitmap if nulls else 0) + bitmap
    if pa.types.is_integer(dtype) or pa.types.is_floating(dtype):
        return (bitmap if nulls else 0) + rows * int(dtype.bit_width) // 8
    if dtype in (pa.string(), pa.binary(), pa.large_string(), pa.large_binary()):
        width = 8 if dtype in (pa.large_string(), pa.large_binary()) else 4
        data = sum(int(pc.sum(pc.binary_length(chunk)).as_py() or 0) for chunk in chunks)
        return bitmap + rows * width + data
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        width = 8 if pa.types.is_large_list(dtype) else 4
        values = _size(dtype.value_type, [chunk.flatten() for chunk in chunks])
        return None if values is None else bitmap + rows * width + values
    if pa.types.is_struct(dtype):
        total = 0  # nbytes counts a struct's children, not its own bitmap
        for index in range(dtype.num_fields):
            child = _size(dtype.field(index).type, [chunk.field(index) for chunk in chunks])
            if child is None:
                return None
            total += child
        return total
    return None
