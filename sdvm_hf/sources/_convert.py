"""Converting a source split batch by batch: row numbers kept, selections, progress.

Shared by the eager loaders and :class:`~sdvm_hf.sources.streaming.StreamingSamples`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._progress import bar
from sdvm_hf.arrow._rules import utf8_problems
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import Conversion, MultipleChoiceMapping, OnError
from sdvm_hf.errors import ConversionError, LayoutError

if TYPE_CHECKING:
    pass


MappingChoice = MultipleChoiceMapping | Callable[[Sequence[str]], MultipleChoiceMapping]
"""A mapping, or a function that picks one from the source's column names."""

BATCH_ROWS = 65_536
"""Rows converted at a time when loading a split whole."""


@dataclass
class Selection:
    """Keep the rows whose ``column`` holds ``value`` (a configuration of local files)."""

    dataset: str
    column: str
    value: str
    seen: set[str] = field(default_factory=set)
    matched: int = 0

    def mask(self, batch: pa.Table) -> np.ndarray:
        if self.column not in batch.column_names:
            raise LayoutError(
                f"{self.dataset}: the source has no {self.column!r} column, so "
                f"{self.column}={self.value!r} cannot select its rows; columns seen: "
                f"{', '.join(batch.column_names)}"
            )
        column = batch.column(self.column)
        self.seen.update(str(value) for value in pc.unique(column).to_pylist())
        mask = np.asarray(pc.fill_null(pc.equal(column, self.value), False), dtype=bool)
        self.matched += int(mask.sum())
        return mask

    def check(self) -> None:
        if not self.matched:
            raise ValueError(
                f"{self.dataset}: no row has {self.column}={self.value!r}; "
                f"{self.column} values seen: {', '.join(sorted(self.seen)) or '(none)'}"
            )


def conversions(
    batches: Iterable[tuple[int, pa.Table]],
    mapping: MappingChoice,
    split: str,
    on_error: OnError,
    select: Selection | None = None,
    total: int | None = None,
) -> Iterator[Conversion]:
    """Convert batch by batch; rows keep their numbers in the split, selected or not.

    Each batch comes with the split's number of its first row. A progress bar counts the rows
    on a terminal (see :mod:`sdvm_hf._progress`).
    """
    with bar(total, f"converting {split}") as progress:
        for first_row, batch in batches:
            rows = np.arange(first_row, first_row + batch.num_rows, dtype=np.int64)
            size = batch.num_rows
            if select is not None:
                mask = select.mask(batch)
                batch, rows = batch.filter(pa.array(mask)), rows[mask]
            resolved = resolve(mapping, batch.column_names)
            broken = utf8_problems(batch)
            if broken:  # a damaged file, not a bad row: even skip mode cannot write it out
                at = broken[0]
                raise ConversionError(
                    f"{resolved.name} {split}".strip(), replace(at, row=int(rows[at.row]))
                )
            yield resolved.convert(batch, split=split, on_error=on_error, rows=rows)
            progress.update(size)
    if select is not None:
        select.check()


def regrouped(table: pa.Table, first_row: int, rows: int) -> Iterator[tuple[int, pa.Table]]:
    """``table`` in slices of ``rows`` rows, each one chunk.

    Small chunks (``datasets`` stores 1,000 rows a chunk) are combined, so the conversion
    runs on big batches.
    """
    for offset in range(0, table.num_rows, rows):
        part = table.slice(offset, rows)
        if part.column(0).num_chunks > 1 if part.num_columns else False:
            part = part.combine_chunks()
        yield first_row + offset, part


def resolve(mapping: MappingChoice, columns: Sequence[str]) -> MultipleChoiceMapping:
    return mapping if isinstance(mapping, MultipleChoiceMapping) else mapping(columns)


def convert_table(
    table: pa.Table,
    mapping: MappingChoice,
    split: str = "",
    on_error: OnError = "raise",
    select: Selection | None = None,
    first_row: int = 0,
) -> SampleSequence:
    """Convert a whole source table in batches.

    Rows are numbered across the table from ``first_row`` (a slice keeps its split's numbers).
    """
    resolved = resolve(mapping, table.column_names)
    batches = regrouped(table, first_row, BATCH_ROWS)
    results = list(conversions(batches, resolved, split, on_error, select, table.num_rows))
    rejects = Rejects.join(result.rejects for result in results)
    if results:
        converted = pa.concat_tables([result.table for result in results])
    else:
        converted = resolved.schema(table.schema, split).empty_table()
    return SampleSequence(converted, rejects=rejects, validate=False)
