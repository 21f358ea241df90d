"""A content hash of a table's values: column by column, buffer by buffer, whatever its chunks.

The stages hash their input with it (:func:`sdvm_hf.record.content_hash`) so that a rerun on
the same rows sends nothing: it must be fast on a whole file (no Python object per row) and
give the same hash for the same values however the table is chunked or sliced.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_OFFSETS = {
    pa.string(): np.int32,
    pa.binary(): np.int32,
    pa.large_string(): np.int64,
    pa.large_binary(): np.int64,
}


class _Column:
    """The hashes of one column: one stream per part (validity, lengths, values) of each level."""

    def __init__(self) -> None:
        self.streams: dict[str, Any] = {}

    def feed(self, name: str, data: bytes | memoryview) -> None:
        stream = self.streams.get(name)
        if stream is None:
            stream = self.streams[name] = hashlib.sha256()
        stream.update(data)

    def digest(self) -> str:
        return json.dumps({name: s.hexdigest() for name, s in sorted(self.streams.items())})


def _valid(array: pa.Array) -> np.ndarray:
    if array.null_count == 0:
        return np.ones(len(array), dtype=np.bool_)
    return np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)


def _feed(column: _Column, path: str, array: pa.Array) -> None:
    """Feed ``array``'s values into the streams under ``path`` (recursing into nested types)."""
    kind = array.type
    valid = _valid(array)
    column.feed(path + "/valid", valid.tobytes())
    if pa.types.is_dictionary(kind):
        _feed(column, path, array.dictionary_decode())
    elif pa.types.is_string_view(kind) or pa.types.is_binary_view(kind):
        text = pa.types.is_string_view(kind)
        _feed(column, path, array.cast(pa.large_string() if text else pa.large_binary()))
    elif kind in _OFFSETS:
        if array.null_count:  # a null may hold bytes: only the valid values count
            array = array.fill_null(pa.scalar(b"" if "binary" in str(kind) else "", kind))
        offsets = np.frombuffer(array.buffers()[1], dtype=_OFFSETS[kind])
        offsets = offsets[array.offset : array.offset + len(array) + 1]
        column.feed(path + "/lengths", np.diff(offsets).astype(np.int64).tobytes())
        data = array.buffers()[2]
        if data is not None and len(offsets):
            column.feed(path + "/values", memoryview(data)[offsets[0] : offsets[-1]])
    elif isinstance(kind, pa.ListType | pa.LargeListType | pa.FixedSizeListType):
        lengths = pc.list_value_length(array).fill_null(0).to_numpy(zero_copy_only=False)
        column.feed(path + "/lengths", np.asarray(lengths, dtype=np.int64).tobytes())
        _feed(column, path + "[]", array.flatten())
    elif pa.types.is_struct(kind):
        for index, child in enumerate(array.flatten()):
            _feed(column, f"{path}.{kind.field(index).name}", child)
    elif pa.types.is_boolean(kind):
        values = array.fill_null(False).to_numpy(zero_copy_only=False)
        column.feed(path + "/values", np.asarray(values, dtype=np.bool_).tobytes())
    elif pa.types.is_null(kind):
        pass
    elif _width(kind) and array.buffers()[1] is not None:  # fixed width
        width = _width(kind)
        raw = np.frombuffer(array.buffers()[1], dtype=np.uint8)
        rows = raw[array.offset * width : (array.offset + len(array)) * width].reshape(-1, width)
        column.feed(path + "/values", (rows * valid[:, None]).tobytes())
    else:  # a type without a plain buffer of values (a union): its values as JSON
        column.feed(path + "/values", json.dumps(array.to_pylist(), default=repr).encode())


def _width(kind: pa.DataType) -> int:
    """Bytes per value of a fixed-width type; 0 for any other."""
    try:
        bits = int(kind.bit_width)
    except ValueError:
        return 0
    return bits // 8 if bits % 8 == 0 else 0


def _type_text(kind: pa.DataType) -> str:
    """A type's text without its lists' item names (Parquet reads ``item`` back as ``element``)."""
    if isinstance(kind, pa.ListType | pa.LargeListType):
        return f"{type(kind).__name__}<{_type_text(kind.value_type)}>"
    if isinstance(kind, pa.FixedSizeListType):
        return f"list<{_type_text(kind.value_type)}>[{kind.list_size}]"
    if isinstance(kind, pa.StructType):
        fields = (kind.field(i) for i in range(kind.num_fields))
        return "struct<" + ", ".join(f"{f.name!r}: {_type_text(f.type)}" for f in fields) + ">"
    return str(kind)


class TableHasher:
    """:func:`table_hash` of tables fed one after another, as if they were one (a file's batches).

    Each table must have the first one's column names and types.
    """

    def __init__(self) -> None:
        self.rows = 0
        self.names: list[str] | None = None
        self.types: list[str] = []
        self.columns: list[_Column] = []

    def update(self, table: pa.Table) -> None:
        """Feed ``table``'s rows, after those fed before."""
        if self.names is None:
            self.names = list(table.column_names)
            self.types = [_type_text(column.type) for column in table.columns]
            self.columns = [_Column() for _ in table.columns]
        elif table.column_names != self.names:
            raise ValueError(f"columns {table.column_names} after {self.names}")
        self.rows += table.num_rows
        for streams, column in zip(self.columns, table.columns, strict=True):
            for chunk in column.chunks:
                _feed(streams, "", chunk)

    def hexdigest(self) -> str:
        """The hash of every row fed, in order."""
        top = hashlib.sha256(f"{self.rows}\n".encode())
        for name, kind, streams in zip(self.names or [], self.types, self.columns, strict=True):
            top.update(f"{name!r}\n{kind}\n{streams.digest()}\n".encode())
        return top.hexdigest()


def table_hash(table: pa.Table) -> str:
    """A SHA-256 of ``table``'s column names, types, row count and every value, in order."""
    hasher = TableHasher()
    hasher.update(table)
    return hasher.hexdigest()
