"""Problems found by the vectorised checks, kept column by column until someone reads them.

A check over a million rows finds its problems as one :class:`Found` (the rows, one path,
what was expected, what arrived): a few arrays and lists, not a million objects. Only the
problems someone asks for become :class:`~sdvm_hf.errors.Problem` objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pyarrow as pa

from sdvm_hf._wire import shorten
from sdvm_hf.errors import PathPart, Problem, ProblemKind

T = TypeVar("T")


def gots(array: pa.Array | pa.ChunkedArray, rows: Sequence[int] | np.ndarray) -> list[str]:
    """The values at ``rows`` as they arrived, for messages (one Arrow take, no loop)."""
    if len(rows) == 0:
        return []
    values = array.take(pa.array(np.asarray(rows, dtype=np.int64))).to_pylist()
    return [shorten(repr(value)) for value in values]


@dataclass(frozen=True)
class Found:
    """The problems one check found: one per row, all at one path."""

    rows: np.ndarray
    """The rows (positions in the checked table), int64."""
    path: tuple[PathPart, ...]
    """Where, in every row."""
    expected: str | list[str]
    """What a valid value is: one text for all rows, or one per row."""
    got: list[str]
    """What arrived, one per row."""
    note: str | list[str] = ""
    """Why it matters, for all rows or one per row."""
    kind: ProblemKind | list[ProblemKind] = field(kw_only=True)
    """Which rule (:data:`~sdvm_hf.errors.KINDS`), for all rows or one per row."""

    @classmethod
    def at(
        cls,
        array: pa.Array | pa.ChunkedArray,
        rows: Sequence[int] | np.ndarray,
        path: tuple[PathPart, ...],
        expected: str | list[str],
        note: str | list[str] = "",
        *,
        kind: ProblemKind | list[ProblemKind],
    ) -> Found:
        """The problems at ``rows`` of ``array``, each with the value that arrived there."""
        rows = np.asarray(rows, dtype=np.int64)
        return cls(rows, path, expected, gots(array, rows), note, kind=kind)

    def __len__(self) -> int:
        return len(self.rows)

    def with_path(self, path: tuple[PathPart, ...]) -> Found:
        """The same problems at another path."""
        return Found(self.rows, path, self.expected, self.got, self.note, kind=self.kind)

    def problem(self, i: int, row: int | None = None) -> Problem:
        """The ``i``-th problem (numbered ``row`` when given)."""
        expected = self.expected if isinstance(self.expected, str) else self.expected[i]
        note = self.note if isinstance(self.note, str) else self.note[i]
        kind = self.kind if isinstance(self.kind, str) else self.kind[i]
        number = int(self.rows[i]) if row is None else row
        return Problem(number, self.path, expected, self.got[i], note, kind)


@dataclass(frozen=True)
class Problems:
    """One problem per row, rows ascending, column by column (what a conversion rejects)."""

    rows: np.ndarray
    """Row numbers, int64."""
    paths: list[tuple[PathPart, ...]]
    expected: list[str]
    got: list[str]
    notes: list[str]
    kinds: list[ProblemKind]

    @classmethod
    def none(cls) -> Problems:
        """No problems."""
        return cls(np.zeros(0, np.int64), [], [], [], [], [])

    @classmethod
    def of(cls, problems: Sequence[Problem]) -> Problems:
        """Columns of problems already built."""
        return cls(
            np.array([p.row for p in problems], dtype=np.int64),
            [p.path for p in problems],
            [p.expected for p in problems],
            [p.got for p in problems],
            [p.note for p in problems],
            [p.kind for p in problems],
        )

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> Problem:
        return Problem(
            int(self.rows[i]),
            self.paths[i],
            self.expected[i],
            self.got[i],
            self.notes[i],
            self.kinds[i],
        )

    def __iter__(self) -> Iterator[Problem]:
        for i in range(len(self)):
            yield self[i]

    def renumbered(self, numbers: np.ndarray) -> Problems:
        """The same problems with row ``r`` numbered ``numbers[r]``."""
        return Problems(
            numbers[self.rows], self.paths, self.expected, self.got, self.notes, self.kinds
        )


def _per_row(value: T | list[T], count: int) -> list[T]:
    return value if isinstance(value, list) else [value] * count


def _pick(values: list[T], index: np.ndarray) -> list[T]:
    return values if len(index) == len(values) else [values[i] for i in index.tolist()]


def first_per_row(found: Sequence[Found]) -> Problems:
    """The first problem of each row, in the order the checks ran; rows ascending.

    Works on whole groups (numpy masks and list picks), never one problem at a time.
    """
    found = [group for group in found if len(group)]
    if not found:
        return Problems.none()
    rows = np.concatenate([group.rows for group in found])
    first = np.zeros(len(rows), dtype=bool)
    first[np.unique(rows, return_index=True)[1]] = True
    picked_rows: list[np.ndarray] = []
    paths: list[tuple[PathPart, ...]] = []
    expected: list[str] = []
    got: list[str] = []
    notes: list[str] = []
    kinds: list[ProblemKind] = []
    start = 0
    for group in found:
        index = np.flatnonzero(first[start : start + len(group)])
        start += len(group)
        if not len(index):
            continue
        picked_rows.append(group.rows[index])
        paths += [group.path] * len(index)
        expected += _pick(_per_row(group.expected, len(group)), index)
        got += _pick(group.got, index)
        notes += _pick(_per_row(group.note, len(group)), index)
        kinds += _pick(_per_row(group.kind, len(group)), index)
    ordered = np.concatenate(picked_rows)
    order = np.argsort(ordered, kind="stable")
    if np.array_equal(order, np.arange(len(order))):
        return Problems(ordered, paths, expected, got, notes, kinds)
    positions = order.tolist()
    return Problems(
        ordered[order],
        [paths[i] for i in positions],
        [expected[i] for i in positions],
        [got[i] for i in positions],
        [notes[i] for i in positions],
        [kinds[i] for i in positions],
    )


def all_problems(found: Sequence[Found], limit: int | None = None) -> list[Problem]:
    """Every problem, rows ascending (a row's problems in check order), at most ``limit``."""
    found = [group for group in found if len(group)]
    if not found:
        return []
    rows = np.concatenate([group.rows for group in found])
    group_of = np.concatenate([np.full(len(g), i, dtype=np.int64) for i, g in enumerate(found)])
    index_in = np.concatenate([np.arange(len(g), dtype=np.int64) for g in found])
    order = np.argsort(rows, kind="stable")[:limit]
    return [found[g].problem(i) for g, i in zip(group_of[order], index_in[order], strict=True)]
