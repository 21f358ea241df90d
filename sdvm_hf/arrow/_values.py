"""Arrow arrays and scalars from numpy and Python values, without importing pandas.

``pa.array`` and ``pa.scalar`` first ask whether their input is a pandas object, and the first
such question in a process imports pandas when it is installed (it is: ``datasets`` needs
it). That import took 0.16 s and 40 MB of a CSV load that otherwise never needs pandas
(1M MMLU rows: 1.38x pyarrow's own read + write with it, 1.14x without). So the conversion
path builds its arrays from buffers here, and passes Arrow scalars, not Python values, to
``pyarrow.compute`` (which would make them with ``pa.scalar``).
``tests/test_values.py`` holds a clean CSV load and its Parquet write to importing nothing
of pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "FALSE",
    "TRUE",
    "empty_table",
    "from_numpy",
    "integers",
    "rows_where",
    "scalar",
    "strings",
    "to_numpy",
]


def from_numpy(
    values: np.ndarray[Any, Any] | Sequence[int] | Sequence[float] | Sequence[bool],
    type: pa.DataType | None = None,
    mask: np.ndarray[Any, Any] | None = None,
) -> pa.Array:
    """``pa.array(values, type, mask=mask)`` for numbers and booleans; ``mask`` marks nulls.

    >>> from_numpy(np.array([1, 2, 3]), pa.int32(), mask=np.array([False, True, False])).to_pylist()
    [1, None, 3]
    >>> from_numpy([True, False]).to_pylist()
    [True, False]
    """
    values = np.asarray(values)
    if values.ndim != 1 or values.dtype.kind not in "biuf":
        raise TypeError(
            f"expected one dimension of numbers or booleans, got {values.dtype} "
            f"in {values.ndim} dimensions"
        )
    values = np.ascontiguousarray(values, values.dtype.newbyteorder("="))  # Arrow's order
    n = len(values)
    if mask is not None and len(mask) != n:
        raise ValueError(f"a mask of {len(mask)} flags for {n} values")
    validity = None if mask is None or not mask.any() else _bits(~np.asarray(mask, bool))
    if values.dtype == bool:
        made = pa.Array.from_buffers(pa.bool_(), n, [validity, _bits(values)])
    elif n == 0 and type is not None:
        return pa.nulls(0, type)
    else:
        made = pa.Array.from_buffers(
            pa.from_numpy_dtype(values.dtype), n, [validity, pa.py_buffer(values)]
        )
    return made if type is None or made.type == type else made.cast(type)


def integers(values: Sequence[int | None]) -> pa.Array:
    """``pa.array(values, pa.int64())`` for integers and ``None``.

    >>> integers([3, None, 0]).to_pylist()
    [3, None, 0]
    """
    nulls = np.array([value is None for value in values], bool)
    numbers = np.array([0 if value is None else value for value in values], np.int64)
    return from_numpy(numbers, mask=nulls)


def strings(values: Sequence[str | None]) -> pa.Array:
    """``pa.array(values, pa.string())``.

    >>> strings(["A", None, "é"]).to_pylist()
    ['A', None, 'é']
    """
    encoded = [b"" if value is None else value.encode() for value in values]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(value) for value in encoded], out=offsets[1:])
    nulls = np.array([value is None for value in values], bool)
    validity = _bits(~nulls) if nulls.any() else None
    buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.large_string(), len(encoded), buffers).cast(pa.string())


def scalar(value: str | float | bool | None, type: pa.DataType) -> pa.Scalar:
    """``pa.scalar(value, type)``.

    >>> scalar(0, pa.int64()).as_py(), scalar("A", pa.string()).as_py(), scalar(None, pa.int8())
    (0, 'A', <pyarrow.Int8Scalar: None>)
    """
    if value is None:
        return pa.nulls(1, type)[0]
    if isinstance(value, str):
        return strings([value]).cast(type)[0]
    return from_numpy(np.array([value]), type)[0]


def empty_table(schema: pa.Schema) -> pa.Table:
    """``schema.empty_table()``.

    >>> empty_table(pa.schema([("a", pa.list_(pa.string()))])).schema
    a: list<item: string>
      child 0, item: string
    """
    return pa.Table.from_batches([], schema=schema)


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray[Any, Any]:
    """``np.asarray(values)`` for numbers and booleans; a copy only where it must be.

    >>> to_numpy(pa.chunked_array([[1, 2], [3]])).tolist(), to_numpy(pa.array([True, False])[1:])
    ([1, 2, 3], array([False]))
    """
    if isinstance(values, pa.ChunkedArray):
        parts = [to_numpy(chunk) for chunk in values.chunks]
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.asarray(values)
    dtype = _NUMPY.get(values.type)
    if values.null_count or (dtype is None and values.type != pa.bool_()):
        return np.asarray(values)  # nulls, or other types: pyarrow's own conversion
    data, n, offset = values.buffers()[1], len(values), values.offset
    if dtype is None:  # booleans: one bit each
        first, skip = divmod(offset, 8)  # only the bytes that hold these bits
        bits = np.frombuffer(data, np.uint8, -(-(skip + n) // 8), first) if n else _NO_BITS
        return np.unpackbits(bits, count=skip + n, bitorder="little")[skip:].view(bool)
    return np.frombuffer(data, dtype, count=n, offset=offset * dtype.itemsize)


def rows_where(mask: pa.Array | pa.ChunkedArray, null: bool = False) -> np.ndarray[Any, Any]:
    """The rows (int64) where ``mask`` is true; a null row counts as ``null``.

    >>> mask = pa.array([True, None, False, True])
    >>> rows_where(mask).tolist(), rows_where(mask, null=True).tolist()
    ([0, 3], [0, 1, 3])
    """
    filled = pc.fill_null(mask, TRUE if null else FALSE)
    return to_numpy(pc.indices_nonzero(filled)).astype(np.int64)


_NO_BITS = np.zeros(0, np.uint8)
_NUMBERS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
_NUMPY = {pa.from_numpy_dtype(t): np.dtype(t) for t in [*_NUMBERS, np.float32, np.float64]}


def _bits(flags: np.ndarray[Any, Any]) -> pa.Buffer:
    return pa.py_buffer(np.packbits(np.asarray(flags, bool), bitorder="little"))


TRUE = from_numpy(np.array([True]))[0]
FALSE = from_numpy(np.array([False]))[0]
"""Arrow's booleans, for ``pyarrow.compute`` (``pc.fill_null(mask, FALSE)``)."""
