"""The Arrow layer: the sample table schema, its validation, Parquet and the lazy sequence.

This is the face the layers above use; the ``_private`` modules behind it are this package's
own (``tests/test_layers.py`` holds every other package to the names below).
"""

from sdvm_hf.arrow._chunks import BATCH_BYTES, bounded, constant, row_chunks, take_by_chunk
from sdvm_hf.arrow._codec import (
    DECODE_ROWS,
    changeable_columns,
    decode,
    json_text,
    plain_blocks,
    plain_extras,
)
from sdvm_hf.arrow._concat import concatenate_tables
from sdvm_hf.arrow._found import Found, Problems, first_per_row
from sdvm_hf.arrow._parquet import WRITE_OPTIONS, batch_rows, parquet_file_batches
from sdvm_hf.arrow._rules import find_problems, found, is_list, out_of_range, utf8_problems
from sdvm_hf.arrow._stream import shuffled, taken
from sdvm_hf.arrow._validate import canonical, check_schema, checked_table, json_type_problem
from sdvm_hf.arrow._values import (
    FALSE,
    TRUE,
    empty_table,
    from_numpy,
    integers,
    rows_where,
    scalar,
    strings,
    to_numpy,
)

__all__ = [
    "BATCH_BYTES",
    "DECODE_ROWS",
    "FALSE",
    "TRUE",
    "WRITE_OPTIONS",
    "Found",
    "Problems",
    "batch_rows",
    "bounded",
    "canonical",
    "changeable_columns",
    "check_schema",
    "checked_table",
    "concatenate_tables",
    "constant",
    "decode",
    "empty_table",
    "find_problems",
    "first_per_row",
    "found",
    "from_numpy",
    "integers",
    "is_list",
    "json_text",
    "json_type_problem",
    "out_of_range",
    "parquet_file_batches",
    "plain_blocks",
    "plain_extras",
    "row_chunks",
    "rows_where",
    "scalar",
    "shuffled",
    "strings",
    "take_by_chunk",
    "taken",
    "to_numpy",
    "utf8_problems",
]
