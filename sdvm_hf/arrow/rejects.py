"""The rows a conversion left out, as a sequence of :class:`Reject` and as data.

The original rows stay in Arrow until one is asked for, so a million rejects cost their
problems and an Arrow ``take`` of the rows, never a Python copy of the whole input.
:meth:`Rejects.table` is the same rejects as an Arrow table (one row each: the row key, the
problem's fields and the original row as JSON text), which any engine can write beside the
samples; :meth:`Rejects.from_table` reads such a table back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeAlias, overload

import pyarrow as pa

from sdvm_hf.errors import PathPart, Problem, Reject

_CHUNK = 4096

_Originals: TypeAlias = pa.Table | list[dict[str, Any]] | None
"""The original rows of a part: in Arrow, read back from JSON, or not kept."""

REJECT_SCHEMA = pa.schema(
    [
        ("row", pa.int64()),
        ("path", pa.string()),
        ("expected", pa.string()),
        ("got", pa.string()),
        ("note", pa.string()),
        ("original", pa.string()),
    ]
)
"""Rejects as data: the row, the problem (its path as a JSON list) and the original row."""


def _plain(value: Any) -> Any:
    """``value`` with what strict JSON cannot carry spelled as text (see :func:`json_line`)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value


def json_line(value: Any) -> str:
    r"""Strict JSON text of a source value.

    A source row can hold what JSON cannot: a NaN or an infinity is written as the string
    ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``, bytes as text (undecodable bytes as
    ``\\x..`` escapes), and dates, decimals and the like as their ``str()``.
    """
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:
        return json.dumps(_plain(value), ensure_ascii=False, allow_nan=False, default=str)


class Rejects(Sequence[Reject]):
    """Rejected rows in order: their problems, with the original rows kept in Arrow."""

    def __init__(self, problems: Sequence[Problem] = (), originals: _Originals = None) -> None:
        """``originals`` holds the rejected rows (Arrow, or dicts), ``i`` for ``problems[i]``."""
        count = None if originals is None else len(originals)
        if count is not None and count != len(problems):
            raise ValueError(f"{len(problems)} problems but {count} original rows")
        self._parts: list[tuple[list[Problem], _Originals]] = []
        if problems:
            self._parts.append((list(problems), originals))

    @classmethod
    def join(cls, parts: Iterable[Rejects]) -> Rejects:
        """The rejects of several conversions, in order."""
        joined = cls()
        for part in parts:
            joined._parts += part._parts
        return joined

    @property
    def problems(self) -> list[Problem]:
        """Every reject's problem, without building the original rows."""
        return [problem for problems, _ in self._parts for problem in problems]

    def __len__(self) -> int:
        return sum(len(problems) for problems, _ in self._parts)

    def _originals(self) -> Iterator[dict[str, Any]]:
        for problems, originals in self._parts:
            if originals is None:
                yield from ({} for _ in problems)
            elif isinstance(originals, list):
                yield from originals
            else:
                for start in range(0, originals.num_rows, _CHUNK):
                    yield from originals.slice(start, _CHUNK).to_pylist()

    def __iter__(self) -> Iterator[Reject]:
        for problem, original in zip(self.problems, self._originals(), strict=True):
            yield _reject(problem, original)

    @overload
    def __getitem__(self, index: int) -> Reject: ...
    @overload
    def __getitem__(self, index: slice) -> list[Reject]: ...
    def __getitem__(self, index: int | slice) -> Reject | list[Reject]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(f"reject index {index} out of range for {len(self)} rejects")
        for problems, originals in self._parts:
            if position < len(problems):
                row: dict[str, Any]
                if originals is None:
                    row = {}
                elif isinstance(originals, list):
                    row = originals[position]
                else:
                    row = originals.slice(position, 1).to_pylist()[0]
                return _reject(problems[position], row)
            position -= len(problems)
        raise AssertionError("unreachable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Rejects({len(self)} rows)"

    def records(self) -> Iterator[dict[str, Any]]:
        """Each reject as a JSON-ready record: row, column, expected, got, note, original."""
        for problem, original in zip(self.problems, self._originals(), strict=True):
            yield {
                "row": problem.row,
                "column": problem.where,
                "path": list(problem.path),
                "expected": problem.expected,
                "got": problem.got,
                "note": problem.note,
                "original": original,
            }

    def table(self) -> pa.Table:
        """The rejects as data (:data:`REJECT_SCHEMA`), the original rows as JSON text."""
        problems = self.problems
        return pa.table(
            {
                "row": pa.array([p.row for p in problems], pa.int64()),
                "path": pa.array([json.dumps(list(p.path)) for p in problems], pa.string()),
                "expected": pa.array([p.expected for p in problems], pa.string()),
                "got": pa.array([p.got for p in problems], pa.string()),
                "note": pa.array([p.note for p in problems], pa.string()),
                "original": pa.array(list(map(json_line, self._originals())), pa.string()),
            },
            schema=REJECT_SCHEMA,
        )

    @classmethod
    def from_table(cls, table: pa.Table) -> Rejects:
        """Rejects from a table in :data:`REJECT_SCHEMA` (what :meth:`table` makes)."""
        columns = table.select(REJECT_SCHEMA.names).to_pydict()
        problems = [
            Problem(row, _path(path), expected, got, note)
            for row, path, expected, got, note in zip(
                columns["row"],
                columns["path"],
                columns["expected"],
                columns["got"],
                columns["note"],
                strict=True,
            )
        ]
        return cls(problems, [json.loads(text) for text in columns["original"]])


def _path(text: str) -> tuple[PathPart, ...]:
    return tuple(json.loads(text))


def _reject(problem: Problem, original: dict[str, Any]) -> Reject:
    return Reject(
        problem.row, problem.path, problem.expected, problem.got, problem.note, original=original
    )
