"""The source rows the conversion left out: found again, and put back where they were.

A row rejected at conversion (``on_error="skip"``: MMLU-Pro's single-option rows) is still a
row of the source. ``replace`` and ``original`` publish it as it was (never audited, so never
changed), in its place among the others; ``drop`` leaves it out. Either way it is counted as
``rejected``, so ``rows_in`` is the source's row count.
"""

from __future__ import annotations

import itertools
import json
from typing import Any, NamedTuple

import pyarrow as pa

from sdvm_hf.exporter._lines import RowLine
from sdvm_hf.exporter._types import ExportError, Part
from sdvm_hf.record import file_entry
from sdvm_hf.sources import parse_split

__all__ = ["Rejected", "first_row", "rejected_rows", "with_rejected"]


class Rejected(NamedTuple):
    """The rows a part's conversion left out: where each goes among the samples, as it was."""

    positions: list[int]
    """Each row's place in the split as published (0-based, the samples around it)."""
    rows: list[dict[str, Any]]
    """Each row as its source had it, column by column."""
    publishable: bool
    """Whether they can be published: their rows are at hand (a conversion written by
    ``convert`` keeps them in its rejects file) in the layout they were read in."""
    reasons: list[str]
    """Why the conversion rejected each (what its rejects file says), for the export record."""

    def lines(self, line: RowLine, status: str) -> list[tuple[int, str]]:
        """Each row's export record line, with the sample row it goes before (in order).

        ``status`` says what the export made of them: ``rejected`` (published as they were),
        ``dropped`` (the drop policy) or ``not published``. None where their places are not
        known (no file of them).
        """
        return [
            (place - index, line.line(place, status, "rejected", reason=reason))
            for index, (place, reason) in enumerate(zip(self.positions, self.reasons, strict=True))
        ]


def rejected_rows(part: Part) -> Rejected:
    """The rows the part's conversion rejected, as its record names them (none without one)."""
    record = part.record
    if record is None:
        return Rejected([], [], True, [])
    path, count = record.rejects_file(part.path)
    if not count:
        return Rejected([], [], True, [])
    if path is None:  # written from memory (write_parquet of a load): no file of them
        return Rejected([], [{}] * count, False, [])
    if not path.is_file():
        raise ExportError(
            f"{part.path}: its conversion rejected {count:,} source rows, and their file "
            f"{path} is gone, so they cannot be accounted for; convert again, or restore it"
        )
    sha256 = record.rejects_sha256
    if sha256 is not None and file_entry(path)["sha256"] != sha256:
        raise ExportError(
            f"{path} is not the rejects file the conversion of {part.path} wrote (its SHA-256 "
            "differs: edited or made again since), so its rows cannot be published as the "
            "source's; convert again"
        )
    found: list[tuple[int, dict[str, Any], str]] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                found.append((int(item["row"]), dict(item["original"]), _reason(item)))
            except (ValueError, KeyError, TypeError) as error:
                raise ExportError(f"{path}, line {number}: not a reject record: {error}") from None
    if len(found) != count:
        raise ExportError(
            f"{path} holds {len(found):,} rejected rows, the record of {part.path} {count:,}"
        )
    found.sort(key=lambda item: item[0])
    twice = next((a[0] for a, b in itertools.pairwise(found) if a[0] == b[0]), None)
    if twice is not None:
        raise ExportError(f"{path} names row {twice} twice: not a conversion's rejects file")
    first = first_row(part)
    positions = [row - first for row, _, _ in found]
    rows = [row for _, row, _ in found]
    return Rejected(positions, rows, part.layout == record.layout, [r for _, _, r in found])


def _reason(item: dict[str, Any]) -> str:
    """A reject record's problem in one line: its kind, column, what was expected and got."""
    kind, column = item.get("kind") or "rejected", item.get("column")
    text = f"rejected at conversion: {kind}" + (f" in {column!r}" if column else "")
    if item.get("expected") is not None:
        text += f" (expected {item['expected']}, got {item.get('got')})"
    return text


def first_row(part: Part) -> int:
    """The source row number of the split's first row (a slice ``test[100:]`` starts at 100)."""
    split = part.record.split if part.record is not None else None
    spec = parse_split(split or part.split)
    if not spec.needs_length:
        return spec.bounds(None)[0]
    raise ExportError(
        f"{part.path}: rows were rejected at the conversion of {split!r}, and their places "
        "in a slice counted from the end or in percent cannot be known; convert the whole "
        "split, or export with --policy drop"
    )


def with_rejected(part: Part, table: pa.Table, rejected: Rejected) -> pa.Table:
    """``table`` (every sample's published row, in order) with the rejected rows in place.

    Annotation columns (``sdvm_status`` and the rest) are ``"rejected"`` and null in them.
    """
    columns: dict[str, list[Any]] = {name: [] for name in table.column_names}
    for row in rejected.rows:
        for name in table.column_names:
            columns[name].append(row.get(name))
    if "sdvm_status" in columns:
        columns["sdvm_status"] = ["rejected"] * len(rejected.rows)
        columns["sdvm_failing"] = [[] for _ in rejected.rows]
    try:
        types = {name: table.schema.field(name).type for name in columns}
        extra = pa.table({name: pa.array(columns[name], types[name]) for name in columns})
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as error:
        raise ExportError(
            f"{part.path}: a source row its conversion rejected does not fit the "
            f"{part.layout} layout's types: {error}"
        ) from None
    total = table.num_rows + extra.num_rows
    order = _order(rejected.positions, table.num_rows, total, part)
    joined = pa.concat_tables([table, extra.cast(table.schema)])
    return joined.take(pa.array(order))


def _order(positions: list[int], samples: int, total: int, part: Part) -> list[int]:
    """For each output row, the row of ``samples + rejected`` that goes there."""
    if any(not 0 <= p < total for p in positions):
        raise ExportError(
            f"{part.path}: its rejected rows' numbers do not fall within its {total:,} rows"
        )
    at = dict(zip(positions, range(samples, total), strict=True))
    order: list[int] = []
    sample = 0
    for place in range(total):
        if place in at:
            order.append(at[place])
        else:
            order.append(sample)
            sample += 1
    return order
