"""Source cells to sample values, vectorised: every function returns values and problems.

A cell that cannot become its sample value (a cast that would fail or change it, a choice
that is not text) is never an exception here: its value is null and the cell is reported as
a :class:`~sdvm_hf.errors.Problem` whose ``row`` is the cell's position in the batch. The
mapping turns positions into the source's row numbers and the problems into rejects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.arrow import Found, from_numpy, rows_where
from sdvm_hf.arrow.schema import STRING_TYPES
from sdvm_hf.errors import PathPart

_CAST_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)


def one_array(column: pa.ChunkedArray) -> pa.Array:
    """A column as one array: its only chunk as it is (no copy), else its chunks combined.

    The loaders' batches are chunk-aligned slices, one chunk a column, so the pass copies
    no column that it only reads or casts to its own type.
    """
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def same_chunks(columns: Sequence[pa.ChunkedArray]) -> bool:
    """Whether the columns are cut into chunks at the same rows (a table's columns are, as read)."""
    lengths = [[len(chunk) for chunk in column.chunks] for column in columns]
    return all(these == lengths[0] for these in lengths[1:])


def is_text(dtype: pa.DataType) -> bool:
    """Whether ``dtype`` holds text (or only nulls)."""
    return dtype in STRING_TYPES or pa.types.is_null(dtype)


# -- casts ---------------------------------------------------------------------------------


def _suspects(array: pa.Array, dtype: pa.DataType) -> pa.Array | None:
    """Cells a cast to ``dtype`` would refuse, found with kernels where the rule is known."""
    if not pa.types.is_integer(dtype):
        return None
    info = np.iinfo(dtype.to_pandas_dtype())
    if is_text(array.type):
        digits = pc.match_substring_regex(array, r"^[+-]?[0-9]{1,18}$")
        number = pc.if_else(digits, array, None).cast(pa.int64())
    elif pa.types.is_floating(array.type):
        integral = pc.and_(pc.is_finite(array), pc.equal(pc.floor(array), array))
        inside = pc.and_(pc.greater_equal(array, -(2.0**63)), pc.less(array, 2.0**63))
        number = pc.if_else(pc.and_(integral, inside), array, None).cast(pa.int64())
    elif pa.types.is_integer(array.type):
        number = pc.if_else(pc.less_equal(array, 2**63 - 1), array, None).cast(pa.int64())
    else:
        return None
    fits = pc.and_(pc.greater_equal(number, int(info.min)), pc.less_equal(number, int(info.max)))
    return pc.and_(pc.is_valid(array), pc.invert(pc.fill_null(fits, False)))


def _bisect(array: pa.Array, dtype: pa.DataType, offset: int, bad: list[int]) -> None:
    """Find the cells a cast refuses by halving the part that fails (rare: unknown rules)."""
    try:
        array.cast(dtype)
    except _CAST_ERRORS:
        if len(array) == 1:
            bad.append(offset)
            return
        half = len(array) // 2
        _bisect(array.slice(0, half), dtype, offset, bad)
        _bisect(array.slice(half), dtype, offset + half, bad)


def safe_cast(
    array: pa.Array, dtype: pa.DataType, path: tuple[PathPart, ...]
) -> tuple[pa.Array, list[Found]]:
    """``array`` cast to ``dtype``; a cell the cast refuses is null and a problem."""
    if array.type == dtype:
        return array, []
    try:
        return array.cast(dtype), []
    except _CAST_ERRORS:
        pass
    suspects = _suspects(array, dtype)
    bad = rows_where(suspects) if suspects is not None else np.zeros(0, np.int64)
    mask = np.zeros(len(array), dtype=bool)
    mask[bad] = True
    rest = pc.if_else(from_numpy(mask), pa.nulls(len(array), array.type), array)
    more: list[int] = []
    _bisect(rest, dtype, 0, more)
    if more:
        mask[more] = True
        rest = pc.if_else(from_numpy(mask), pa.nulls(len(array), array.type), array)
    bad = np.flatnonzero(mask)
    expected = f"a value that fits {dtype}"
    return rest.cast(dtype), [Found.at(array, bad, path, expected, kind="not_castable")]


# -- choices -------------------------------------------------------------------------------

_CHOICES = pa.list_(pa.string())


def choices_from_list(
    column: pa.ChunkedArray, name: str
) -> tuple[pa.Array | pa.ChunkedArray, list[Found]]:
    """A list column as ``list<string>``; a row holding anything but text is a problem.

    A column already of that layout keeps its chunks (a file of 1,000-row groups is not
    copied into bigger ones); any other is made one array first.
    """
    if column.type.value_type == pa.string() and pa.types.is_list(column.type):
        # the same layout (only the field name may differ)
        return pa.chunked_array([chunk.view(_CHOICES) for chunk in column.chunks], _CHOICES), []
    array = one_array(column)
    if is_text(array.type.value_type):
        return array.cast(_CHOICES), []
    lengths = pc.fill_null(pc.list_value_length(array), 0)
    bad = rows_where(pc.greater(lengths, 0))
    offsets = array.offsets
    if offsets[0].as_py() != 0:
        offsets = pc.subtract(offsets, offsets[0])
    values = pa.nulls(int(offsets[-1].as_py()), pa.string())
    out = pa.ListArray.from_arrays(offsets, values, mask=array.is_null())
    return out, [Found.at(array, bad, (name,), "a list of strings", kind="not_text")]


def choices_from_columns(
    columns: Sequence[pa.Array], names: Sequence[str]
) -> tuple[pa.Array, list[Found]]:
    """One choice per column, row by row; a cell holding anything but text is a problem."""
    n, k = len(columns[0]), len(columns)
    texts: list[pa.Array] = []
    problems: list[Found] = []
    for array, name in zip(columns, names, strict=True):
        if is_text(array.type):
            texts.append(array.cast(pa.string()))
            continue
        rows = rows_where(array.is_valid())
        problems.append(Found.at(array, rows, (name,), "a string", kind="not_text"))
        texts.append(pa.nulls(n, pa.string()))
    values = pa.concat_arrays(texts)
    # row-major order: row i's choices are values[i], values[n + i], ..., values[(k-1)n + i]
    order = (np.arange(n)[:, None] + np.arange(k)[None, :] * n).ravel()
    offsets = from_numpy(np.arange(0, n * k + 1, k, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, values.take(from_numpy(order))), problems
