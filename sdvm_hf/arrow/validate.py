"""Row checks of a sample table, vectorised: the table-level twin of the sample validators.

The rules are the ones :class:`~sdvm_hf.samples.MultipleChoiceSample` enforces, evaluated
with Arrow compute kernels so that a million rows cost a few passes over the columns. A
table that passes can be turned into samples without re-running pydantic on every row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.errors import Problem
from sdvm_hf.samples import RESERVED_KEYS, STAGE_KEYS, STYLES, TASK_TYPE

# Exactly the characters for which Python's str.isspace() is true, so that "blank" means the
# same here as in the sample validator.
_BLANK = (
    r"^[\t-\r\x1c-\x20\x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]*$"
)


def blank(strings: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """True where a string is empty or whitespace only (null stays null)."""
    return pc.match_substring_regex(strings, _BLANK)


def _mask(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Nulls in a boolean mask count as bad."""
    return pc.fill_null(values, True)


def _rows(mask: pa.Array | pa.ChunkedArray) -> list[int]:
    return [int(i) for i in pc.indices_nonzero(mask).to_pylist()]


def _got(column: pa.ChunkedArray | pa.Array, row: int) -> str:
    value = column[row].as_py()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _finite_problems(array: pa.Array, where: str) -> Iterator[tuple[list[int], str]]:
    """(rows, path) for each float leaf below ``array`` holding NaN or infinity."""
    dtype = array.type
    if pa.types.is_floating(dtype):
        yield _rows(pc.invert(pc.fill_null(pc.is_finite(array), True))), where
    elif pa.types.is_struct(dtype):
        for i, child in enumerate(dtype):
            yield from _finite_problems(array.field(i), f"{where}.{child.name}")
    elif pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        parents = pc.list_parent_indices(array)
        for inner, path in _finite_problems(array.flatten(), f"{where}[]"):
            rows = pc.unique(parents.take(pa.array(inner, pa.int64())))
            yield sorted(rows.to_pylist()), path


def _reject_nonfinite(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def parse_json_object(text: str, column: str) -> dict[str, Any]:
    """Parse one JSON object cell; ``ValueError`` saying what arrived otherwise."""
    value = json.loads(text, parse_constant=_reject_nonfinite)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    if column == "extra":
        clash = [key for key in value if key in RESERVED_KEYS]
        if clash:
            raise ValueError(f"extra key {clash[0]!r} is reserved by the wire format")
    return value


def _json_cells(table: pa.Table, column: str) -> Iterator[Problem]:
    values = table.column(column).to_pylist()
    for row, text in enumerate(values):
        if text is None:
            if column == "extra":
                yield Problem(row, column, "expected a JSON object, got None")
            continue
        try:
            parse_json_object(text, column)
        except ValueError as error:
            yield Problem(row, column, f"{error} in {text[:60]!r}")


def find_problems(
    table: pa.Table, limit: int | None = None, columns: Collection[str] | None = None
) -> list[Problem]:
    """Every rule a sample table's rows break, first rows first (at most ``limit``).

    ``table`` must be canonical (see :func:`sdvm_hf.arrow.schema.canonical`); ``columns``
    limits the checks to those sample columns (default: all).
    """
    checked = set(columns) if columns is not None else None

    def wanted(column: str) -> bool:
        return checked is None or column in checked

    problems: list[Problem] = []

    def report(rows: list[int], column: str, reason: Callable[[int], str]) -> None:
        if wanted(column):
            problems.extend(Problem(row, column, reason(row)) for row in rows)

    col = table.column
    if wanted("task_type"):
        report(
            _rows(_mask(pc.not_equal(col("task_type"), TASK_TYPE))),
            "task_type",
            lambda r: f"expected {TASK_TYPE!r}, got {_got(col('task_type'), r)}",
        )
    if wanted("style"):
        report(
            _rows(pc.invert(pc.is_in(col("style"), value_set=pa.array(STYLES)))),
            "style",
            lambda r: f"expected 'continuation' or 'qa', got {_got(col('style'), r)}",
        )
    if wanted("context"):
        report(
            _rows(_mask(blank(col("context")))),
            "context",
            lambda r: f"expected a non-empty string, got {_got(col('context'), r)}",
        )
    choices = col("choices")
    lengths = pc.list_value_length(choices)
    report(
        _rows(_mask(pc.less(lengths, 2))),
        "choices",
        lambda r: f"expected at least two choices, got {_got(choices, r)}",
    )
    flat = pc.list_flatten(choices)
    if flat.null_count and wanted("choices"):
        parents = pc.list_parent_indices(choices)
        report(
            pc.unique(pc.filter(parents, pc.is_null(flat))).to_pylist(),
            "choices",
            lambda r: f"expected every choice to be a string, got {_got(choices, r)}",
        )
    if wanted("answer_index"):
        answer = col("answer_index")
        out_of_range = pc.or_kleene(pc.less(answer, 0), pc.greater_equal(answer, lengths))
        valid_choices = pc.fill_null(pc.greater_equal(lengths, 2), False)
        report(
            _rows(pc.and_(valid_choices, _mask(out_of_range))),
            "answer_index",
            lambda r: (
                f"expected 0..{lengths[r].as_py() - 1} for {lengths[r].as_py()} choices, "
                f"got {_got(answer, r)}"
            ),
        )
    if wanted("extra") and pa.types.is_struct(table.schema.field("extra").type):
        extra = col("extra").combine_chunks()
        for rows, path in _finite_problems(extra, "extra"):
            reason = f"{path} is not a finite number (JSON has no NaN or infinity)"
            problems.extend(Problem(row, "extra", reason) for row in rows)
    elif wanted("extra"):
        problems.extend(_json_cells(table, "extra"))
    for key in STAGE_KEYS:
        if wanted(key):
            problems.extend(_json_cells(table, key))
    problems.sort(key=lambda problem: problem.row)
    return problems if limit is None else problems[:limit]
