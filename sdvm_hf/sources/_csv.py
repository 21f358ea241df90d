"""CSV files read with ``pyarrow.csv``, exactly: every column a string, nothing turned into null.

pandas (behind the ``datasets`` CSV builder) would turn an MMLU choice ``"None"`` or ``"NA"``
into a missing value and ``"01"`` into ``1``; here every cell stays as written, line breaks
inside quoted fields included, at any file size. A file that cannot be read this way (a parse
error, text that is not UTF-8, an empty file) is a ``ValueError`` naming the file.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

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


@dataclass(frozen=True)
class _Plan:
    read: pacsv.ReadOptions
    convert: pacsv.ConvertOptions
    headerless: bool


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
    if names is not None:
        read = pacsv.ReadOptions(column_names=list(names))
    else:
        names = [name or f"Unnamed: {i}" for i, name in enumerate(first)]
        read = pacsv.ReadOptions(column_names=names, skip_rows=1)
    strings = {name: pa.string() for name in names}
    convert = pacsv.ConvertOptions(column_types=strings, strings_can_be_null=False)
    return _Plan(read, convert, headerless)


def _with_file_columns(table: pa.Table, file: str, layout: CsvLayout, plan: _Plan) -> pa.Table:
    if layout.file_columns is None or not plan.headerless:
        return table
    for name, value in layout.file_columns(file).items():
        table = table.append_column(name, pa.repeat(pa.scalar(value, pa.string()), table.num_rows))
    return table


def _named(file: str, error: Exception) -> InputError:
    return InputError(f"{file}: {error}")


def read_csv(files: Sequence[str], layout: CsvLayout) -> pa.Table:
    """CSV files as one table, every column a string."""
    tables = []
    import pyarrow.csv as pacsv

    for file in files:
        plan = _plan(file, layout)
        plan.read.block_size = EAGER_BLOCK
        try:
            table = pacsv.read_csv(
                file,
                read_options=plan.read,
                parse_options=_parse_options(),
                convert_options=plan.convert,
            )
        except (pa.ArrowInvalid, UnicodeDecodeError) as error:
            raise _named(file, error) from None
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
    """One CSV file batch by batch, every column a string."""
    import pyarrow.csv as pacsv

    plan = _plan(file, layout)
    try:
        with pacsv.open_csv(
            file,
            read_options=plan.read,
            parse_options=_parse_options(),
            convert_options=plan.convert,
        ) as reader:
            for batch in reader:
                table = _with_file_columns(pa.Table.from_batches([batch]), file, layout, plan)
                for offset in range(0, table.num_rows, batch_size):
                    yield table.slice(offset, batch_size)
    except (pa.ArrowInvalid, UnicodeDecodeError) as error:
        raise _named(file, error) from None
