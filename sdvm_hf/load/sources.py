"""Where source rows come from: the Hub or local Parquet, JSON Lines, JSON or CSV files.

The Hub and local Parquet and JSON go through ``datasets``; CSV is read by
:mod:`sdvm_hf.load._csv` with every column a string. Nothing here knows any dataset.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from sdvm_hf.load._csv import CsvLayout, csv_batches, read_csv

DataFiles = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

_BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv"}


def bundled_file(name: str) -> Path:
    """The path of a data file shipped inside the package (``sdvm_hf/data``)."""
    return Path(str(resources.files("sdvm_hf") / "data" / name))


def expand(data_files: DataFiles) -> list[str]:
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
        raise FileNotFoundError(f"no files match {data_files!r}")
    for file in files:
        if not os.path.exists(file):
            raise FileNotFoundError(f"no such data file: {file}")
    return files


def builder_for(files: Sequence[str]) -> str:
    """The ``datasets`` builder for these files (``parquet``, ``json`` or ``csv``)."""
    kinds = set()
    for file in files:
        suffix = "".join(Path(file).suffixes[-2:]) if file.endswith(".gz") else Path(file).suffix
        suffix = suffix.removesuffix(".gz")
        if suffix not in _BUILDERS:
            raise ValueError(
                f"cannot tell the format of {file}: expected .parquet, .jsonl, .json or .csv "
                f"(optionally .gz)"
            )
        kinds.add(_BUILDERS[suffix])
    if len(kinds) > 1:
        raise ValueError(f"data files mix formats ({', '.join(sorted(kinds))}); load them apart")
    return kinds.pop()


@dataclass(frozen=True)
class Source:
    """How to reach a split: a Hub dataset or local files, and the options passed through."""

    path: str | None = None
    """A Hub dataset id (``"cais/mmlu"``); ``None`` with ``data_files``."""
    name: str | None = None
    """The Hub configuration (``"all"``)."""
    split: str = "train"
    data_files: DataFiles | None = None
    revision: str | None = None
    cache_dir: str | None = None
    token: str | bool | None = None
    csv: CsvLayout = CsvLayout()
    """How CSV files name their columns (headerless files, columns from file names)."""

    @cached_property
    def files(self) -> list[str] | None:
        """The local files, globs and folders expanded once (``None`` for the Hub)."""
        return None if self.data_files is None else expand(self.data_files)

    def load_dataset_args(self) -> tuple[str, dict[str, Any]]:
        """The exact arguments for ``datasets.load_dataset`` (never ``trust_remote_code``)."""
        if self.files is not None:
            return builder_for(self.files), {
                "data_files": {self.split: self.files},
                "split": self.split,
                "cache_dir": self.cache_dir,
            }
        if self.path is None:
            raise ValueError("give a Hub dataset path or data_files")
        return self.path, {
            "name": self.name,
            "split": self.split,
            "revision": self.revision,
            "cache_dir": self.cache_dir,
            "token": self.token,
        }

    def csv_files(self) -> list[str] | None:
        """The local files when they are CSV (read with pyarrow, all strings), else ``None``."""
        return self.files if self.files is not None and builder_for(self.files) == "csv" else None


def load_table(source: Source) -> pa.Table:
    """The whole split as an Arrow table."""
    csv_files = source.csv_files()
    if csv_files is not None:
        return read_csv(csv_files, source.csv)
    import datasets

    builder, kwargs = source.load_dataset_args()
    dataset = datasets.load_dataset(builder, **kwargs)
    if dataset._indices is not None:
        dataset = dataset.flatten_indices()
    return dataset.data.table


def stream_batches(source: Source, batch_size: int) -> Iterator[pa.Table]:
    """The split batch by batch, without loading it whole (``streaming=True``)."""
    csv_files = source.csv_files()
    if csv_files is not None:
        for file in csv_files:
            yield from csv_batches(file, source.csv, batch_size)
        return
    import datasets

    builder, kwargs = source.load_dataset_args()
    stream = datasets.load_dataset(builder, streaming=True, **kwargs)
    yield from stream.with_format("arrow").iter(batch_size=batch_size)
