"""The row rules of a sample table, vectorised: the table-level twin of the sample validators.

Each rule reports what it finds column-wise (:class:`~sdvm_hf.arrow._found.Found`), so a
million bad rows cost a few arrays, not a million objects.
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
from sdvm_hf.arrow._found import Found, all_problems
from sdvm_hf.arrow._values import FALSE, TRUE, from_numpy, rows_where, scalar, strings, to_numpy
from sdvm_hf.arrow.schema import (
    EXTRA_MISSING,
)
from sdvm_hf.errors import InputError, PathPart, Problem, ProblemKind

# Exactly the characters for which Python's str.isspace() is true, so that "blank" means the
# same here as in the sample validator.
_BLANK = (
    r"^[\t-\r\x1c-\x20\x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]*$"
)


def is_list(dtype: pa.DataType) -> bool:
    """Whether ``dtype`` is a list type (regular or large)."""
    return bool(pa.types.is_list(dtype) or pa.types.is_large_list(dtype))


_SPACES = [c for c in map(chr, range(0x3100)) if c.isspace()]  # none above U+3000
_ASCII_BLANK = np.zeros(256, dtype=np.bool_)
_ASCII_BLANK[[ord(c) for c in _SPACES if c.isascii()]] = True
_WIDE_LEADS = np.zeros(256, dtype=np.bool_)
_WIDE_LEADS[[c.encode()[0] for c in _SPACES if not c.isascii()]] = True
_WIDE_BLANK = np.array([int.from_bytes(c.encode()) for c in _SPACES if not c.isascii()])
"""The blank characters of :data:`_BLANK` in UTF-8: ASCII ones by their byte, the others by
their first byte and by their two or three bytes as a number."""


def blank(strings: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """True where a string is empty or whitespace only (null stays null).

    The pattern runs only on the strings that are empty or start with a blank character:
    on a million MMLU questions, none (0.1 s of matching, 1M MMLU rows' whole conversion
    being 0.45 s).
    """
    if isinstance(strings, pa.ChunkedArray):
        return pa.chunked_array([blank(chunk) for chunk in strings.chunks], pa.bool_())
    if strings.type != pa.string() or not len(strings):
        return pc.match_substring_regex(strings, _BLANK)
    rows = np.flatnonzero(_may_be_blank(strings))
    found = np.zeros(len(strings), dtype=np.bool_)
    if len(rows):
        matched = pc.match_substring_regex(strings.take(from_numpy(rows)), _BLANK)
        found[rows] = to_numpy(pc.fill_null(matched, FALSE))
    nulls = to_numpy(strings.is_null()) if strings.null_count else None
    return from_numpy(found, mask=nulls)


def _may_be_blank(strings: pa.StringArray) -> np.ndarray:
    """Where a string is empty or its first character is blank (read from its first bytes)."""
    n = len(strings)
    offsets = np.frombuffer(strings.buffers()[1], np.int32, n + 1, strings.offset * 4)
    empty: np.ndarray = np.diff(offsets) <= 0
    data = strings.buffers()[2]
    if data is None or not data.size:
        return empty
    text = np.frombuffer(data, np.uint8)
    starts = offsets[:-1]
    first = text[np.minimum(starts, data.size - 1)]
    maybe = empty | _ASCII_BLANK[first]
    wide = np.flatnonzero(_WIDE_LEADS[first])  # may start a blank of two or three bytes
    if len(wide):
        second, third = (text[np.minimum(starts[wide] + k, data.size - 1)] for k in (1, 2))
        two = (first[wide].astype(np.int32) << 8) | second
        maybe[wide] |= np.isin(two, _WIDE_BLANK) | np.isin((two << 8) | third, _WIDE_BLANK)
    return np.asarray(maybe, dtype=np.bool_)


Rule = Callable[[pa.Table], Iterator[Found]]


def _task_type(table: pa.Table) -> Iterator[Found]:
    column = table.column("task_type")
    bad = rows_where(pc.not_equal(column, scalar(TASK_TYPE, pa.string())), null=True)
    yield Found.at(column, bad, ("task_type",), repr(TASK_TYPE), kind="wrong_task_type")


def _style(table: pa.Table) -> Iterator[Found]:
    column = table.column("style")
    bad = rows_where(pc.invert(pc.is_in(column, value_set=strings(STYLES))), null=True)
    yield Found.at(column, bad, ("style",), " or ".join(map(repr, STYLES)), kind="unknown_style")


def _context(table: pa.Table) -> Iterator[Found]:
    column = table.column("context")
    bad = rows_where(blank(column), null=True)
    yield Found.at(column, bad, ("context",), "a non-empty string", kind="empty_context")


def _choices(table: pa.Table) -> Iterator[Found]:
    choices = table.column("choices")
    too_few = rows_where(pc.less(pc.list_value_length(choices), scalar(2, pa.int32())), null=True)
    yield Found.at(choices, too_few, ("choices",), "at least two choices", kind="too_few_choices")
    flat = pc.list_flatten(choices)
    if flat.null_count:
        parents = pc.list_parent_indices(choices)
        null_choice = np.unique(np.asarray(pc.filter(parents, pc.is_null(flat)), np.int64))
        rows = np.setdiff1d(null_choice, too_few)
        expected = "every choice to be a string"
        yield Found.at(choices, rows, ("choices",), expected, kind="null_choice")


def out_of_range(
    answer: pa.Array | pa.ChunkedArray, lengths: pa.Array | pa.ChunkedArray
) -> pa.Array | pa.ChunkedArray:
    """Where ``answer`` is no index of its row's choices (null is none), never null.

    ``lengths`` counts each row's choices; a row of fewer than two is never marked here (it
    is its choices' problem).

    >>> out_of_range(pa.array([0, 2, None, 5]), pa.array([2, 2, 3, 1])).to_pylist()
    [False, True, True, False]
    """
    outside = pc.or_kleene(
        pc.less(answer, scalar(0, answer.type)), pc.greater_equal(answer, lengths)
    )
    enough = pc.fill_null(pc.greater_equal(lengths, scalar(2, lengths.type)), FALSE)
    return pc.and_(enough, pc.fill_null(outside, TRUE))


def _answer_index(table: pa.Table) -> Iterator[Found]:
    answer = table.column("answer_index")
    lengths = pc.list_value_length(table.column("choices"))
    rows = rows_where(out_of_range(answer, lengths))
    counts = lengths.take(from_numpy(rows)).to_pylist()
    expected = [answer_range(n) for n in counts]
    yield Found.at(answer, rows, ("answer_index",), expected, kind="answer_out_of_range")


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
    nulls = rows_where(extra.is_null(), null=True)
    expected = "an object (a struct row)"
    yield Found(nulls, ("extra",), expected, ["None"] * len(nulls), kind="null_extra")
    seen = set(nulls.tolist())
    if EXTRA_MISSING in table.column_names:
        for group in _missing_keys(table, extra):
            seen.update(group.rows.tolist())
            yield group
    for row, path, value in sorted(_nonfinite(extra, ("extra",)), key=lambda item: item[0]):
        if row not in seen:
            seen.add(row)
            expected = "a finite number (JSON has no NaN or infinity)"
            rows = np.array([row], np.int64)
            yield Found(rows, path, expected, [repr(value)], kind="not_finite")


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
    unknown = rows_where(
        pc.invert(pc.is_in(flat, value_set=pa.array(names, pa.string()))), null=True
    )
    expected = f"names of extra fields ({', '.join(names)})"
    named = Found.at(flat, unknown, (EXTRA_MISSING,), expected, kind="unknown_missing_key")
    yield replace(named, rows=parents[unknown])
    for index, name in enumerate(names):
        listed = np.asarray(pc.fill_null(pc.equal(flat, name), False), bool)
        rows = parents[listed]
        if len(rows):
            valued = np.asarray(extra.field(index).is_valid().take(from_numpy(rows)), bool)
            bad = np.unique(rows[valued])
            expected = f"null in a row whose {EXTRA_MISSING} lists {name!r}"
            at = ("extra", name)
            yield Found.at(extra.field(index), bad, at, expected, kind="missing_key_has_value")


def _reject_constant(token: str) -> Any:
    raise InputError(f"{token} is not JSON")


def _json_cell_problem(text: str | None, column: str) -> tuple[str, str, ProblemKind] | None:
    """``(expected, got, kind)`` when a JSON text cell is not a valid object, else ``None``."""
    if text is None:
        return None if column != "extra" else ("a JSON object", "None", "null_extra")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as error:
        return "a JSON object", f"{shorten(repr(text), 60)} ({error})", "not_json_object"
    if not isinstance(value, dict):
        got = f"{type(value).__name__} {shorten(text, 60)}"
        return "a JSON object", got, "not_json_object"
    clash = reserved_key(value) if column == "extra" else None
    if clash is not None:
        expected = "a JSON object without reserved wire keys"
        return expected, f"the key {clash!r}", "reserved_key"
    return None


def _json_cells(table: pa.Table, column: str) -> Iterator[Found]:
    values = table.column(column)
    if values.null_count == len(values) and column != "extra":
        return
    for row, text in enumerate(values.to_pylist()):
        problem = _json_cell_problem(text, column)
        if problem is not None:
            expected, got, kind = problem
            yield Found(np.array([row], np.int64), (column,), expected, [got], kind=kind)


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

    ``columns`` limits the checks to those rules of :data:`RULES` (default: all). Text that
    is not UTF-8 is reported first, alone: no other rule can read it.
    """
    broken = utf8_problems(table)
    if broken:
        return broken[:limit]
    return all_problems(found(table, columns), limit)


def utf8_problems(table: pa.Table) -> list[Problem]:
    """The cells whose text is not UTF-8 (pyarrow readers do not all check), rows first.

    A whole-table check (a few milliseconds for 10 MB) finds nothing on good data; only a
    column that fails it is searched row by row.
    """
    if all(_valid(column) for column in table.columns):
        return []
    problems = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        if _valid(column):
            continue
        # Row by row: a slice of a list or struct validates its whole child array, so
        # only decoding the row's own values says whether it is the row at fault
        problems += [
            Problem(row, (name,), "UTF-8 text", "bytes that are not UTF-8", kind="not_utf8")
            for row in range(len(column))
            if not _decodes(column.slice(row, 1))
        ]
    return sorted(problems, key=lambda problem: problem.row)


def _valid(values: pa.ChunkedArray) -> bool:
    """``values.validate(full=True)`` passes: every offset in order, all text UTF-8."""
    try:
        if is_list(values.type) or pa.types.is_struct(values.type):
            for chunk in values.chunks:
                _validate(chunk)
        else:  # a flat column's chunks hold their own values: one call checks them all
            values.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _validate(array: pa.Array) -> None:
    """``array.validate(full=True)``, each value once.

    The chunks of a list or struct column read from Parquet each hold the whole column's
    child (a chunk is a window on it), so a full validation of every chunk validates the
    child once per chunk: eight times over for a million HellaSwag rows. Here a nested chunk
    gets the structural check and its offsets' order, then only its own window of the child
    is validated, down to the leaves; a leaf is validated in full (its offsets, its UTF-8).
    Raises ``ArrowInvalid`` as the full validation does.
    """
    dtype = array.type
    if is_list(dtype):
        array.validate()
        offsets = np.asarray(array.offsets)
        if len(offsets) and (
            offsets[0] < 0 or offsets[-1] > len(array.values) or (np.diff(offsets) < 0).any()
        ):
            raise pa.ArrowInvalid("list offsets out of order or out of bounds")
        start = int(offsets[0]) if len(offsets) else 0
        stop = int(offsets[-1]) if len(offsets) else 0
        _validate(array.values.slice(start, stop - start))
    elif pa.types.is_struct(dtype):
        array.validate()
        for index in range(dtype.num_fields):
            _validate(array.field(index))
    else:
        array.validate(full=True)


def _decodes(values: pa.ChunkedArray) -> bool:
    try:
        values.to_pylist()
    except UnicodeDecodeError:
        return False
    return True
