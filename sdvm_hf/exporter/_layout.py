"""The rows given back, typed as their published layout: its features, else its schema."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.exporter._types import RESERVED, ExportError, Part
from sdvm_hf.record import HF_METADATA

__all__ = [
    "check_labels",
    "check_layout_columns",
    "class_labels",
    "config_values",
    "label_problem",
    "layout_schema",
    "layout_table",
]

_CONFIG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""What a value may be to name a configuration folder: no path, no space, no dot first."""


def config_values(part: Part, table: pa.Table) -> list[str]:
    """The configurations the rows of MMLU's ``all`` also go to: one per subject, sorted.

    Each is a folder of the export, so a value that is not a plain name (``../x``, ``a/b``,
    empty) or that is the part's own configuration is refused: it would write outside the
    folder, or over another configuration.
    """
    preset = part.preset
    column = preset.config_column if preset is not None else None
    if preset is None or column is None or part.config != preset.config:
        return []
    if column not in table.column_names:
        return []
    values = sorted(v for v in pc.unique(table.column(column)).to_pylist() if isinstance(v, str))
    for value in values:
        if not _CONFIG_NAME.fullmatch(value) or value == part.config or value in RESERVED:
            raise ExportError(
                f"{part.path}: the {column} {value!r} cannot name a configuration of the export "
                f"(letters, digits, '_', '-' and '.' only, not first, not {part.config!r}, and "
                f"none of the export's own files: {', '.join(sorted(RESERVED))}); MMLU's "
                f"{part.config!r} rows also go to one configuration per {column}"
            )
    return values


def _features(part: Part) -> Any:
    """The published features of the part's layout, where they are known."""
    import datasets

    recorded = None if part.record is None else part.record.published_features(part.layout)
    if recorded is not None:
        return datasets.Features.from_dict(dict(recorded))
    if part.preset is not None and part.layout in part.preset.features:
        return datasets.Features.from_dict(dict(part.preset.features[part.layout]))
    return None


def class_labels(part: Part) -> dict[str, list[str]]:
    """The layout's ClassLabel columns and their names (``cais/mmlu``'s answer: A-D)."""
    features = _features(part)
    if features is None:
        return {}
    import datasets

    return {
        name: list(feature.names)
        for name, feature in features.items()
        if isinstance(feature, datasets.ClassLabel)
    }


def label_problem(labels: dict[str, list[str]], row: dict[str, Any]) -> str:
    """Why ``row`` cannot be published under its ClassLabel columns, or ``""``."""
    for column, names in labels.items():
        value = row.get(column)
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        if not 0 <= value < len(names):
            return _out_of_labels(column, names, value)
    return ""


def check_labels(part: Part, labels: dict[str, list[str]], table: pa.Table, rows: Any) -> None:
    """``ExportError`` naming the first row (of ``rows``) whose label is not one of its names."""
    import pyarrow.compute as pc

    for column, names in labels.items():
        if column not in table.column_names or not pa.types.is_integer(table[column].type):
            continue
        values = table.column(column)
        outside = pc.or_(pc.less(values, 0), pc.greater_equal(values, len(names)))
        if pc.any(outside).as_py():
            at = pc.index(outside, True).as_py()
            raise ExportError(
                f"{part.path} row {int(rows[at])}: "
                + _out_of_labels(column, names, values[at].as_py())
                + f" ({part.layout} layout)"
            )


def _out_of_labels(column: str, names: list[str], value: int) -> str:
    return (
        f"column {column!r} is a ClassLabel over {', '.join(names)}, "
        f"got {value} (a row with more choices than the layout has labels)"
    )


def layout_schema(part: Part) -> pa.Schema | None:
    """The Arrow schema of the part's published layout, where it is known."""
    features = _features(part)
    if features is not None:
        return features.arrow_schema
    return None if part.record is None else part.record.published_schema(part.layout)


def layout_table(part: Part, rows: list[dict[str, Any]], schema: pa.Schema | None) -> pa.Table:
    """Rows of the row form as a table in the layout's ``schema`` (see :func:`layout_schema`)."""
    if schema is None:  # a file built by hand: its rows say what they hold
        try:
            return pa.Table.from_pylist(rows)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            raise ExportError(f"{part.path}: {_mixed(rows, error)}") from None
    _check_columns(part, rows, schema.names)
    return _typed(part, rows, schema)


def _typed(part: Part, rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """The rows in ``schema``, column by column.

    An int given back where the layout has text (HellaSwag's label from the original JSON
    Lines, a one-based answer) is written as its digits; other values are cast.
    """
    columns = []
    for field in schema:
        values = [row.get(field.name) for row in rows]
        try:
            column = pa.array(values, field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
                values = [_digits(value) for value in values]
            try:
                column = pa.array(values).cast(field.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
                raise ExportError(
                    f"{part.path}: column {field.name!r} of the {part.layout} layout: expected "
                    f"{field.type}, got values that do not convert ({error})"
                ) from None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def _digits(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _check_columns(part: Part, rows: list[dict[str, Any]], names: Sequence[str]) -> None:
    wanted = set(names)
    for index, row in enumerate(rows):
        missing = [name for name in names if name not in row]
        extra = [name for name in row if name not in wanted]
        if missing or extra:
            what = (
                f"the published column {missing[0]!r} cannot be given back from the sample"
                if missing
                else f"its extra key {extra[0]!r} is not a column of the published layout"
            )
            raise ExportError(f"{part.path} row {index}: {what} ({part.layout} layout)")


def with_hf_features(table: pa.Table, features: dict[str, Any]) -> pa.Table:
    """``table`` carrying ``features`` as its ``datasets`` features (no data copied)."""
    meta = dict(table.schema.metadata or {})
    meta[HF_METADATA] = json.dumps({"info": {"features": features}}).encode()
    return table.replace_schema_metadata(meta)


def check_layout_columns(part: Part, table: pa.Table) -> None:
    """Refuse rows that are not the layout they are exported in (``--layout`` of another).

    Rows exported in the layout they were read in are that layout. Rows asked into another
    (MMLU's ``cais`` rows as ``mmlu_pro``) must have that layout's columns, so that the
    preset recognises the result as it; where the layout's published features are known, its
    columns exactly.
    """
    preset, record = part.preset, part.record
    if preset is None or (record is not None and record.layout == part.layout):
        return
    columns = table.column_names
    known = preset.features.get(part.layout)
    if known is not None:
        missing = [c for c in known if c not in columns]
        unknown = [c for c in columns if c not in known]
        wants = f"its columns are {', '.join(known)}"
    elif preset.publication(part.layout).columns:  # its columns, not their types
        upstream = preset.publication(part.layout).columns
        missing, unknown = [c for c in upstream if c not in columns], []
        wants = f"its columns are {', '.join(upstream)}"
    else:  # only the columns that tell the layout apart are known
        needed = dict(preset.signatures).get(part.layout, frozenset())
        missing, unknown = sorted(needed - set(columns)), []
        wants = f"it has at least {', '.join(sorted(needed))}"
    if missing or unknown:
        found = f"lack {', '.join(missing)}" if missing else ""
        extra = f"have {', '.join(unknown)}, which it does not" if unknown else ""
        raise ExportError(
            f"{part.path}: its rows cannot be published in the {part.layout} layout: they "
            f"{' and '.join(x for x in (found, extra) if x)} ({wants}; the rows, read in "
            f"the {record.layout if record else 'unknown'} layout, have "
            f"{', '.join(columns) or 'no column'})"
        )


def _mixed(rows: list[dict[str, Any]], error: Exception) -> str:
    """Which column holds values of two types (what Arrow refused), naming the two rows."""
    first: dict[str, tuple[int, Any]] = {}
    for index, row in enumerate(rows):
        for column, value in row.items():
            if value is None:
                continue
            seen = first.setdefault(column, (index, value))
            if type(seen[1]) is not type(value):
                return (
                    f"column {column!r} would hold {seen[1]!r} ({type(seen[1]).__name__}) in "
                    f"one row and {value!r} ({type(value).__name__}) in another (exported rows "
                    f"{seen[0]} and {index}): the file has no record of its source's types "
                    "(a JSON Lines file); export the Parquet file convert wrote, or the stage's "
                    "Parquet output"
                )
    return f"its rows cannot make one table ({str(error).splitlines()[0]})"
