"""Checks of a sample table: its schema, then its rows, vectorised.

The row rules are the ones :class:`~sdvm_hf.samples.MultipleChoiceSample` enforces,
evaluated with Arrow compute kernels so that a million rows cost a few passes over the
columns. A table that passes can be turned into samples without running pydantic on every row.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import (
    BLOCKS,
    reserved_key,
)
from sdvm_hf.arrow._chunks import row_chunks
from sdvm_hf.arrow._rules import find_problems, is_list
from sdvm_hf.arrow.schema import (
    COLUMNS,
    EXTRA_MISSING,
    STRING_TYPES,
    normal_type,
    sample_schema,
)
from sdvm_hf.errors import Problem, SampleTableError

# -- the schema ----------------------------------------------------------------------------

_JSON_SCALARS = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean, pa.types.is_null)


def json_type_problem(dtype: pa.DataType, where: str) -> str | None:
    """Say why values of Arrow type ``dtype`` would not be JSON-compatible (``None`` if fine)."""
    if dtype in STRING_TYPES or any(check(dtype) for check in _JSON_SCALARS):
        return None
    if is_list(dtype):
        return json_type_problem(dtype.value_type, f"{where}[]")
    if pa.types.is_struct(dtype):
        if dtype.num_fields == 0:
            return f"{where} is a struct with no fields, which Parquet cannot store"
        for child in dtype:
            problem = json_type_problem(child.type, f"{where}.{child.name}")
            if problem:
                return problem
        return None
    return f"{where} has Arrow type {dtype}, which is not JSON-compatible"


def _is_text(dtype: pa.DataType) -> bool:
    """A string type, or strings dictionary-encoded (read as ``string``)."""
    if pa.types.is_dictionary(dtype):
        dtype = dtype.value_type
    return dtype in STRING_TYPES


def _expected_type(name: str, dtype: pa.DataType) -> str | None:
    """What column ``name`` should be, when ``dtype`` is not that (``None`` when it is)."""
    if name in BLOCKS:  # a column of nulls is a column of absent blocks
        return None if _is_text(dtype) or pa.types.is_null(dtype) else "string"
    if name in ("task_type", "style", "context"):
        return None if _is_text(dtype) else "string"
    if name == "choices":
        return None if is_list(dtype) and dtype.value_type in STRING_TYPES else "list<string>"
    if name == "answer_index":
        return None if pa.types.is_integer(dtype) else "an integer type"
    # extra
    if dtype in STRING_TYPES:
        return None
    if not pa.types.is_struct(dtype):
        return "a struct of JSON-compatible fields, or a JSON string"
    names = [child.name for child in dtype]
    twice = sorted(name for name, n in Counter(names).items() if n > 1)  # linear in fields
    if twice:
        return f"a struct whose field names differ (found {', '.join(twice)} twice)"
    clash = reserved_key(names)
    if clash is not None:
        return f"a struct without reserved wire keys (found {clash})"
    return json_type_problem(dtype, "extra")


def check_schema(schema: pa.Schema, source: str) -> None:
    """Raise :class:`SampleTableError` listing every missing, unknown or mistyped column.

    A column the sample table does not have is refused rather than dropped, so a file never
    loses data on the way in.
    """
    known = (*COLUMNS, EXTRA_MISSING)
    problems = [f"missing column {name!r}" for name in COLUMNS if name not in schema.names]
    problems += [f"unknown column {name!r}" for name in schema.names if name not in known]
    for name in COLUMNS:
        if name in schema.names:
            dtype = schema.field(name).type
            expected = _expected_type(name, dtype)
            if expected:
                problems.append(f"column {name!r}: expected {expected}, got {dtype}")
    if EXTRA_MISSING in schema.names:
        dtype = schema.field(EXTRA_MISSING).type
        if not (is_list(dtype) and dtype.value_type in STRING_TYPES) and not pa.types.is_null(
            dtype
        ):
            problems.append(f"column {EXTRA_MISSING!r}: expected list<string>, got {dtype}")
        extra = schema.field("extra").type if "extra" in schema.names else None
        if extra is not None and not pa.types.is_struct(extra):
            problems.append(f"column {EXTRA_MISSING!r} needs a struct extra, got {extra}")
    if problems:
        hint = ""
        if "task_type" not in schema.names and "style" not in schema.names:
            hint = (
                f" ({source} has neither task_type nor style, which every sample file has: "
                "if it is a dataset's source file, convert it first: sdvm-hf convert generic "
                f"--data-files {source} --context COLUMN --choices COLUMN --answer COLUMN -o OUT)"
            )
        raise SampleTableError(f"{source} is not a sample table: " + "; ".join(problems) + hint)


def canonical(table: pa.Table) -> pa.Table:
    """``table`` with exactly the sample columns, in order, cast to the canonical types.

    The caller has run :func:`check_schema`. Large and view string types become ``string``,
    large lists ``list`` (in ``extra`` too, see :func:`~sdvm_hf.arrow.schema.normal_type`);
    ``answer_index`` becomes int64, dictionary-encoded strings plain ones. ``extra`` keeps
    its own field types otherwise. An :data:`EXTRA_MISSING` column that lists nothing is
    dropped, so a table whose samples have every key has the nine columns, however it was
    built. The key-value metadata is kept.
    """
    extra = normal_type(table.schema.field("extra").type)
    missing = EXTRA_MISSING in table.schema.names and _lists_any(table.column(EXTRA_MISSING))
    target = sample_schema(extra, missing=missing)
    table = table.select(list(target.names))
    if table.schema.remove_metadata() == target:
        return table
    # the key-value metadata (a converted file's record) is the file's, whatever its types
    return table.cast(target).replace_schema_metadata(table.schema.metadata)


def _lists_any(column: pa.ChunkedArray) -> bool:
    """Whether a list column holds at least one item."""
    return bool(len(column) and pc.sum(pc.fill_null(pc.list_value_length(column), 0)).as_py())


def checked_table(table: pa.Table, source: str = "table", first_row: int = 0) -> pa.Table:
    """``table`` as a canonical sample table, or :class:`SampleTableError` saying what is wrong.

    Checks the schema (every missing or mistyped column) and then every row, vectorised; rows
    are numbered from ``first_row``.
    """
    check_schema(table.schema, source)
    table = canonical(table)
    problems: list[Problem] = []
    for start, part in row_chunks(table):
        found_here = find_problems(part, limit=5 - len(problems))
        problems += [replace(p, row=p.row + start + first_row) for p in found_here]
        if len(problems) >= 5:
            break
    if problems:
        listed = "; ".join(map(str, problems))
        raise SampleTableError(f"{source} has rows that are not valid samples: {listed}")
    return table
