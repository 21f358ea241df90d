"""The rows a conversion left out, as a sequence of :class:`Reject` and as data.

The problems stay in columns and the original rows stay in the source's Arrow table until
one is asked for, so a million rejects cost a few arrays and lists, never a Python copy of
the input. :meth:`Rejects.table` is the same rejects as an Arrow table (one row each: the
row, the problem's fields and the original row as JSON text), which any engine can write
beside the samples; :meth:`Rejects.from_table` reads such a table back.

Each reject carries its problem's ``kind`` (:data:`~sdvm_hf.errors.KINDS`) in its record and
in its table row; a file or table written before kinds existed reads back with the kind
``"unknown"``, never an error.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeAlias, overload

import numpy as np
import pyarrow as pa

from sdvm_hf.arrow._found import Problems
from sdvm_hf.errors import InputError, Problem, Reject, format_path, known_kind

__all__ = ["REJECT_SCHEMA", "Originals", "Rejects", "json_line"]

_CHUNK = 4096

Originals: TypeAlias = tuple[pa.Table, np.ndarray] | list[dict[str, Any]] | None
"""A part's original rows: positions in a source table, dicts read back, or none kept."""

REJECT_SCHEMA = pa.schema(
    [
        ("row", pa.int64()),
        ("kind", pa.string()),
        ("path", pa.string()),
        ("expected", pa.string()),
        ("got", pa.string()),
        ("note", pa.string()),
        ("original", pa.string()),
    ]
)
"""Rejects as data: the row, the problem (its kind, its path as a JSON list, ...) and the
original row."""


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


def _count(originals: Originals) -> int | None:
    if originals is None:
        return None
    return len(originals[1]) if isinstance(originals, tuple) else len(originals)


class Rejects(Sequence[Reject]):
    """Rejected rows in order: their problems, with the original rows kept in Arrow."""

    def __init__(
        self, problems: Problems | Sequence[Problem] = (), originals: Originals = None
    ) -> None:
        """``originals`` holds the rejected rows: ``(table, positions)`` or dicts."""
        columns = problems if isinstance(problems, Problems) else Problems.of(problems)
        count = _count(originals)
        if count is not None and count != len(columns):
            raise InputError(f"{len(columns)} problems but {count} original rows")
        self._parts: list[tuple[Problems, Originals]] = []
        if len(columns):
            self._parts.append((columns, originals))

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

    @property
    def rows(self) -> list[int]:
        """Every reject's row number."""
        return [int(row) for problems, _ in self._parts for row in problems.rows]

    def categories(self) -> Counter[str]:
        """How many rejects fall in each category: where and which rule (``Problem.category``).

        Unlike :meth:`reasons`, no message text is read, so rewording one keeps the counts.
        """
        counts: Counter[str] = Counter()
        for problems, _ in self._parts:
            counts.update(
                f"{format_path(path)}: {kind}"
                for path, kind in zip(problems.paths, problems.kinds, strict=True)
            )
        return counts

    def __len__(self) -> int:
        return sum(len(problems) for problems, _ in self._parts)

    def _originals(self) -> Iterator[dict[str, Any]]:
        for problems, originals in self._parts:
            if originals is None:
                yield from ({} for _ in range(len(problems)))
            elif isinstance(originals, list):
                yield from originals
            else:
                table, positions = originals
                for start in range(0, len(positions), _CHUNK):
                    chunk = pa.array(positions[start : start + _CHUNK])
                    yield from table.take(chunk).to_pylist()

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
                row: dict[str, Any] = {}
                if isinstance(originals, list):
                    row = originals[position]
                elif originals is not None:
                    table, positions = originals
                    row = table.take(pa.array(positions[position : position + 1])).to_pylist()[0]
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
        """Each reject as a JSON record: row, kind, column, path, expected, got, note, original."""
        for problem, original in zip(self.problems, self._originals(), strict=True):
            yield {
                "row": problem.row,
                "kind": problem.kind,
                "column": problem.where,
                "path": list(problem.path),
                "expected": problem.expected,
                "got": problem.got,
                "note": problem.note,
                "original": original,
            }

    @classmethod
    def from_records(cls, records: Sequence[dict[str, Any]]) -> Rejects:
        """Rejects from records as :meth:`records` gives them (or the tagged form's JSON).

        A record without a ``kind`` (written before kinds existed) reads as ``"unknown"``.
        """
        problems = [
            Problem(
                r["row"],
                tuple(r["path"]),
                r["expected"],
                r["got"],
                r["note"],
                known_kind(r.get("kind")),
            )
            for r in records
        ]
        return cls(problems, [r["original"] for r in records])

    def table(self) -> pa.Table:
        """The rejects as data (:data:`REJECT_SCHEMA`), the original rows as JSON text."""
        rows, paths, expected, got, notes = [], [], [], [], []
        kinds: list[str] = []
        for problems, _ in self._parts:
            texts = {path: json.dumps(list(path)) for path in set(problems.paths)}
            rows.append(problems.rows)
            paths += [texts[path] for path in problems.paths]
            expected += problems.expected
            got += problems.got
            notes += problems.notes
            kinds += problems.kinds
        return pa.table(
            {
                "row": pa.array(np.concatenate(rows) if rows else [], pa.int64()),
                "kind": pa.array(kinds, pa.string()),
                "path": pa.array(paths, pa.string()),
                "expected": pa.array(expected, pa.string()),
                "got": pa.array(got, pa.string()),
                "note": pa.array(notes, pa.string()),
                "original": pa.array(list(map(json_line, self._originals())), pa.string()),
            },
            schema=REJECT_SCHEMA,
        )

    @classmethod
    def from_table(cls, table: pa.Table) -> Rejects:
        """Rejects from a table in :data:`REJECT_SCHEMA` (what :meth:`table` makes).

        A table without the ``kind`` column (written before kinds existed) reads as
        ``"unknown"``.
        """
        names = [n for n in REJECT_SCHEMA.names if n != "kind" or n in table.column_names]
        columns = table.select(names).to_pydict()
        kinds = [known_kind(kind) for kind in columns.get("kind", [None] * table.num_rows)]
        problems = Problems(
            np.array(columns["row"], dtype=np.int64),
            [tuple(json.loads(path)) for path in columns["path"]],
            columns["expected"],
            columns["got"],
            columns["note"],
            kinds,
        )
        return cls(problems, [json.loads(text) for text in columns["original"]])


def _reject(problem: Problem, original: dict[str, Any]) -> Reject:
    return Reject(
        problem.row,
        problem.path,
        problem.expected,
        problem.got,
        problem.note,
        problem.kind,
        original=original,
    )
