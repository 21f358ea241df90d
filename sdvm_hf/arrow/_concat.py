"""Sample tables one after another, with their extra structs unified exactly.

Two tables whose ``extra`` structs differ become one whose struct holds the union of the
fields; a row gains no key its sample did not have: the fields its table lacked are listed in
its ``extra_missing`` cell (see :mod:`sdvm_hf.arrow.schema`). Only what is exactly
representable unifies: a field of type ``null`` (no row had a value) with any type, and the
same type otherwise (strings were normalised to ``string`` before).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from sdvm_hf.arrow._validate import canonical
from sdvm_hf.arrow._values import empty_table
from sdvm_hf.arrow.schema import EXTRA_MISSING, EXTRA_MISSING_TYPE, JSON_EXTRA, sample_schema
from sdvm_hf.errors import SampleTableError


def unify(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    """The one type values of ``a`` and of ``b`` both keep exactly in, or ``None``.

    >>> unify(pa.null(), pa.int32()), unify(pa.int32(), pa.int64())
    (DataType(int32), None)
    """
    if a == b or pa.types.is_null(b):
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_list(a) and pa.types.is_list(b):
        inner = unify(a.value_type, b.value_type)
        return None if inner is None else pa.list_(inner)
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        if [child.name for child in a] != [child.name for child in b]:
            return None  # a nested dict would gain keys
        children = [unify(x.type, y.type) for x, y in zip(a, b, strict=True)]
        if any(child is None for child in children):
            return None
        return pa.struct([x.with_type(t) for x, t in zip(a, children, strict=True)])
    return None


def unified_extra(named: Sequence[tuple[str, pa.DataType]]) -> pa.DataType:
    """The extra type of the concatenation of tables named and typed so.

    Raises :class:`SampleTableError` naming two tables that cannot share one extra type.
    """
    first, target = named[0]
    fields: dict[str, tuple[str, pa.Field]] = {}
    for name, dtype in named:
        if pa.types.is_struct(dtype) != pa.types.is_struct(target):
            kinds = {True: "a struct", False: "JSON text"}
            raise SampleTableError(
                f"{name}: extra is {kinds[pa.types.is_struct(dtype)]} ({dtype}) where {first} "
                f"has {kinds[pa.types.is_struct(target)]} ({target}); they cannot be one table"
            )
        for child in dtype if pa.types.is_struct(dtype) else ():
            if child.name not in fields:
                fields[child.name] = (name, child)
                continue
            where, seen = fields[child.name]
            both = unify(seen.type, child.type)
            if both is None:
                raise SampleTableError(
                    f"{name}: column 'extra.{child.name}': expected {seen.type} as in {where}, "
                    f"got {child.type}; the files cannot be one sample table"
                )
            fields[child.name] = (where if both == seen.type else name, child.with_type(both))
    if not pa.types.is_struct(target):
        return JSON_EXTRA
    return pa.struct([child for _, child in fields.values()])


def _reshaped(table: pa.Table, extra_type: pa.StructType) -> pa.Table:
    """``table`` with ``extra`` in ``extra_type`` and the fields it lacks listed as missing."""
    own = table.schema.field("extra").type
    names = {child.name for child in own}
    lacking = [child.name for child in extra_type if child.name not in names]
    chunks = []
    for chunk in table.column("extra").chunks:
        children = [
            chunk.field(child.name).cast(child.type)
            if child.name in names
            else pa.nulls(len(chunk), child.type)
            for child in extra_type
        ]
        chunks.append(
            pa.StructArray.from_arrays(children, fields=list(extra_type), mask=chunk.is_null())
        )
    extra = pa.chunked_array(chunks, extra_type)
    if EXTRA_MISSING in table.column_names:
        before = table.column(EXTRA_MISSING).to_pylist()
    else:
        before = [None] * table.num_rows
    missing = pa.array([[*(had or ()), *lacking] or None for had in before], EXTRA_MISSING_TYPE)
    columns = {name: table.column(name) for name in sample_schema().names}
    columns["extra"] = extra
    columns[EXTRA_MISSING] = missing
    return pa.table(columns, schema=sample_schema(extra_type, missing=True))


def concatenate_tables(tables: Sequence[pa.Table], names: Sequence[str] | None = None) -> pa.Table:
    """Canonical sample tables one after another, ``extra`` unified exactly.

    Raises :class:`SampleTableError` naming the table (by ``names``, default ``table N``) whose
    extra cannot join the others'.
    """
    if not tables:
        return empty_table(sample_schema())
    names = names or [f"table {index}" for index in range(len(tables))]
    target = unified_extra(
        [(n, t.schema.field("extra").type) for n, t in zip(names, tables, strict=True)]
    )
    if all(
        t.schema.field("extra").type == target and EXTRA_MISSING not in t.column_names
        for t in tables
    ):
        return pa.concat_tables(tables)
    if not pa.types.is_struct(target):
        return pa.concat_tables([t.select(sample_schema().names) for t in tables])
    return canonical(pa.concat_tables([_reshaped(t, target) for t in tables]))
