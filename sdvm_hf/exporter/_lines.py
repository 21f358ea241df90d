"""The export record's lines: one per input row, each a JSON object; the plain ones in Arrow."""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["RowLine", "published_row", "write_lines", "write_lines_by_row", "write_rows_among"]

_LINE_BLOCK = 1 << 20
"""Rows whose plain record lines are built at once (about 150 MB of text)."""

_MARK = -7_654_321_987
"""A row number no split has, where :meth:`RowLine.around` cuts the plain line in two."""


@dataclass(frozen=True)
class RowLine:
    """The export record's line of a row of one split, written by ``json`` alone."""

    config: str
    split: str

    def line(
        self,
        row: int,
        status: str = "kept",
        sdvm_status: str = "kept",
        failing: Sequence[str] = (),
        changed: Sequence[str] = (),
        reason: str = "",
    ) -> str:
        """The line of ``row``: what the policy made of it, its status, checks and columns.

        >>> RowLine("all", "test").line(3, "dropped", "dropped", ["checks.ok"])[:68]
        '{"config": "all", "split": "test", "row": 3, "status": "dropped", "s'
        """
        fields = {
            "config": self.config,
            "split": self.split,
            "row": row,
            "status": status,
            "sdvm_status": sdvm_status,
            "failing": list(failing),
            "changed": list(changed),
            "reason": reason,
        }
        return json.dumps(fields, ensure_ascii=False) + "\n"

    def around(self) -> tuple[str, str]:
        """The plain line's text before and after its row number (the same ``json`` output)."""
        before, after = self.line(_MARK).split(str(_MARK))
        return before, after


def write_lines(
    lines: BinaryIO, rows: RowLine, count: int, special: dict[int, str], first: int = 0
) -> None:
    """One line per row: the lines of ``special`` rows, and the plain kept line of the others.

    The rows are ``first`` to ``first + count - 1`` (a slice of a split at a time). The plain
    lines are built a block at a time in Arrow (the row number joined between the fixed text
    around it, :meth:`RowLine.around`) and written from their buffer, a span between special
    rows at once.
    """
    head, tail = rows.around()
    prefix = pa.scalar(head, pa.large_string())
    suffix = pa.scalar(tail, pa.large_string())
    empty = pa.scalar("", pa.large_string())
    specials = sorted(special)
    at = 0  # the first row of specials not yet written
    for start in range(first, first + count, _LINE_BLOCK):
        stop = min(start + _LINE_BLOCK, first + count)
        numbers = pc.cast(pa.array(np.arange(start, stop, dtype=np.int64)), pa.large_string())
        text = pc.binary_join_element_wise(prefix, numbers, suffix, empty)
        offsets = np.frombuffer(text.buffers()[1], np.int64)[text.offset :]
        data = memoryview(text.buffers()[2])
        here = start
        while at < len(specials) and specials[at] < stop:
            row = specials[at]
            lines.write(data[offsets[here - start] : offsets[row - start]])
            lines.write(special[row].encode("utf-8"))
            here, at = row + 1, at + 1
        lines.write(data[offsets[here - start] : offsets[stop - start]])


def write_lines_by_row(
    lines: BinaryIO, rows: RowLine, count: int, special: dict[int, str], first: int = 0
) -> None:
    """:func:`write_lines` one line at a time (the reference)."""
    text = [special.get(row) or rows.line(row) for row in range(first, first + count)]
    lines.write("".join(text).encode("utf-8"))


def write_rows_among(
    lines: BinaryIO,
    rows: RowLine,
    span: tuple[int, int],
    special: dict[int, str],
    inserted: Sequence[tuple[int, str]],
    by_row: bool = False,
) -> None:
    """The lines of the sample rows ``span`` (first, count), with ``inserted`` lines among them.

    ``inserted`` holds, in order, lines of rows that are not samples (the rows rejected at
    conversion, published in place) and the sample row each goes before; each sample row is
    numbered by its place in the published split (its row plus the lines inserted before it:
    :func:`published_row`), as its ``special`` line (keyed by sample row) already says. An
    inserted line before a row past the span is left to the next span (or to the end).
    """
    write = write_lines_by_row if by_row else write_lines
    before = [row for row, _ in inserted]
    first, count = span
    start, stop = first, first + count
    at = bisect.bisect_left(before, start)  # those before ``start`` came with earlier rows
    while True:
        end = before[at] if at < len(before) and before[at] < stop else stop
        if end > start:
            here = {row + at: text for row, text in special.items() if start <= row < end}
            write(lines, rows, end - start, here, start + at)
        if end == stop:
            return
        lines.write(inserted[at][1].encode("utf-8"))
        at, start = at + 1, end


def published_row(row: int, before: Sequence[int]) -> int:
    """Sample row ``row``'s place in the published split, rows inserted before some.

    ``before`` holds, in order, the sample row each inserted row goes before.

    >>> published_row(5, [2, 9]), published_row(1, [2, 9]), published_row(2, [2, 2])
    (6, 1, 4)
    """
    return row + bisect.bisect_right(before, row)
