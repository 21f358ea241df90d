"""CSV files read with ``pyarrow.csv``, exactly: every column a string, nothing turned into null.

pandas (behind the ``datasets`` CSV builder) would turn an MMLU choice ``"None"`` or ``"NA"``
into a missing value and ``"01"`` into ``1``; here every cell stays as written, line breaks
inside quoted fields included, at any file size. A file that cannot be read this way (a parse
error, text that is not UTF-8, an empty file) is a ``ValueError`` naming the file.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from sdvm_hf.arrow import constant
from sdvm_hf.errors import InputError

if TYPE_CHECKING:  # pyarrow.csv is imported by the first CSV read, not by every load
    import pyarrow.csv as pacsv


def _parse_options() -> pacsv.ParseOptions:
    import pyarrow.csv as pacsv

    # Quoted fields may hold line breaks: without this pyarrow splits a large file into blocks
    # at line breaks, and a break inside a quoted field garbles or fails the rows around it.
    return pacsv.ParseOptions(newlines_in_values=True)


@dataclass(frozen=True)
class CsvLayout:
    """How to name a CSV file's columns, and the columns its file name gives."""

    header: Callable[[Sequence[str]], Sequence[str] | None] | None = None
    """Given a file's first row: ``None`` when it is the header, else the column names."""
    file_columns: Callable[[str], Mapping[str, str]] | None = None
    """Columns added to every row of a headerless file, from the file's path."""


BLOCK_BYTES = 2 << 20
"""Bytes of CSV a stream parses at a time; grown for a row longer than that.

Twice pyarrow's default: a 1 MiB block holds about 2,300 MMLU rows, and each such batch
paid the conversion's fixed costs (1M MMLU rows streamed to Parquet: 1.09x a plain pyarrow
stream with 1 MiB blocks, 1.02x with 2 MiB or 4 MiB). Not more: pyarrow's reader holds
blocks ahead, and the stream's peak grew with them (315 MiB, 395 MiB, 490 MiB)."""


@dataclass(frozen=True)
class _Plan:
    names: list[str]
    skip: int
    convert: pacsv.ConvertOptions
    headerless: bool

    def read(self, block: int) -> pacsv.ReadOptions:
        import pyarrow.csv as pacsv

        return pacsv.ReadOptions(column_names=self.names, skip_rows=self.skip, block_size=block)


def _bigger(error: pa.ArrowInvalid, file: str, block: int) -> int | None:
    """A bigger block when a row did not fit in one (pyarrow's "straddling object"), else None.

    Blocks grow fourfold up to the file's size, so a file of long rows is read in a few tries
    and a file of short rows in blocks of :data:`BLOCK_BYTES`, as before.
    """
    if "straddling" not in str(error) or block >= os.path.getsize(file):
        return None
    return block * 4


def _first_row(file: str) -> list[str]:
    try:
        with open(file, encoding="utf-8-sig", newline="") as text:
            first = next(csv.reader(text), None)
    except UnicodeDecodeError as error:
        raise InputError(f"{file}: not UTF-8 text ({error})") from None
    except csv.Error as error:
        raise InputError(f"{file}: CSV parse error on its first line: {error}") from None
    if first is None:
        raise InputError(f"{file}: the CSV file is empty")
    return first


EAGER_BLOCK = 4 << 20
"""The eager read's blocks: 4 MiB, so each chunk holds more than the rows the conversion takes
as they are (``BIG_CHUNK``): pyarrow's 1 MiB blocks of MMLU rows were combined into copies."""


def _plan(file: str, layout: CsvLayout) -> _Plan:
    import pyarrow.csv as pacsv

    first = _first_row(file)
    names = layout.header(first) if layout.header is not None else None
    headerless = names is not None
    skip = 0
    if names is None:
        names, skip = [name or f"Unnamed: {i}" for i, name in enumerate(first)], 1
    strings = {name: pa.string() for name in names}
    convert = pacsv.ConvertOptions(column_types=strings, strings_can_be_null=False)
    return _Plan(list(names), skip, convert, headerless)


def _with_file_columns(table: pa.Table, file: str, layout: CsvLayout, plan: _Plan) -> pa.Table:
    if layout.file_columns is None or not plan.headerless:
        return table
    lengths = [len(chunk) for chunk in table.column(0).chunks] if table.num_columns else [0]
    for name, value in layout.file_columns(file).items():
        column = pa.chunked_array([constant(value, n) for n in lengths], pa.string())
        table = table.append_column(name, column)
    return table


def _named(file: str, error: Exception) -> InputError:
    return InputError(f"{file}: {error}")


def _next_block(error: Exception, file: str, block: int) -> int:
    """The bigger block to read again with after ``error``; else the error, naming the file."""
    bigger = _bigger(error, file, block) if isinstance(error, pa.ArrowInvalid) else None
    if bigger is None:
        raise _named(file, error) from None
    return bigger


def read_csv(files: Sequence[str], layout: CsvLayout) -> pa.Table:
    """CSV files as one table, every column a string."""
    tables = []
    import pyarrow.csv as pacsv

    for file in files:
        plan = _plan(file, layout)
        block: int | None = EAGER_BLOCK
        while block is not None:
            try:
                table = pacsv.read_csv(
                    file,
                    read_options=plan.read(block),
                    parse_options=_parse_options(),
                    convert_options=plan.convert,
                )
                break
            except (pa.ArrowInvalid, UnicodeDecodeError) as error:
                block = _next_block(error, file, block)
        tables.append(_with_file_columns(table, file, layout, plan))
    return concat_files(tables, files)


def concat_files(tables: list[pa.Table], files: Sequence[str]) -> pa.Table:
    """The tables read from ``files`` as one; ``ValueError`` naming them if they differ."""
    try:
        return pa.concat_tables(tables)
    except pa.ArrowInvalid as error:
        raise InputError(
            f"the files do not share their columns ({', '.join(files)}): {error}"
        ) from None


def csv_batches(file: str, layout: CsvLayout, batch_size: int) -> Iterator[pa.Table]:
    """One CSV file batch by batch (a block of about :data:`BLOCK_BYTES`), every column a string.

    A row longer than a block makes the file read again in bigger blocks, from the row after
    the last one given.
    """
    plan = _plan(file, layout)
    given = 0
    block: int | None = BLOCK_BYTES
    while block is not None:
        try:
            for table in _blocks(file, layout, plan, block, skip=given):
                for offset in range(0, table.num_rows, batch_size):
                    part = table.slice(offset, batch_size)
                    given += part.num_rows
                    yield part
            return
        except (pa.ArrowInvalid, UnicodeDecodeError) as error:
            block = _next_block(error, file, block)


def _blocks(file: str, layout: CsvLayout, plan: _Plan, block: int, skip: int) -> Iterator[pa.Table]:
    """The file's tables, a block at a time, but its first ``skip`` rows."""
    import pyarrow.csv as pacsv

    with pacsv.open_csv(
        file,
        read_options=plan.read(block),
        parse_options=_parse_options(),
        convert_options=plan.convert,
    ) as reader:
        for batch in reader:
            if skip >= batch.num_rows:
                skip -= batch.num_rows
                continue
            table = pa.Table.from_batches([batch.slice(skip)])
            skip = 0
            yield _with_file_columns(table, file, layout, plan)
