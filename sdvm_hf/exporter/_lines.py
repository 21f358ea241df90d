"""The export record's lines: one per input row, the plain ones built in Arrow."""

from __future__ import annotations

import json
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["json_value", "write_lines", "write_lines_by_row"]

_LINE_BLOCK = 1 << 20
"""Rows whose plain record lines are built at once (about 150 MB of text)."""


def write_lines(lines: BinaryIO, head: str, count: int, special: dict[int, str]) -> None:
    """One line per row: the lines of ``special`` rows, and the plain kept line of the others.

    The plain lines are built a block at a time in Arrow (the row number joined between a
    fixed head and tail) and written from their buffer, a span between special rows at once.
    """
    prefix = pa.scalar(f'{head}, "row": ', pa.large_string())
    suffix = pa.scalar(f", {_PLAIN}\n", pa.large_string())
    empty = pa.scalar("", pa.large_string())
    rows = sorted(special)
    at = 0  # the first row of rows not yet written
    for start in range(0, count, _LINE_BLOCK):
        stop = min(start + _LINE_BLOCK, count)
        numbers = pc.cast(pa.array(np.arange(start, stop, dtype=np.int64)), pa.large_string())
        text = pc.binary_join_element_wise(prefix, numbers, suffix, empty)
        offsets = np.frombuffer(text.buffers()[1], np.int64)[text.offset :]
        data = memoryview(text.buffers()[2])
        here = start
        while at < len(rows) and rows[at] < stop:
            row = rows[at]
            lines.write(data[offsets[here - start] : offsets[row - start]])
            lines.write(special[row].encode("utf-8"))
            here, at = row + 1, at + 1
        lines.write(data[offsets[here - start] : offsets[stop - start]])


def write_lines_by_row(lines: BinaryIO, head: str, count: int, special: dict[int, str]) -> None:
    """:func:`write_lines` one line at a time (the reference)."""
    text = [special.get(row) or f'{head}, "row": {row}, {_PLAIN}\n' for row in range(count)]
    lines.write("".join(text).encode("utf-8"))


_PLAIN = '"status": "kept", "sdvm_status": "kept", "failing": [], "changed": [], "reason": ""}'


def json_value(value: Any) -> str:
    return "[]" if value == [] else '""' if value == "" else json.dumps(value, ensure_ascii=False)
