"""CSV files read with ``pyarrow.csv``, every column a string, nothing turned into a null.

pandas (behind the ``datasets`` CSV builder) would turn an MMLU choice ``"None"`` or ``"NA"``
into a missing value and ``"01"`` into ``1``; here every cell stays as written.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.csv as pacsv


@dataclass(frozen=True)
class CsvLayout:
    """How to name a CSV file's columns, and the columns its file name gives."""

    header: Callable[[Sequence[str]], Sequence[str] | None] | None = None
    """Given a file's first row: ``None`` when it is the header, else the column names."""
    file_columns: Callable[[str], Mapping[str, str]] | None = None
    """Columns added to every row of a headerless file, from the file's path."""


def _options(file: str, layout: CsvLayout) -> tuple[pacsv.ReadOptions, pacsv.ConvertOptions, bool]:
    """How to read ``file``, and whether it is headerless."""
    with open(file, encoding="utf-8", newline="") as text:
        first = next(csv.reader(text), [])
    names = layout.header(first) if layout.header is not None else None
    headerless = names is not None
    if names is not None:
        read = pacsv.ReadOptions(column_names=list(names))
    else:
        names = [name or f"Unnamed: {i}" for i, name in enumerate(first)]
        read = pacsv.ReadOptions(column_names=names, skip_rows=1)
    strings = {name: pa.string() for name in names}
    return read, pacsv.ConvertOptions(column_types=strings, strings_can_be_null=False), headerless


def _with_file_columns(table: pa.Table, file: str, layout: CsvLayout, headerless: bool) -> pa.Table:
    if layout.file_columns is None or not headerless:
        return table
    for name, value in layout.file_columns(file).items():
        table = table.append_column(name, pa.nulls(table.num_rows, pa.string()).fill_null(value))
    return table


def read_csv(files: Sequence[str], layout: CsvLayout) -> pa.Table:
    """CSV files as one table, every column a string."""
    tables = []
    for file in files:
        read, convert, headerless = _options(file, layout)
        table = pacsv.read_csv(file, read_options=read, convert_options=convert)
        tables.append(_with_file_columns(table, file, layout, headerless))
    return pa.concat_tables(tables)


def csv_batches(file: str, layout: CsvLayout, batch_size: int) -> Iterator[pa.Table]:
    """One CSV file batch by batch, every column a string."""
    read, convert, headerless = _options(file, layout)
    with pacsv.open_csv(file, read_options=read, convert_options=convert) as reader:
        for batch in reader:
            table = _with_file_columns(pa.Table.from_batches([batch]), file, layout, headerless)
            for offset in range(0, table.num_rows, batch_size):
                yield table.slice(offset, batch_size)
