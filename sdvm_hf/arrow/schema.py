"""The Arrow schema of a sample table, and the matching ``datasets.Features``.

A sample table has one row per sample and these columns:

=============  ==============================================================================
task_type      string, always ``"multiple_choice"``
style          string, ``"continuation"`` or ``"qa"``
context        string
choices        list<string>
answer_index   int64
extra          a struct whose fields keep their Arrow types (large and view strings and large
               lists normalised to ``string`` and ``list``): the union of the samples' extra
               keys, in first-seen order; a string holding each sample's extra as a JSON
               object when no struct is exact (values whose types differ between samples,
               keys in conflicting orders, no keys at all)
audit          string: the stage block as JSON text, null when absent
fix            string: likewise
reaudit        string: likewise
extra_missing  list<string>, **only when some sample lacks a key of the extra struct**: the
               struct fields the row's sample does not have (null or empty: it has them all).
               A null struct field is ``None`` where the key is not listed here, and a missing
               key where it is. A table without the column is one where no key is missing
               (every single-dataset conversion), so its schema is the nine columns above.
=============  ==============================================================================

A freshly converted file and an audited one share this schema: the stage columns are always
there, null until the service fills them. An extra field whose values are all null (a column
no row filled) has Arrow type ``null`` unless the mapping's ``types`` names its type; files of
one dataset whose shards differ only there (or in string vs large_string) read as one table.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pyarrow as pa

from sdvm_hf._wire import BLOCKS
from sdvm_hf.errors import InputError

if TYPE_CHECKING:
    import datasets

__all__ = [
    "COLUMNS",
    "EXTRA_MISSING",
    "EXTRA_MISSING_TYPE",
    "JSON_EXTRA",
    "STRING_TYPES",
    "normal_type",
    "sample_features",
    "sample_schema",
]

JSON_EXTRA = pa.string()
"""The type of ``extra`` when samples carry different keys: one JSON object per row."""

STRING_TYPES = (pa.string(), pa.large_string(), pa.string_view())
"""The Arrow string types a sample table may use; they are read as ``string``."""

COLUMNS: tuple[str, ...] = (
    "task_type",
    "style",
    "context",
    "choices",
    "answer_index",
    "extra",
    *BLOCKS,
)
"""The columns every sample table has, in order."""

EXTRA_MISSING = "extra_missing"
"""The optional last column: the extra struct's fields a row's sample does not have."""

EXTRA_MISSING_TYPE = pa.list_(pa.string())


def sample_schema(extra: pa.DataType = JSON_EXTRA, *, missing: bool = False) -> pa.Schema:
    """The Arrow schema of a sample table whose ``extra`` column has type ``extra``.

    ``missing`` adds the :data:`EXTRA_MISSING` column (samples lacking some extra keys).

    >>> sample_schema(pa.struct([("subject", pa.string())])).field("extra").type
    StructType(struct<subject: string>)
    """
    fields = [
        ("task_type", pa.string()),
        ("style", pa.string()),
        ("context", pa.string()),
        ("choices", pa.list_(pa.string())),
        ("answer_index", pa.int64()),
        ("extra", extra),
        *((key, pa.string()) for key in BLOCKS),
    ]
    if missing:
        fields.append((EXTRA_MISSING, EXTRA_MISSING_TYPE))
    return pa.schema(fields)


def sample_features(
    extra: pa.DataType | str | os.PathLike[str] = JSON_EXTRA, *, missing: bool = False
) -> datasets.Features:
    """The ``datasets.Features`` of a sample table, for ``Dataset.map(features=...)``.

    ``extra`` may also be a sample Parquet file: then its own ``extra`` type and columns, so
    that ``datasets.load_dataset("parquet", data_files=path, features=sample_features(path))``
    loads it (a converted file's ``extra`` is a struct, not the default JSON text).
    """
    import datasets

    if isinstance(extra, str | os.PathLike):
        import pyarrow.parquet as pq

        schema = pq.read_schema(extra)
        if "extra" not in schema.names:
            raise InputError(f"{extra} is not a sample file: it has no column 'extra'")
        extra, missing = normal_type(schema.field("extra").type), EXTRA_MISSING in schema.names

    return datasets.Features.from_arrow_schema(sample_schema(extra, missing=missing))


def normal_type(dtype: pa.DataType) -> pa.DataType:
    """``dtype`` with large and view strings as ``string`` and large lists as ``list``.

    The one physical form of a type in a sample table, whatever form a batch arrived in.

    >>> normal_type(pa.struct([("a", pa.large_list(pa.large_string()))]))
    StructType(struct<a: list<item: string>>)
    """
    if dtype in STRING_TYPES:
        return pa.string()
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return pa.list_(normal_type(dtype.value_type))
    if pa.types.is_struct(dtype):
        return pa.struct([child.with_type(normal_type(child.type)) for child in dtype])
    return dtype
