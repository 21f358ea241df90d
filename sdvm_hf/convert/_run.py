"""One conversion run: row numbers, key columns and the 2 GiB chunking, then raise, skip or tag.

:func:`convert` and :func:`tagged` share their first steps (:func:`_checked`): the input's
rows are numbered once, its key columns looked up once, and it is cut once into pieces under
Arrow's 2 GiB of offsets (:func:`~sdvm_hf.arrow._chunks.row_chunks`), each run through the
vectorised pass (:mod:`._table`). They differ only in what they make of a checked piece:
``convert`` raises at the first bad row or leaves bad rows out as rejects, ``tagged`` keeps
every row and writes each bad row's reject beside it as JSON (:data:`REJECT_COLUMN`), which
:func:`split_rejects` takes apart again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.arrow import Problems, first_per_row, row_chunks, take_by_chunk
from sdvm_hf.arrow.rejects import Rejects, json_line
from sdvm_hf.arrow.sequence import SampleSequence, arrow_table
from sdvm_hf.convert._table import sample_rows
from sdvm_hf.errors import ConversionError, InputError, LayoutError

if TYPE_CHECKING:  # the mapping imports this module: its type only, for the checker
    import datasets

    from sdvm_hf.convert.mapping import MultipleChoiceMapping as Description

OnError = Literal["raise", "skip"]


def check_on_error(on_error: object) -> None:
    """``ValueError`` unless ``on_error`` is one of :data:`OnError`'s values."""
    if on_error not in ("raise", "skip"):
        raise InputError(f"on_error must be 'raise' or 'skip', got {on_error!r}")


Rows = Sequence[int] | np.ndarray | str | None
"""Each input row's number in its source: numbers, or the name of a column holding them."""
Key = str | tuple[str, ...] | None
"""The column(s) naming each row in its source: ``"id"``, or ``("src_file", "src_row")``."""

Chunks = Callable[[pa.Table], Iterator[tuple[int, pa.Table]]]
"""How a table is cut into pieces under 2 GiB: :func:`~sdvm_hf.arrow._chunks.row_chunks`."""

REJECT_COLUMN = "reject"
"""The column the batch form adds in skip mode: a rejected row's reject as JSON, else null."""


@dataclass(frozen=True)
class Conversion:
    """What a conversion gives: the sample table and the rows it left out."""

    table: pa.Table
    """The sample table (see :mod:`sdvm_hf.arrow.schema`)."""
    rejects: Rejects
    """Every input row that is not in ``table``, with the reason and the original row."""


def split_rejects(data: pa.Table | datasets.Dataset) -> Conversion:
    """Samples and rejects from what the batch form gave in skip mode.

    ``data`` is the output of ``Dataset.map(mapping.batch, ..., fn_kwargs={"on_error":
    "skip"})`` (or of :meth:`MultipleChoiceMapping.tagged`): every input row, with the
    :data:`REJECT_COLUMN` set on the rows left out. Returns the checked sample table of the
    converted rows and the :class:`~sdvm_hf.arrow.rejects.Rejects` of the others.
    """
    table = arrow_table(data)
    if REJECT_COLUMN not in table.column_names:
        raise InputError(f"no {REJECT_COLUMN!r} column: this is not the batch form's skip output")
    column = table.column(REJECT_COLUMN)
    samples = table.filter(pc.is_null(column)).drop_columns([REJECT_COLUMN])
    records = [json.loads(text) for text in column.drop_null().to_pylist()]
    rejects = Rejects.from_records(records)
    return Conversion(SampleSequence(samples, source="the batch form's output").table, rejects)


@dataclass(frozen=True)
class _Piece:
    """One piece of the input, run through the pass."""

    source: pa.Table
    """The input rows of this piece."""
    numbers: np.ndarray
    """Their row numbers in the source."""
    keys: dict[str, pa.ChunkedArray]
    """Their key columns (none without ``key``)."""
    samples: pa.Table
    """Every row as a sample row (a bad one may hold anything)."""
    first: Problems
    """Each bad row's first problem, by its position in the piece."""

    def key_of(self, position: int) -> dict[str, Any]:
        return {name: column[position].as_py() for name, column in self.keys.items()}

    def rejects(self) -> Rejects:
        """The piece's rejects, holding the rows they came from.

        Fewer than half the piece's rows are copied out, so the samples do not keep the whole
        batch alive (154 rejects scattered over 60,000 MMLU rows kept 59 MB for 30 MB of
        samples); more are kept as the piece.
        """
        rows = self.first.rows
        if 2 * len(rows) >= self.source.num_rows:
            return Rejects(self.first.renumbered(self.numbers), (self.source, rows))
        alone = take_by_chunk(self.source, rows)  # not a copy of the whole piece
        return Rejects(self.first.renumbered(self.numbers), (alone, np.arange(len(rows))))


def _checked(
    mapping: Description,
    data: pa.Table | pa.RecordBatch,
    first_row: int,
    rows: Rows,
    key: Key,
    chunks: Chunks,
) -> Iterator[_Piece]:
    """The input in pieces under 2 GiB, each converted and checked; rows numbered once."""
    source = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
    numbers = _numbers(mapping, source, first_row, rows)
    names = _key_names(mapping, source, key)
    for start, part in chunks(source):
        samples, found = sample_rows(mapping, part)
        yield _Piece(
            part,
            numbers[start : start + part.num_rows],
            {name: part.column(name) for name in names},
            samples,
            first_per_row(found),
        )


def convert(
    mapping: Description,
    data: pa.Table | pa.RecordBatch,
    *,
    on_error: OnError,
    first_row: int,
    rows: Rows,
    key: Key,
    chunks: Chunks = row_chunks,
) -> Conversion:
    """The sample table and the rejects (see ``MultipleChoiceMapping.convert``)."""
    check_on_error(on_error)
    tables: list[pa.Table] = []
    rejects: list[Rejects] = []
    for piece in _checked(mapping, data, first_row, rows, key, chunks):
        if not len(piece.first):
            tables.append(piece.samples)
            continue
        if on_error == "raise":
            problem = piece.first[0]
            at = replace(problem, row=int(piece.numbers[problem.row]))
            if piece.keys:
                named = ", ".join(f"{k}={v!r}" for k, v in piece.key_of(problem.row).items())
                at = replace(at, note=f"{at.note}; key {named}" if at.note else f"key {named}")
            raise ConversionError(mapping.where, at)
        keep = np.ones(piece.source.num_rows, dtype=bool)
        keep[piece.first.rows] = False
        tables.append(piece.samples.filter(pa.array(keep)))
        rejects.append(piece.rejects())
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    return Conversion(table, Rejects.join(rejects))


def tagged(
    mapping: Description,
    data: pa.Table | pa.RecordBatch,
    *,
    first_row: int,
    rows: Rows,
    key: Key,
    chunks: Chunks = row_chunks,
) -> pa.Table:
    """Every input row, converted or rejected (see ``MultipleChoiceMapping.tagged``)."""
    pieces = [_tag(piece) for piece in _checked(mapping, data, first_row, rows, key, chunks)]
    return pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)


def _tag(piece: _Piece) -> pa.Table:
    texts: list[str | None] = [None] * piece.source.num_rows
    positions = piece.first.rows.tolist()
    for position, record in zip(positions, piece.rejects().records(), strict=True):
        del record["column"]
        if piece.keys:
            record["key"] = piece.key_of(position)
        texts[position] = json_line(record)
    reject = pa.array(texts, pa.string())
    rejected = pc.is_valid(reject)
    columns = [
        pc.if_else(rejected, pa.nulls(len(reject), column.type), column)
        for column in piece.samples.columns
    ]
    return pa.Table.from_arrays(
        [*columns, reject],
        schema=piece.samples.schema.append(pa.field(REJECT_COLUMN, pa.string())),
    )


def _numbers(mapping: Description, source: pa.Table, first_row: int, rows: Rows) -> np.ndarray:
    n = source.num_rows
    if rows is None:
        return np.arange(first_row, first_row + n, dtype=np.int64)
    if isinstance(rows, str):
        if rows not in source.column_names:
            raise LayoutError(f"{mapping.where}: rows={rows!r} names no column of the batch")
        column = source.column(rows)
        if column.null_count or not pa.types.is_integer(column.type):
            raise LayoutError(
                f"{mapping.where}: rows={rows!r} should be a column of row numbers (integers, "
                f"no nulls), got {column.type} with {column.null_count} nulls"
            )
        return np.asarray(column.to_numpy(), dtype=np.int64)
    numbers = np.asarray(rows, dtype=np.int64)
    if len(numbers) != n:
        raise InputError(f"rows names {len(numbers)} row numbers for {n} rows")
    return numbers


def _key_names(mapping: Description, source: pa.Table, key: Key) -> tuple[str, ...]:
    names = (key,) if isinstance(key, str) else (key or ())
    missing = [name for name in names if name not in source.column_names]
    if missing:
        raise LayoutError(
            f"{mapping.where}: key column {missing[0]!r} is missing; columns seen: "
            f"{', '.join(source.column_names)}"
        )
    return names
