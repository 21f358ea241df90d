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

from sdvm_hf._wire import BLOCKS

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
    *BLOCKS,
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
            *((key, pa.string()) for key in BLOCKS),
        ]
    )


def sample_features(extra: pa.DataType = JSON_EXTRA) -> datasets.Features:
    """The ``datasets.Features`` of a sample table, for ``Dataset.map(features=...)``."""
    import datasets

    return datasets.Features.from_arrow_schema(sample_schema(extra))


STRING_TYPES = (pa.string(), pa.large_string(), pa.string_view())
"""The Arrow string types a sample table may use; they are read as ``string``."""
