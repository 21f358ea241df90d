"""Sample tables as Parquet files: atomic writes, checked reads."""

from __future__ import annotations

import os
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._files import atomic_path
from sdvm_hf.arrow.table import SampleSequence, samples_to_table
from sdvm_hf.errors import SampleTableError
from sdvm_hf.samples import MultipleChoiceSample


def write_table(table: pa.Table, path: str | os.PathLike[str]) -> None:
    """Write a sample table to ``path`` atomically (the file appears only when complete)."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def write_parquet(
    samples: Iterable[MultipleChoiceSample] | pa.Table, path: str | os.PathLike[str]
) -> int:
    """Write samples (or a sample table) to a Parquet file; return how many rows.

    The file loads with :func:`read_parquet`, ``pyarrow.parquet.read_table`` and
    ``datasets.load_dataset("parquet", data_files=...)``. Writing is atomic: an error or a
    crash mid-write leaves no partial file at ``path``.
    """
    if isinstance(samples, pa.Table):
        table = SampleSequence(samples).table
    else:
        table = samples_to_table(samples)
    write_table(table, path)
    return int(table.num_rows)


def read_parquet(path: str | os.PathLike[str]) -> SampleSequence:
    """Read a sample Parquet file as a lazy sequence of typed samples.

    Every row is checked first (vectorised); a file that is not a sample table raises
    :class:`~sdvm_hf.errors.SampleTableError` listing the missing or mistyped columns.
    """
    try:
        table = pq.read_table(path, memory_map=True)
    except (pa.ArrowInvalid, OSError) as error:
        raise SampleTableError(f"{path} cannot be read as Parquet: {error}") from error
    return SampleSequence(table, source=str(path))
