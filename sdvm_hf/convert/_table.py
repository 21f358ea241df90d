"""The table form's one vectorised pass: a source table to sample rows and the problems found.

:func:`sample_rows` reads a mapping's description (its type imported for the checker only:
the mapping imports this module) and runs the steps in order: unnest and cast (:func:`prepare`), the
context, the choices, the answer, ``extra``, then the sample rules on the result. Every row
comes out as a sample row (a bad one may hold anything) and every problem found as a
:class:`~sdvm_hf.arrow._found.Found`, positions in the table; :mod:`._run` numbers the rows,
picks each bad row's first problem and raises, skips or tags.

:func:`sample_schema_of` runs :func:`prepare` on no rows, so the schema a mapping announces
and the table the pass builds cannot disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import BLOCKS, TASK_TYPE, reserved_key
from sdvm_hf.arrow import (
    Found,
    constant,
    empty_table,
    found,
    from_numpy,
    is_list,
    json_type_problem,
    out_of_range,
    rows_where,
    scalar,
)
from sdvm_hf.arrow.schema import JSON_EXTRA, normal_type, sample_schema
from sdvm_hf.convert._answers import SPELLINGS, answer_index, expected_answer
from sdvm_hf.convert._cells import (
    choices_from_columns,
    choices_from_list,
    is_text,
    one_array,
    safe_cast,
    same_chunks,
)
from sdvm_hf.convert._columns import fill_blank, flatten_paths, join_columns
from sdvm_hf.errors import LayoutError, PathPart, ProblemKind

if TYPE_CHECKING:  # the mapping imports this module: its type only, for the checker
    from sdvm_hf.convert.mapping import MultipleChoiceMapping as Description

_WITHHELD = "the labels of this split are withheld, so its rows cannot be samples"


def _context_label(mapping: Description) -> str:
    return "+".join(mapping.context_columns)


def _choices_label(mapping: Description) -> str:
    columns = mapping.choice_columns
    return columns[0] if len(columns) == 1 else f"{columns[0]}..{columns[-1]}"


# -- the schema ----------------------------------------------------------------------------


def extra_columns(mapping: Description, names: Sequence[str]) -> list[str]:
    """The source columns (after ``unnest``) that go to ``extra``, in order."""
    used = set(mapping.consumed) - set(mapping.keep)
    rest = [n for n in names if n not in used and n not in mapping.drop]
    ordered = [n for n in mapping.extra_order if n in rest]
    ordered += [n for n in rest if n not in ordered]
    clash = reserved_key(mapping.rename.get(n, n) for n in ordered)
    if clash is not None:
        raise LayoutError(
            f"{mapping.where}: column {clash!r} would go to extra, but it is a "
            f"reserved wire key; add it to the mapping's drop=(...) or "
            f"rename={{{clash!r}: ...}}"
        )
    return ordered


def sample_schema_of(mapping: Description, source: pa.Schema) -> pa.Schema:
    """The sample schema the mapping gives for a source of schema ``source``."""
    # the pass's own preparation, on no rows: the two cannot disagree
    flat = prepare(mapping, empty_table(source))[0].schema
    extra = extra_columns(mapping, flat.names)
    if not extra:
        return sample_schema(JSON_EXTRA)
    for name in extra:
        problem = json_type_problem(flat.field(name).type, name)
        if problem:
            raise LayoutError(f"{mapping.where}: column {problem}; drop it or cast it")
    fields = [
        pa.field(
            mapping.rename.get(name, name),
            normal_type(mapping.types.get(name, flat.field(name).type)),
        )
        for name in extra
    ]
    return sample_schema(pa.struct(fields))


# -- the pass ------------------------------------------------------------------------------


def prepare(mapping: Description, table: pa.Table) -> tuple[pa.Table, list[Found]]:
    """Unnest, then cast the ``types`` columns; a cell that does not fit is a problem."""
    if mapping.unnest and mapping.unnest in table.column_names:
        inner = one_array(table.column(mapping.unnest))
        others = [n for n in table.column_names if n != mapping.unnest]
        arrays = [table.column(n) for n in others] + inner.flatten()
        table = pa.Table.from_arrays(arrays, names=others + [f.name for f in inner.type])
    table = flatten_paths(table, (*mapping.consumed, *mapping.keep, *mapping.drop))
    problems: list[Found] = []
    for name, dtype in mapping.types.items():
        if name in table.column_names and table.schema.field(name).type != dtype:
            index = table.schema.get_field_index(name)
            cast, bad = safe_cast(one_array(table.column(name)), dtype, (name,))
            table = table.set_column(index, name, cast)
            problems += bad
    return table, problems


def sample_rows(mapping: Description, source: pa.Table) -> tuple[pa.Table, list[Found]]:
    """Every row as a sample row (bad ones may hold anything) and every problem found."""
    names = source.column_names
    twice = sorted({name for name, n in Counter(names).items() if n > 1})
    if twice:  # Parquet allows it; no column can be picked by name then
        raise LayoutError(
            f"{mapping.where}: the source has more than one column named "
            f"{', '.join(map(repr, twice))}; expected column names that differ"
        )
    table, problems = prepare(mapping, source)
    labels = (mapping.labels,) if mapping.labels else ()
    needed = (*mapping.context_columns, *mapping.choice_columns, *labels)
    missing = [n for n in needed if n not in table.column_names]
    if missing:
        raise LayoutError(
            f"{mapping.where}: column {missing[0]!r} is missing; "
            f"columns seen: {', '.join(table.column_names)}{_close(missing[0], table)}"
        )
    if mapping.answer not in table.column_names:
        close = _close(mapping.answer, table)
        why = close or (
            " (a split whose labels are withheld has no answers, so its rows cannot be samples)"
        )
        raise LayoutError(
            f"{mapping.where}: column {mapping.answer!r} is missing; columns seen: "
            f"{', '.join(table.column_names)}{why}"
        )
    out_schema = sample_schema_of(mapping, table.schema)
    for name in mapping.context_columns:
        if not is_text(table.schema.field(name).type):
            raise LayoutError(
                f"{mapping.where}: context column {name!r} should hold strings, "
                f"got {table.schema.field(name).type}"
            )
    if len(mapping.context_columns) == 1:
        context: pa.Array | pa.ChunkedArray = table.column(mapping.context_columns[0])
    else:
        context = join_columns(table, mapping.context_columns, mapping.context_join)
    choices, choice_problems = _choices(mapping, table)
    if mapping.blank is not None:
        context, choices, blanks = fill_blank(
            context.combine_chunks().cast(pa.string()),
            one_array(choices) if isinstance(choices, pa.ChunkedArray) else choices,
            mapping.blank,
        )
        at = (_context_label(mapping),)
        problems += [
            Found(np.array([row], np.int64), at, expected, [got], note, kind=kind)
            for row, expected, got, note, kind in blanks
        ]
    answer, answer_problems = _answer(mapping, table, choices)
    n = table.num_rows
    extra = _extra(mapping, table, out_schema.field("extra").type)
    problems += [*choice_problems, answer_problems]
    no_block = constant(None, n)
    samples = pa.Table.from_arrays(
        [
            constant(TASK_TYPE, n),
            constant(mapping.style, n),
            context.cast(pa.string()),
            choices,
            answer,
            extra,
            *(no_block for _ in BLOCKS),
        ],
        schema=out_schema,
    )
    problems += _core_problems(mapping, samples)
    return samples, problems


def _choices(
    mapping: Description, table: pa.Table
) -> tuple[pa.Array | pa.ChunkedArray, list[Found]]:
    columns = mapping.choice_columns
    if len(columns) == 1:
        column = table.column(columns[0])
        if is_list(column.type):
            return choices_from_list(column, columns[0])
        raise LayoutError(
            f"{mapping.where}: column {columns[0]!r} should hold a list of choices, "
            f"got {column.type}; name several columns as choices=(...) instead"
        )
    arrays = [one_array(table.column(name)) for name in columns]
    return choices_from_columns(arrays, columns)


def _answer(
    mapping: Description, table: pa.Table, choices: pa.Array | pa.ChunkedArray
) -> tuple[pa.Array, Found]:
    """The answer as an int64 index (null where unusable) and the problems found."""
    raw = one_array(table.column(mapping.answer))
    at = f"{mapping.where}: answer column {mapping.answer!r}"
    labels = one_array(table.column(mapping.labels)) if mapping.labels else None
    answer_format = mapping.answer_format
    if isinstance(choices, pa.ChunkedArray) and SPELLINGS[answer_format].reads_choices:
        choices = one_array(choices)  # list kernels number rows within a chunk
    counts = pc.list_value_length(choices)
    index = answer_index(raw, choices, answer_format, at, labels)
    bad = out_of_range(index, counts)
    rows = rows_where(bad)
    values = raw.take(from_numpy(rows)).to_pylist()
    sizes = counts.take(from_numpy(rows)).to_pylist()
    if labels is None:
        described = {size: expected_answer(raw.type, size, answer_format) for size in set(sizes)}
        expected = [described[size] for size in sizes]
    else:
        row_labels = labels.take(from_numpy(rows)).to_pylist()
        expected = [
            expected_answer(raw.type, size, answer_format, these)
            for size, these in zip(sizes, row_labels, strict=True)
        ]
    withheld = [value is None or value in ("", "-1") or value == -1 for value in values]
    notes = [_WITHHELD if flag else "" for flag in withheld]
    read = pc.is_valid(index).take(from_numpy(rows)).to_pylist()
    kinds: list[ProblemKind] = [
        "label_withheld" if flag else "answer_out_of_range" if readable else "answer_unreadable"
        for flag, readable in zip(withheld, read, strict=True)
    ]
    problems = Found.at(raw, rows, (mapping.answer,), expected, notes, kind=kinds)
    return pc.if_else(bad, scalar(None, pa.int64()), index), problems


def _core_problems(mapping: Description, samples: pa.Table) -> list[Found]:
    """Context, choice and extra problems of the sample rows, named by their source columns."""
    # an extra that is not a struct is the constant "{}" (no column left for it): nothing
    # to check, and checking would parse it row by row
    struct = pa.types.is_struct(samples.schema.field("extra").type)
    checked = ("context", "choices", "extra") if struct else ("context", "choices")
    groups = found(samples, columns=checked)
    return [group.with_path(_source_path(mapping, group.path)) for group in groups]


def _source_path(mapping: Description, path: tuple[PathPart, ...]) -> tuple[PathPart, ...]:
    """A sample column's path as the source's: ``extra.ind`` is the column ``ind``."""
    column, *inside = path
    if column == "context":
        return (_context_label(mapping), *inside)
    if column == "choices":
        return (_choices_label(mapping), *inside)
    return tuple(inside) or path


def _extra(
    mapping: Description, table: pa.Table, extra_type: pa.DataType
) -> pa.Array | pa.ChunkedArray:
    """The other columns as one struct column, chunk by chunk where their chunks line up."""
    n = table.num_rows
    if not pa.types.is_struct(extra_type):
        return constant("{}", n)
    names = extra_columns(mapping, table.column_names)
    columns = [table.column(name) for name in names]
    fields = list(extra_type)
    if columns and columns[0].num_chunks > 1 and same_chunks(columns):  # no copy
        parts = zip(
            *(c.cast(f.type).chunks for c, f in zip(columns, fields, strict=True)), strict=True
        )
        return pa.chunked_array(
            [pa.StructArray.from_arrays(list(part), fields=fields) for part in parts], extra_type
        )
    arrays = [one_array(c).cast(f.type) for c, f in zip(columns, fields, strict=True)]
    return pa.StructArray.from_arrays(arrays, fields=fields)


def _close(name: str, table: pa.Table) -> str:
    """``"; did you mean 'answer'?"`` for a column name that is a typo of one the table has."""
    import difflib  # only for the message of a missing column

    near = difflib.get_close_matches(name, table.column_names, n=1)
    return f"; did you mean {near[0]!r}?" if near else ""
