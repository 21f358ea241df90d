"""Checks of a sample table: its schema, then its rows, vectorised.

The row rules are the ones :class:`~sdvm_hf.samples.MultipleChoiceSample` enforces,
evaluated with Arrow compute kernels so that a million rows cost a few passes over the
columns. A table that passes can be turned into samples without running pydantic on every row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import (
    BLOCKS,
    STYLES,
    TASK_TYPE,
    answer_range,
    reserved_key,
    shorten,
)
from sdvm_hf.arrow._chunks import row_chunks
from sdvm_hf.arrow._found import Found, all_problems
from sdvm_hf.arrow.schema import (
    COLUMNS,
    EXTRA_MISSING,
    STRING_TYPES,
    normal_type,
    sample_schema,
)
from sdvm_hf.errors import PathPart, Problem, SampleTableError

# -- the schema ----------------------------------------------------------------------------

_JSON_SCALARS = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean, pa.types.is_null)


def is_list(dtype: pa.DataType) -> bool:
    """Whether ``dtype`` is a list type (regular or large)."""
    return bool(pa.types.is_list(dtype) or pa.types.is_large_list(dtype))


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


def _expected_type(name: str, dtype: pa.DataType) -> str | None:
    """What column ``name`` should be, when ``dtype`` is not that (``None`` when it is)."""
    if name in BLOCKS:  # a column of nulls is a column of absent blocks
        return None if dtype in STRING_TYPES or pa.types.is_null(dtype) else "string"
    if name in ("task_type", "style", "context"):
        return None if dtype in STRING_TYPES else "string"
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
    twice = sorted({name for name in names if names.count(name) > 1})
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
        raise SampleTableError(f"{source} is not a sample table: " + "; ".join(problems))


def canonical(table: pa.Table) -> pa.Table:
    """``table`` with exactly the sample columns, in order, cast to the canonical types.

    The caller has run :func:`check_schema`. Large and view string types become ``string``,
    large lists ``list`` (in ``extra`` too, see :func:`~sdvm_hf.arrow.schema.normal_type`);
    ``answer_index`` becomes int64. ``extra`` keeps its own field types otherwise. An
    :data:`EXTRA_MISSING` column that lists nothing is dropped, so a table whose samples
    have every key has the nine columns, however it was built.
    """
    extra = normal_type(table.schema.field("extra").type)
    missing = EXTRA_MISSING in table.schema.names and _lists_any(table.column(EXTRA_MISSING))
    target = sample_schema(extra, missing=missing)
    table = table.select(list(target.names))
    if table.schema.remove_metadata() == target:
        return table
    return table.cast(target)


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


# -- the rows ------------------------------------------------------------------------------

# Exactly the characters for which Python's str.isspace() is true, so that "blank" means the
# same here as in the sample validator.
_BLANK = (
    r"^[\t-\r\x1c-\x20\x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]*$"
)


def blank(strings: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """True where a string is empty or whitespace only (null stays null)."""
    return pc.match_substring_regex(strings, _BLANK)


def _bad(mask: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The rows where ``mask`` is true or null."""
    return np.asarray(pc.indices_nonzero(pc.fill_null(mask, True)), dtype=np.int64)


Rule = Callable[[pa.Table], Iterator[Found]]


def _task_type(table: pa.Table) -> Iterator[Found]:
    column = table.column("task_type")
    yield Found.at(column, _bad(pc.not_equal(column, TASK_TYPE)), ("task_type",), repr(TASK_TYPE))


def _style(table: pa.Table) -> Iterator[Found]:
    column = table.column("style")
    bad = _bad(pc.invert(pc.is_in(column, value_set=pa.array(STYLES))))
    yield Found.at(column, bad, ("style",), " or ".join(map(repr, STYLES)))


def _context(table: pa.Table) -> Iterator[Found]:
    column = table.column("context")
    yield Found.at(column, _bad(blank(column)), ("context",), "a non-empty string")


def _choices(table: pa.Table) -> Iterator[Found]:
    choices = table.column("choices")
    too_few = _bad(pc.less(pc.list_value_length(choices), 2))
    yield Found.at(choices, too_few, ("choices",), "at least two choices")
    flat = pc.list_flatten(choices)
    if flat.null_count:
        parents = pc.list_parent_indices(choices)
        null_choice = np.unique(np.asarray(pc.filter(parents, pc.is_null(flat)), np.int64))
        rows = np.setdiff1d(null_choice, too_few)
        yield Found.at(choices, rows, ("choices",), "every choice to be a string")


def _answer_index(table: pa.Table) -> Iterator[Found]:
    answer = table.column("answer_index")
    lengths = pc.list_value_length(table.column("choices"))
    out_of_range = pc.or_kleene(pc.less(answer, 0), pc.greater_equal(answer, lengths))
    valid_choices = pc.fill_null(pc.greater_equal(lengths, 2), False)
    rows = _bad(pc.and_(valid_choices, pc.fill_null(out_of_range, True)))
    counts = lengths.take(pa.array(rows)).to_pylist()
    yield Found.at(answer, rows, ("answer_index",), [answer_range(n) for n in counts])


def _nonfinite(
    array: pa.Array, path: tuple[PathPart, ...]
) -> Iterator[tuple[int, tuple[PathPart, ...], Any]]:
    """(row, path, value) for each float leaf below ``array`` holding NaN or infinity."""
    dtype = array.type
    if pa.types.is_floating(dtype):
        for row in pc.indices_nonzero(pc.invert(pc.fill_null(pc.is_finite(array), True))):
            yield row.as_py(), path, array[row.as_py()].as_py()
    elif pa.types.is_struct(dtype):
        for i, child in enumerate(dtype):
            yield from _nonfinite(array.field(i), (*path, child.name))
    elif is_list(dtype):
        inner = list(_nonfinite(array.flatten(), path))
        if inner:
            flat = pa.array([position for position, _, _ in inner], pa.int64())
            parents = pc.list_parent_indices(array).take(flat).to_pylist()
            starts = array.offsets.take(pa.array(parents, pa.int64())).to_pylist()
            for (position, where, value), row, start in zip(inner, parents, starts, strict=True):
                # the offsets of a sliced list array count from the start of its values
                index = position - (start - array.offsets[0].as_py())
                yield row, (*where[: len(path)], index, *where[len(path) :]), value


def _floats(dtype: pa.DataType) -> bool:
    """Whether values of ``dtype`` can hold a float anywhere inside."""
    if pa.types.is_floating(dtype):
        return True
    if pa.types.is_struct(dtype):
        return any(_floats(child.type) for child in dtype)
    return bool(is_list(dtype) and _floats(dtype.value_type))


def _extra(table: pa.Table) -> Iterator[Found]:
    if not pa.types.is_struct(table.schema.field("extra").type):
        yield from _json_cells(table, "extra")
        return
    column = table.column("extra")
    if (
        not column.null_count
        and not _floats(column.type)
        and EXTRA_MISSING not in table.column_names
    ):
        return  # no null row, no float to be NaN, no missing keys: nothing to check
    extra = column.combine_chunks()
    nulls = _bad(extra.is_null())
    yield Found(nulls, ("extra",), "an object (a struct row)", ["None"] * len(nulls))
    seen = set(nulls.tolist())
    if EXTRA_MISSING in table.column_names:
        for group in _missing_keys(table, extra):
            seen.update(group.rows.tolist())
            yield group
    for row, path, value in sorted(_nonfinite(extra, ("extra",)), key=lambda item: item[0]):
        if row not in seen:
            seen.add(row)
            expected = "a finite number (JSON has no NaN or infinity)"
            yield Found(np.array([row], np.int64), path, expected, [repr(value)])


def _missing_keys(table: pa.Table, extra: pa.StructArray) -> Iterator[Found]:
    """Rows whose :data:`EXTRA_MISSING` names a key the struct lacks, or one it holds a value of.

    A key is missing only where its field is null: a value there would be lost on the way back.
    """
    missing = table.column(EXTRA_MISSING).combine_chunks()
    if pa.types.is_null(missing.type):
        return
    flat = pc.list_flatten(missing)
    parents = np.asarray(pc.list_parent_indices(missing), np.int64)
    names = [child.name for child in extra.type]
    unknown = _bad(pc.invert(pc.is_in(flat, value_set=pa.array(names, pa.string()))))
    expected = f"names of extra fields ({', '.join(names)})"
    yield replace(Found.at(flat, unknown, (EXTRA_MISSING,), expected), rows=parents[unknown])
    for index, name in enumerate(names):
        listed = np.asarray(pc.fill_null(pc.equal(flat, name), False), bool)
        rows = parents[listed]
        if len(rows):
            valued = np.asarray(extra.field(index).is_valid().take(pa.array(rows)), bool)
            bad = np.unique(rows[valued])
            expected = f"null in a row whose {EXTRA_MISSING} lists {name!r}"
            yield Found.at(extra.field(index), bad, ("extra", name), expected)


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def _json_cell_problem(text: str | None, column: str) -> tuple[str, str] | None:
    """``(expected, got)`` when a JSON text cell is not a valid object, else ``None``."""
    if text is None:
        return None if column != "extra" else ("a JSON object", "None")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as error:
        return "a JSON object", f"{shorten(repr(text), 60)} ({error})"
    if not isinstance(value, dict):
        return "a JSON object", f"{type(value).__name__} {shorten(text, 60)}"
    clash = reserved_key(value) if column == "extra" else None
    if clash is not None:
        return "a JSON object without reserved wire keys", f"the key {clash!r}"
    return None


def _json_cells(table: pa.Table, column: str) -> Iterator[Found]:
    values = table.column(column)
    if values.null_count == len(values) and column != "extra":
        return
    for row, text in enumerate(values.to_pylist()):
        problem = _json_cell_problem(text, column)
        if problem is not None:
            yield Found(np.array([row], np.int64), (column,), problem[0], [problem[1]])


def _blocks(table: pa.Table) -> Iterator[Found]:
    for key in BLOCKS:
        yield from _json_cells(table, key)


RULES: dict[str, Rule] = {
    "task_type": _task_type,
    "style": _style,
    "context": _context,
    "choices": _choices,
    "answer_index": _answer_index,
    "extra": _extra,
    "blocks": _blocks,
}
"""One rule per sample column (``blocks`` checks the three stage blocks)."""


def found(table: pa.Table, columns: Collection[str] | None = None) -> list[Found]:
    """What every rule (or those of ``columns``) finds in a canonical sample table."""
    return [
        group
        for name, rule in RULES.items()
        if columns is None or name in columns
        for group in rule(table)
    ]


def find_problems(
    table: pa.Table, limit: int | None = None, columns: Collection[str] | None = None
) -> list[Problem]:
    """Every rule a canonical sample table's rows break, first rows first (at most ``limit``).

    ``columns`` limits the checks to those rules of :data:`RULES` (default: all).
    """
    return all_problems(found(table, columns), limit)
