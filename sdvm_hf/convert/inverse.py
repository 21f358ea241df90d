"""The inverse half of a mapping: a sample back to a row of its source's published layout.

:meth:`MultipleChoiceMapping.encode` reads the same description the converters read: the
``extra`` keys go back to their columns (renamed back, nested back), the context, the choices
and the answer go back to their columns in the answer's format. A column the mapping keeps in
``extra`` as well (:attr:`~MultipleChoiceMapping.keep`) is given back as it was whenever the
sample still says the same thing, so an unchanged row comes back value for value (a label
with a trailing line break keeps it). A context joined from several columns or split at a
blank is the preset's to give back (its ``follow`` rule), from the kept columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.convert._answers import SPELLINGS
from sdvm_hf.errors import InputError

if TYPE_CHECKING:  # the mapping imports this module: its type only, for the checker
    from sdvm_hf.convert.mapping import MultipleChoiceMapping as Description
    from sdvm_hf.samples import MultipleChoiceSample


__all__ = ["EncodeError", "published_row", "published_table"]


class EncodeError(InputError):
    """A sample that the mapping cannot give back as a source row."""


def put(row: dict[str, Any], path: str, value: Any) -> None:
    """Set ``row[a][b] = value`` for the path ``"a.b"`` (a struct field)."""
    head, _, rest = path.partition(".")
    if not rest or (head in row and not isinstance(row[head], dict)):
        row[path] = value
        return
    put(row.setdefault(head, {}), rest, value)


def get(row: dict[str, Any], path: str) -> Any:
    """``row[a][b]`` for the path ``"a.b"``; ``KeyError`` when it is not there."""
    if path in row:
        return row[path]
    head, _, rest = path.partition(".")
    if not rest:
        raise KeyError(path)
    return get(row[head], rest)


def published_row(mapping: Description, sample: MultipleChoiceSample) -> dict[str, Any]:
    """The source row ``sample`` stands for, in ``mapping``'s layout (values, not yet typed)."""
    inverse = {key: column for column, key in mapping.rename.items()}
    row: dict[str, Any] = {}
    for key, value in sample.extra.items():
        put(row, inverse.get(key, key), _plain(value))
    context = mapping.context
    if isinstance(context, str) and mapping.blank is None:
        put(row, context, sample.context)
    else:
        missing = [c for c in mapping.context_columns if c not in mapping.keep]
        if missing:
            raise EncodeError(
                f"{mapping.dataset}: the context is built from {'+'.join(mapping.context_columns)}"
                f" and {', '.join(missing)} is not kept in extra, so it cannot be given back"
            )
    choices = list(sample.choices)
    if isinstance(mapping.choices, str):
        put(row, mapping.choices, choices)
    elif mapping.blank is None:
        if len(choices) != len(mapping.choices):
            raise EncodeError(
                f"{mapping.dataset}: the layout has {len(mapping.choices)} choice columns "
                f"({', '.join(mapping.choices)}), the sample {len(choices)} choices"
            )
        for column, text in zip(mapping.choices, choices, strict=True):
            put(row, column, text)
    put(row, mapping.answer, _answer(mapping, row, sample.answer_index, choices))
    if mapping.unnest is not None:
        row = {mapping.unnest: row}
    return row


def _answer(mapping: Description, row: dict[str, Any], index: int, choices: list[str]) -> Any:
    spelling = SPELLINGS[mapping.answer_format]
    if mapping.answer in mapping.keep:
        try:
            kept = get(row, mapping.answer)
        except KeyError:
            kept = None
        if kept is not None and spelling.read(kept) == index:
            return kept
    labels = None
    if mapping.labels is not None:  # answer_format == "label"
        try:
            labels = get(row, mapping.labels)
        except KeyError:
            raise EncodeError(
                f"{mapping.dataset}: the answer is one of the labels in {mapping.labels}, "
                "which the sample does not keep in extra, so the answer cannot be given back"
            ) from None
        if len(labels) != len(choices):
            raise EncodeError(
                f"{mapping.dataset}: {len(labels)} labels in {mapping.labels} "
                f"for {len(choices)} choices"
            )
    return spelling.row(index, choices, labels)


def _plain(value: Any) -> Any:
    """A sample's read-only containers as plain lists and dicts."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "FrozenList":
        return [_plain(v) for v in value]
    return value


# -- the table form -----------------------------------------------------------------------------


def published_table(
    mapping: Description, table: pa.Table, schema: pa.Schema | None
) -> pa.Table | None:
    """:func:`encode` of every row of a sample table at once, in Arrow, typed by ``schema``.

    For rows whose derived columns need no following (an unchanged file, the rows a fix left
    alone): a kept column is taken as it was kept. ``None`` where the table form cannot say it
    exactly (extra held as JSON text, a key missing from some samples, a column the schema
    does not expect or cannot be cast to): the row form then gives each row, or its error.
    """
    names = table.column_names
    if "extra_missing" in names and table.column("extra_missing").null_count != len(table):
        return None
    inverse = {key: column for column, key in mapping.rename.items()}
    extra = _whole(table.column("extra"))
    columns: dict[str, pa.Array] = {}
    if pa.types.is_struct(extra.type):
        for field, values in zip(extra.type, extra.flatten(), strict=True):
            columns[inverse.get(field.name, field.name)] = values
    elif pc.any(pc.not_equal(extra, "{}")).as_py():  # extra as JSON text: the row form reads it
        return None
    choices = _whole(table.column("choices"))
    index = _whole(table.column("answer_index"))
    if isinstance(mapping.context, str) and mapping.blank is None:
        columns[mapping.context] = _whole(table.column("context"))
    elif any(c not in mapping.keep for c in mapping.context_columns):
        return None
    if isinstance(mapping.choices, str):
        columns[mapping.choices] = choices
    elif mapping.blank is None:
        lengths = pc.list_value_length(choices)
        if pc.any(pc.not_equal(lengths, len(mapping.choices))).as_py():
            return None
        for position, column in enumerate(mapping.choices):
            columns[column] = pc.list_element(choices, position)
    if mapping.answer not in mapping.keep:
        answer = _answer_column(mapping, columns, choices, index)
        if answer is None:
            return None
        columns[mapping.answer] = answer
    return _assemble(mapping, columns, schema)


def _whole(column: pa.ChunkedArray) -> pa.Array:
    """A column as one array: its one chunk as it is (no copy), else its chunks joined."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _answer_column(
    mapping: Description, columns: dict[str, pa.Array], choices: pa.Array, index: pa.Array
) -> pa.Array | None:
    labels = columns.get(mapping.labels or "")
    return SPELLINGS[mapping.answer_format].array(index, choices, labels)


def _assemble(
    mapping: Description, columns: dict[str, pa.Array], schema: pa.Schema | None
) -> pa.Table | None:
    """The flat columns nested back and cast to ``schema``; ``None`` where they do not fit.

    ``choices.text`` goes back into ``choices``, an unnested row into its struct.
    """
    if schema is None:
        return None if any("." in name for name in columns) else pa.table(columns)
    fields = list(schema)
    if mapping.unnest is not None:
        if len(fields) != 1 or not pa.types.is_struct(fields[0].type):
            return None
        inner = _fit(list(fields[0].type), columns)
        if inner is None:
            return None
        arrays = [pa.StructArray.from_arrays(inner, fields=list(fields[0].type))]
    else:
        fitted = _fit(fields, columns)
        if fitted is None:
            return None
        arrays = fitted
    return pa.Table.from_arrays(arrays, schema=schema)


def _fit(fields: list[pa.Field], columns: dict[str, pa.Array]) -> list[pa.Array] | None:
    """Each field's column, cast to its type (a struct built from its dotted children)."""
    used: set[str] = set()
    arrays = []
    for field in fields:
        if field.name in columns:
            values = columns[field.name]
            used.add(field.name)
        elif pa.types.is_struct(field.type):
            children = [f"{field.name}.{child.name}" for child in field.type]
            if any(child not in columns for child in children):
                return None
            used.update(children)
            parts = _fit(
                list(field.type),
                {c.name: columns[n] for c, n in zip(field.type, children, strict=True)},
            )
            if parts is None:
                return None
            values = pa.StructArray.from_arrays(parts, fields=list(field.type))
        else:
            return None
        try:
            arrays.append(values.cast(field.type) if values.type != field.type else values)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return None
    return arrays if used == set(columns) else None
