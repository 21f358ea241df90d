"""Where source rows come from: the Hub or local Parquet, JSON Lines, JSON or CSV files.

One reader per kind of source (:func:`reader_of` picks it, once): the Hub through ``datasets``
and its cache (:mod:`sdvm_hf.sources._hub`); local files read in place with pyarrow
(:mod:`sdvm_hf.sources._local`: Parquet memory-mapped, nothing written to the ``datasets``
cache; CSV by :mod:`sdvm_hf.sources._csv` with every column a string). A split is a
``datasets`` split spec (:mod:`sdvm_hf.sources._split`): a slice is read as a range of the
whole split, whose row numbers it keeps. Nothing here knows any dataset.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from sdvm_hf.errors import InputError
from sdvm_hf.sources._csv import CsvLayout
from sdvm_hf.sources._hub import HubRows
from sdvm_hf.sources._local import Kind, LocalRows
from sdvm_hf.sources._split import SplitSpec, parse_split

__all__ = ["DataFiles", "Rows", "Source", "load_table", "reader_of", "stream_batches"]

Files = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
DataFiles = Files | Mapping[str, Files]
"""What ``datasets.load_dataset`` takes: a path, a glob, a folder, a list, or ``{split: files}``."""

_KINDS: dict[str, Kind] = {".parquet": "parquet", ".jsonl": "jsonl", ".json": "json", ".csv": "csv"}


def bundled_file(name: str) -> Path:
    """The path of a data file shipped inside the package (``sdvm_hf/data``)."""
    return Path(__file__).resolve().parent.parent / "data" / name


def expand(data_files: Files) -> list[str]:
    """Local paths and glob patterns to a sorted list of files (a folder: every file in it)."""
    items = [data_files] if isinstance(data_files, str | os.PathLike) else list(data_files)
    files: list[str] = []
    for item in map(str, items):
        if os.path.isdir(item):
            files += sorted(str(p) for p in Path(item).iterdir() if p.is_file())
        elif glob.has_magic(item):
            files += sorted(glob.glob(item))
        else:
            files.append(item)
    if not files:
        folders = [item for item in map(str, items) if os.path.isdir(item)]
        empty = f": {', '.join(folders)} holds no file" if folders else ""
        raise FileNotFoundError(f"no files match {data_files!r}{empty}")
    for file in files:
        if not os.path.exists(file):
            raise FileNotFoundError(f"no such data file: {file}")
    return files


def kind_of(files: Sequence[str]) -> Kind:
    """What these files hold: ``parquet``, ``jsonl``, ``json`` (an array) or ``csv``."""
    kinds: set[Kind] = set()
    for file in files:
        suffix = "".join(Path(file).suffixes[-2:]) if file.endswith(".gz") else Path(file).suffix
        suffix = suffix.removesuffix(".gz")
        if suffix not in _KINDS:
            raise InputError(
                f"cannot tell the format of {file}: expected .parquet, .jsonl, .json or .csv "
                f"(optionally .gz)"
            )
        kinds.add(_KINDS[suffix])
    if len(kinds) > 1:
        raise InputError(f"data files mix formats ({', '.join(sorted(kinds))}); load them apart")
    return kinds.pop()


def split_files(data_files: DataFiles, split: str) -> Files:
    """The entry of ``data_files`` for ``split`` (a dict is ``{split: files}``)."""
    if not isinstance(data_files, Mapping):
        return data_files
    if split not in data_files:
        raise InputError(
            f"data_files has no entry for split {split!r}; its splits: "
            f"{', '.join(map(repr, data_files)) or '(none)'}"
        )
    return data_files[split]


@dataclass(frozen=True)
class Source:
    """How to reach a split: a Hub dataset or local files, and the options passed through."""

    path: str | None = None
    """A Hub dataset id (``"cais/mmlu"``); ``None`` with ``data_files``."""
    name: str | None = None
    """The Hub configuration (``"all"``)."""
    split: str = "train"
    """A split spec: a name, optionally sliced (``"validation[:100]"``, ``"test[10%:20%]"``)."""
    data_files: DataFiles | None = None
    revision: str | None = None
    cache_dir: str | None = None
    token: str | bool | None = None
    csv: CsvLayout = CsvLayout()
    """How CSV files name their columns (headerless files, columns from file names)."""

    @cached_property
    def spec(self) -> SplitSpec:
        """The split spec parsed: the split's name and the slice asked for."""
        return parse_split(self.split)

    @cached_property
    def files(self) -> list[str] | None:
        """The local files of the split, expanded once (``None`` for the Hub)."""
        if self.data_files is None:
            return None
        return expand(split_files(self.data_files, self.spec.name))


def whole(source: Source) -> Source:
    """The same source with its whole split (the slice dropped), files expanded once."""
    unsliced = replace(source, split=source.spec.name)
    unsliced.__dict__["files"] = source.files  # the cached expansion, not a second one
    return unsliced


@dataclass(frozen=True)
class Loaded:
    """A split (or the slice asked for) as a table, and the split's number of its first row."""

    table: pa.Table
    first_row: int


class Rows(Protocol):
    """One kind of source: the whole split as a table, its batches, its length if known."""

    def table(self) -> pa.Table:
        """The whole split."""
        ...

    def batches(self, batch_size: int) -> Iterator[pa.Table]:
        """The split batch by batch (an empty split as one empty table with its columns)."""
        ...

    def length(self) -> int | None:
        """The split's rows when known without reading them."""
        ...


def reader_of(source: Source) -> Rows:
    """The reader for this source's kind: local files read in place, or the Hub."""
    if source.files is not None:
        return LocalRows(source.files, kind_of(source.files), source.csv)
    return HubRows(
        source.path,
        name=source.name,
        split=source.spec.name,  # a slice is cut afterwards: its rows keep their numbers
        revision=source.revision,
        cache_dir=source.cache_dir,
        token=source.token,
    )


def load_table(source: Source) -> Loaded:
    """The split, or its slice, as an Arrow table: local files in place, the Hub via its cache."""
    table = reader_of(source).table()
    start, stop = source.spec.bounds(table.num_rows)
    if not source.spec.sliced:
        return Loaded(table, 0)
    assert stop is not None
    return Loaded(table.slice(start, stop - start), start)


def stream_batches(source: Source, batch_size: int) -> Iterator[tuple[int, pa.Table]]:
    """The split (or its slice) batch by batch, each with the split's number of its first row."""
    spec = source.spec
    rows = reader_of(source)
    length = None
    if spec.needs_length:  # from metadata, else one counting pass
        length = rows.length()
        if length is None:
            length = sum(batch.num_rows for batch in rows.batches(batch_size))
    start, stop = spec.bounds(length)
    row = 0
    given = False
    for batch in rows.batches(batch_size):
        first, row = row, row + batch.num_rows
        if not batch.num_rows:  # no rows, but the columns: an empty source keeps its schema
            yield first, batch
            continue
        if row <= start:
            continue
        if stop is not None and first >= stop:
            return
        given = True
        low = max(start - first, 0)
        high = batch.num_rows if stop is None else min(stop - first, batch.num_rows)
        yield (
            first + low,
            batch.slice(low, high - low) if (low, high) != (0, batch.num_rows) else batch,
        )
    if spec.sliced and not given:
        raise spec.empty(row)


def source_length(source: Source) -> int | None:
    """The rows a local source will give, when its files say it without being read."""
    known = reader_of(source).length()
    if known is None:
        return None
    start, stop = source.spec.bounds(known)
    return (known if stop is None else stop) - start
