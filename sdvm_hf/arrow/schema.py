"""The Arrow schema of a sample table, and the matching ``datasets.Features``.

A sample table has one row per sample and these columns:

=============  ==============================================================================
task_type      string, always ``"multiple_choice"``
style          string, ``"continuation"`` or ``"qa"``
context        string
choices        list<string>
answer_index   int64
extra          a struct whose fields keep their Arrow types, when every sample has the same
               extra keys (every dataset conversion); otherwise a string holding each
               sample's extra as a JSON object (hand-built samples with differing keys)
audit          string: the stage block as JSON text, null when absent
fix            string: likewise
reaudit        string: likewise
=============  ==============================================================================

A freshly converted file and an audited one share this schema: the stage columns are always
there, null until the service fills them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from sdvm_hf.errors import SampleTableError
from sdvm_hf.samples import RESERVED_KEYS, STAGE_KEYS

if TYPE_CHECKING:
    import datasets

JSON_EXTRA = pa.string()
"""The type of ``extra`` when samples carry different keys: one JSON object per row."""

COLUMNS: tuple[str, ...] = (
    "task_type",
    "style",
    "context",
    "choices",
    "answer_index",
    "extra",
    *STAGE_KEYS,
)


def sample_schema(extra: pa.DataType = JSON_EXTRA) -> pa.Schema:
    """The Arrow schema of a sample table whose ``extra`` column has type ``extra``.

    >>> sample_schema(pa.struct([("subject", pa.string())])).field("extra").type
    StructType(struct<subject: string>)
    """
    return pa.schema(
        [
            ("task_type", pa.string()),
            ("style", pa.string()),
            ("context", pa.string()),
            ("choices", pa.list_(pa.string())),
            ("answer_index", pa.int64()),
            ("extra", extra),
            *((key, pa.string()) for key in STAGE_KEYS),
        ]
    )


def sample_features(extra: pa.DataType = JSON_EXTRA) -> datasets.Features:
    """The ``datasets.Features`` of a sample table, for ``Dataset.map(features=...)``."""
    import datasets

    return datasets.Features.from_arrow_schema(sample_schema(extra))


_STRINGS = (pa.string(), pa.large_string(), pa.string_view())
_JSON_SCALARS = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean, pa.types.is_null)


def json_type_problem(dtype: pa.DataType, where: str) -> str | None:
    """Say why values of Arrow type ``dtype`` would not be JSON-compatible (``None`` if fine)."""
    if dtype in _STRINGS or any(check(dtype) for check in _JSON_SCALARS):
        return None
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
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


def _type_problem(name: str, dtype: pa.DataType) -> str | None:
    if name in ("task_type", "style", "context", *STAGE_KEYS):
        return None if dtype in _STRINGS else "string"
    if name == "choices":
        is_list = pa.types.is_list(dtype) or pa.types.is_large_list(dtype)
        return None if is_list and dtype.value_type in _STRINGS else "list<string>"
    if name == "answer_index":
        return None if pa.types.is_integer(dtype) else "an integer type"
    # extra
    if dtype in _STRINGS:
        return None
    if not pa.types.is_struct(dtype):
        return "a struct of JSON-compatible fields, or a JSON string"
    clash = [child.name for child in dtype if child.name in RESERVED_KEYS]
    if clash:
        return f"a struct without reserved wire keys (found {', '.join(clash)})"
    return json_type_problem(dtype, "extra")


def check_schema(schema: pa.Schema, source: str) -> None:
    """Raise :class:`SampleTableError` listing every missing or mistyped column."""
    problems = [f"missing column {name!r}" for name in COLUMNS if name not in schema.names]
    for name in COLUMNS:
        if name in schema.names:
            dtype = schema.field(name).type
            expected = _type_problem(name, dtype)
            if expected:
                problems.append(f"column {name!r}: expected {expected}, got {dtype}")
    if problems:
        raise SampleTableError(f"{source} is not a sample table: " + "; ".join(problems))


def canonical(table: pa.Table) -> pa.Table:
    """``table`` with exactly the sample columns, in order, cast to the canonical types.

    The caller has run :func:`check_schema`. Large and view string types become ``string``;
    ``answer_index`` becomes int64. ``extra`` keeps its own type.
    """
    extra = table.schema.field("extra").type
    if extra in _STRINGS:
        extra = JSON_EXTRA
    target = sample_schema(extra)
    table = table.select(list(COLUMNS))
    if table.schema.remove_metadata() == target:
        return table
    return table.cast(target)
