"""Distributed engines: the pieces that run a mapping in Ray Data (or any Arrow engine).

A :class:`~sdvm_hf.convert.mapping.MultipleChoiceMapping` is itself an Arrow batch function
(its ``__call__``), so an engine needs only three more things, all plain ``pyarrow`` here:

- a **row key** for every row, since an engine splits and reorders its input:
  :func:`read_keyed` reads source files and adds :data:`FILE_COLUMN` and
  :data:`ROW_COLUMN` (the file and the row within it), for
  ``ray.data.from_items(files).map_batches(read_keyed, batch_size=1, ...)``
  (``ray.data.read_parquet`` gives no row numbers and reorders rows); a source with its
  own key column (``id``) can use that instead;
- the two outputs of the mapping's tagged form: :func:`sample_rows` (the sample table) and
  :func:`reject_rows` (the rejects as data, keyed);
- :func:`init_ray`: a local Ray on the loopback interface.

``ray`` is imported only inside :func:`init_ray` (it is the optional ``ray`` extra).

>>> import pyarrow as pa
>>> from sdvm_hf.convert.mapping import MultipleChoiceMapping
>>> m = MultipleChoiceMapping(dataset="t", context="q", choices=("a", "b"), answer="k")
>>> batch = pa.table({"q": ["x", "y"], "a": ["1", "2"], "b": ["3", "4"], "k": [0, 5],
...                   "src_file": ["f.parquet"] * 2, "src_row": [40, 41]})
>>> tagged = m(batch, on_error="skip", rows=ROW_COLUMN, key=(FILE_COLUMN, ROW_COLUMN))
>>> sample_rows(tagged).num_rows, reject_rows(tagged, FILE_ROW_KEY).to_pylist()[0]["src_row"]
(1, 41)
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sdvm_hf.arrow.rejects import REJECT_SCHEMA, json_line
from sdvm_hf.arrow.sequence import arrow_table
from sdvm_hf.convert.mapping import REJECT_COLUMN
from sdvm_hf.errors import InputError

if TYPE_CHECKING:
    import datasets

__all__ = [
    "FILE_COLUMN",
    "FILE_ROW_KEY",
    "ROW_COLUMN",
    "init_ray",
    "read_keyed",
    "reject_rows",
    "sample_rows",
]

FILE_COLUMN = "src_file"
"""The column :func:`read_keyed` adds: the file a row comes from, as it was named."""
ROW_COLUMN = "src_row"
"""The column :func:`read_keyed` adds: the row's 0-based number within its file."""
_RAY_DEPRECATED = ("use_push_based_shuffle", "use_polars", "use_arrow_tensor_v2")

FILE_ROW_KEY = (pa.field(FILE_COLUMN, pa.string()), pa.field(ROW_COLUMN, pa.int64()))
"""The file + row key, for :func:`reject_rows`."""


def read_keyed(batch: pa.Table, *, column: str = "item") -> pa.Table:
    """The Parquet files named in ``batch[column]``, each row keyed by file and row.

    Adds :data:`FILE_COLUMN` and :data:`ROW_COLUMN`: exact keys, whatever order an engine
    runs the files in. ``batch`` is what ``ray.data.from_items(files)`` gives (an ``item``
    column of paths).
    """
    tables = []
    for path in batch.column(column).to_pylist():
        table = pq.read_table(path)
        n = table.num_rows
        table = table.append_column(FILE_COLUMN, pa.array([str(path)] * n, pa.string()))
        tables.append(table.append_column(ROW_COLUMN, pa.array(np.arange(n), pa.int64())))
    return pa.concat_tables(tables)


def sample_rows(tagged: pa.Table | datasets.Dataset) -> pa.Table:
    """The converted rows of a tagged table (the tagged form's output): the sample table."""
    table = arrow_table(tagged)
    return table.filter(pc.is_null(table.column(REJECT_COLUMN))).drop_columns([REJECT_COLUMN])


def reject_rows(
    tagged: pa.Table | datasets.Dataset, key: Sequence[pa.Field] = FILE_ROW_KEY
) -> pa.Table:
    """The rejected rows of a tagged table as data, keyed.

    The columns are the ``key`` columns, then :data:`~sdvm_hf.arrow.rejects.REJECT_SCHEMA`
    (the original row as JSON text). ``key`` names and types the key columns the tagged
    form was given (``key=`` of :meth:`~sdvm_hf.convert.mapping.MultipleChoiceMapping.tagged`),
    so every batch gives one schema, an empty one too. ``Rejects.from_table`` reads the result back.
    """
    table = arrow_table(tagged)
    records = [json.loads(text) for text in table.column(REJECT_COLUMN).drop_null().to_pylist()]
    for record in records:
        record.setdefault("kind", "unknown")  # tagged before kinds existed
        if key and "key" not in record:
            raise InputError(
                f"reject of row {record['row']} has no key: pass key=... to the tagged form"
            )
    columns: dict[str, Any] = {
        f.name: pa.array([r["key"][f.name] for r in records], f.type) for f in key
    }
    # as Rejects.table writes them
    encode: dict[str, Callable[[Any], str]] = {"path": json.dumps, "original": json_line}
    for f in REJECT_SCHEMA:
        values = [r[f.name] for r in records]
        if f.name in encode:
            values = [encode[f.name](value) for value in values]
        columns[f.name] = pa.array(values, f.type)
    return pa.table(columns, schema=pa.schema([*key, *REJECT_SCHEMA]))


def init_ray(num_cpus: int, *, temp_dir: str | Path | None = None, **options: Any) -> None:
    """Start a local Ray that listens on the loopback interface only, if none is running.

    Ray picks the machine's routable address unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
    is set before ``ray`` is first imported; this sets it (and ``RAY_AUTH_MODE=disabled``,
    which silences the token banner), so call it before anything imports ``ray``.
    ``options`` go to ``ray.init``. It also creates Ray Data's context, ignoring the three
    deprecation warnings Ray Data raises about its own options while doing so.
    """
    if "ray" in sys.modules and os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") != "0":
        raise RuntimeError(
            "ray was imported before RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 was set, so it would "
            "listen on a routable address; call init_ray before importing ray"
        )
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    if not ray.is_initialized():
        settings: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
        }
        if temp_dir is not None:
            settings["_temp_dir"] = str(temp_dir)
        ray.init(num_cpus=num_cpus, **{**settings, **options})
    import ray.data

    with warnings.catch_warnings():  # Ray Data sets its own deprecated options (ray 2.60)
        for option in _RAY_DEPRECATED:
            warnings.filterwarnings(
                "ignore",
                message=f"`{option}` is deprecated",
                category=DeprecationWarning,
                module="ray.data.context",
            )
        ray.data.DataContext.get_current()
    address = ray.util.get_node_ip_address()
    if not address.startswith("127."):
        raise RuntimeError(f"ray listens on {address}, not on the loopback interface")
