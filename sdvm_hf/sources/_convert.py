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

from sdvm_hf._progress import bar, quiet
from sdvm_hf.arrow import empty_table, utf8_problems
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import Conversion, MultipleChoiceMapping, OnError
from sdvm_hf.errors import ConversionError, InputError, LayoutError, Problem
from sdvm_hf.sources._ahead import close, in_order

if TYPE_CHECKING:
    from sdvm_hf.sources._split import SplitSpec


MappingChoice = MultipleChoiceMapping | Callable[[Sequence[str]], MultipleChoiceMapping]
"""A mapping, or a function that picks one from the source's column names."""

BATCH_ROWS = 65_536
"""Rows converted at a time when loading a split whole."""

BIG_CHUNK = 4_096
"""A chunk of at least this many rows (or a quarter of a batch) is a batch of its own: its
per-batch cost is already small beside its rows. Smaller chunks are put together."""


@dataclass
class Selection:
    """Keep the rows whose ``column`` holds ``value`` (a configuration of local files).

    With a ``window`` (the slice of a split spec) only the selected rows in that slice are
    kept: the slice counts the configuration's rows, as it does on the Hub, where a
    configuration is a split of its own. Its bounds are set by :meth:`bound` first.
    """

    dataset: str
    column: str
    value: str
    window: SplitSpec | None = None
    bounds: tuple[int, int | None] = (0, None)
    seen: set[str] = field(default_factory=set)
    matched: int = 0
    kept: int = 0

    def fresh(self) -> Selection:
        """The same selection with nothing counted yet (one per pass over the rows)."""
        return replace(self, seen=set(), matched=0, kept=0)

    def matches(self, batch: pa.Table) -> np.ndarray:
        """Whether each row of ``batch`` holds the value (no slice applied)."""
        if self.column not in batch.column_names:
            raise LayoutError(
                f"{self.dataset}: the source has no {self.column!r} column, so "
                f"{self.column}={self.value!r} cannot select its rows; columns seen: "
                f"{', '.join(batch.column_names)}"
            )
        column = batch.column(self.column)
        self.seen.update(str(value) for value in pc.unique(column).to_pylist())
        return np.asarray(pc.fill_null(pc.equal(column, self.value), False), dtype=bool)

    def bound(self, matching: int | None) -> None:
        """Set the window's rows from the number of matching rows (``None``: not needed)."""
        if self.window is not None:
            self.bounds = self.window.bounds(matching)

    def mask(self, batch: pa.Table) -> np.ndarray:
        mask = self.matches(batch)
        count = int(mask.sum())
        if self.window is not None and count:
            start, stop = self.bounds
            ordinal = self.matched + np.cumsum(mask) - 1  # of each row among the matching
            inside = ordinal >= start if stop is None else (ordinal >= start) & (ordinal < stop)
            mask &= inside
        self.matched += count
        self.kept += int(mask.sum())
        return mask

    def check(self) -> None:
        if not self.matched:
            raise InputError(
                f"{self.dataset}: no row has {self.column}={self.value!r}; "
                f"{self.column} values seen: {', '.join(sorted(self.seen)) or '(none)'}"
            )
        if self.window is not None and not self.kept:
            raise self.window.empty(self.matched)


def conversions(
    batches: Iterable[tuple[int, pa.Table]],
    mapping: MappingChoice,
    split: str,
    on_error: OnError,
    select: Selection | None = None,
    total: int | None = None,
    keep: Callable[[int], bool] | None = None,
) -> Iterator[Conversion]:
    """Convert batch by batch; rows keep their numbers in the split, selected or not.

    Each batch comes with the split's number of its first row. A progress bar counts the rows
    on a terminal (see :mod:`sdvm_hf._progress`). With ``keep``, only the batches it keeps
    (by their number, from 0) are converted: one reader's part of a shared stream, which
    draws no bar (its siblings would draw theirs over it).
    """
    with quiet(keep is not None):
        progress = bar(total, f"converting {split}")
    checked: Iterable[tuple[int, pa.Table, list[Problem] | None]]
    if select is None and keep is None:  # the next batches' text checked in threads, ahead
        checked = in_order(lambda item: (*item, utf8_problems(item[1])), batches)
    else:  # what is checked is the rows selected
        checked = ((first_row, batch, None) for first_row, batch in batches)
    try:
        with progress:
            for number, (first_row, batch, broken) in enumerate(checked):
                rows = np.arange(first_row, first_row + batch.num_rows, dtype=np.int64)
                size = batch.num_rows
                if select is not None:
                    mask = select.mask(batch)
                    batch, rows = batch.filter(pa.array(mask)), rows[mask]
                if keep is not None and not keep(number):
                    continue
                resolved = resolve(mapping, batch.column_names, split)
                broken = utf8_problems(batch) if broken is None else broken
                if broken:  # a damaged file, not a bad row: even skip mode cannot write it out
                    at = broken[0]
                    raise ConversionError(resolved.where, replace(at, row=int(rows[at.row])))
                yield resolved.convert(batch, on_error=on_error, rows=rows)
                progress.update(size)
    finally:  # an error, or a reader that stops: no thread reads the source after this
        close(checked)
        close(batches)
    if select is not None:
        select.check()


def regrouped(table: pa.Table, first_row: int, rows: int) -> Iterator[tuple[int, pa.Table]]:
    """``table`` in batches of at most ``rows`` rows, none of them a copy.

    A big chunk (a Parquet row group: :data:`BIG_CHUNK` rows or a quarter of ``rows``) is cut
    into zero-copy slices that never cross its ends (the Hub's 10,042-row HellaSwag groups
    were copied whole into 65,536-row batches). Small chunks (``datasets`` stores 1,000 rows a
    chunk) are put together up to ``rows`` as the chunks of one batch, so the conversion runs
    on big batches; it reads them chunk by chunk where it can (copying 1.4M MMLU rows'
    choices into bigger chunks took 0.7 s, as long as reading them).
    """
    if not table.num_columns:
        yield from _sliced(table, first_row, rows)
        return
    big = max(min(rows // 4, BIG_CHUNK), 1)
    pending: list[pa.RecordBatch] = []
    held = 0
    offset = first_row
    schema = table.schema
    chunks = table.to_batches()[::-1]
    del table  # a chunk given is freed once its batches are converted (:func:`convert_handed`)
    while chunks:
        chunk = chunks.pop()
        if pending and (chunk.num_rows >= big or held + chunk.num_rows > rows):
            yield offset, pa.Table.from_batches(pending, schema=schema)
            offset, pending, held = offset + held, [], 0
        if chunk.num_rows >= big:
            for start in range(0, chunk.num_rows, rows):
                part = pa.Table.from_batches([chunk.slice(start, rows)], schema=schema)
                yield offset + start, part
            offset += chunk.num_rows
        elif chunk.num_rows:
            pending.append(chunk)
            held += chunk.num_rows
    if pending:
        yield offset, pa.Table.from_batches(pending, schema=schema)


def _sliced(table: pa.Table, first_row: int, rows: int) -> Iterator[tuple[int, pa.Table]]:
    """A table with no column, in slices of ``rows`` rows."""
    for offset in range(0, table.num_rows, rows):
        yield first_row + offset, table.slice(offset, rows)


def resolve(mapping: MappingChoice, columns: Sequence[str], split: str) -> MultipleChoiceMapping:
    """The mapping for a batch of these columns, bound to the split its messages name."""
    chosen = mapping if isinstance(mapping, MultipleChoiceMapping) else mapping(columns)
    return chosen.for_split(split)


def convert_handed(
    handed: list[pa.Table],
    mapping: MappingChoice,
    split: str = "",
    on_error: OnError = "raise",
    select: Selection | None = None,
    first_row: int = 0,
) -> SampleSequence:
    """Convert the one table in ``handed``, which it takes out of the list, in batches.

    Rows are numbered across the table from ``first_row`` (a slice keeps its split's numbers).
    A caller that holds no other reference to the table hands it over this way (an argument
    stays referenced by the caller until the call returns): each batch of the source is then
    freed once it is converted, and a load holds the source and its samples together only a
    batch at a time. The eager load of 1M MMLU rows from CSV peaked at 1.12 GB with the
    source held to the end, 0.99 GB handed over (pyarrow's reader alone: 0.82 GB).
    """
    table = handed.pop()
    resolved = resolve(mapping, table.column_names, split)
    schema, rows = table.schema, table.num_rows
    batches = regrouped(table, first_row, BATCH_ROWS)
    del table  # the batches hold the only reference now
    results = list(conversions(batches, resolved, split, on_error, select, rows))
    rejects = Rejects.join(result.rejects for result in results)
    if results:
        converted = pa.concat_tables([result.table for result in results])
    else:
        converted = empty_table(resolved.schema(schema))
    return SampleSequence(converted, rejects=rejects, validate=False)
