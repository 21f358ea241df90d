"""Issue #27, point 5: a stream's batches and a writer's row groups are bounded by bytes too.

Wide rows (HellaSwag's real rows, ``ctx`` and ``endings`` repeated to about 25 KB a row) are
read, converted and written a few rows at a time when the byte limit is small, where the row
limit alone would take them all at once; every row keeps its number in the split.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import sdvm_hf.arrow._chunks as chunking
import sdvm_hf.files._writer as writing
from sdvm_hf import load, stream
from sdvm_hf.arrow import batch_rows, bounded
from sdvm_hf.jobs import convert_to_files
from sdvm_hf.sources.streaming import STREAM_ROWS

FIXTURE = Path(__file__).parent / "fixtures" / "hellaswag" / "validation.parquet"
LIMIT = 200_000
"""The byte limit the tests set: ten or so of the wide rows."""
BAD = 13
"""A row whose label is out of range, so its reject names its number."""


def wide_table(times: int = 200) -> pa.Table:
    """The fixture's rows with ``ctx`` and each ending repeated ``times`` times, one bad label."""
    table = pq.read_table(FIXTURE)
    table = pa.concat_tables([table] * (60 // table.num_rows + 1)).slice(0, 60).combine_chunks()
    endings = table.column("endings").chunk(0)
    ctx = pc.binary_repeat(table.column("ctx"), times)
    long = pa.ListArray.from_arrays(endings.offsets, pc.binary_repeat(endings.values, times))
    labels = table.column("label").to_pylist()
    labels[BAD] = "9"
    table = table.set_column(table.schema.get_field_index("ctx"), "ctx", ctx)
    table = table.set_column(table.schema.get_field_index("endings"), "endings", long)
    return table.set_column(table.schema.get_field_index("label"), "label", pa.array(labels))


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    """The wide rows in a Parquet file of two row groups."""
    path = tmp_path / "wide.parquet"
    pq.write_table(wide_table(), path, row_group_size=30)
    return path


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunking, "BATCH_BYTES", LIMIT)
    monkeypatch.setattr(writing, "ROW_GROUP_BYTES", LIMIT)


def test_batch_rows_shrink_with_the_width_of_the_rows(tmp_path: Path) -> None:
    narrow, wide = tmp_path / "narrow.parquet", tmp_path / "wide.parquet"
    pq.write_table(wide_table(1), narrow)
    pq.write_table(wide_table(), wide, row_group_size=30)
    meta = pq.read_metadata(wide)
    per_row = max(
        meta.row_group(i).total_byte_size / meta.row_group(i).num_rows
        for i in range(meta.num_row_groups)
    )
    assert batch_rows(meta, STREAM_ROWS, LIMIT) == int(LIMIT // per_row)
    assert 1 < batch_rows(meta, STREAM_ROWS, LIMIT) < 30
    assert batch_rows(meta, STREAM_ROWS, 10) == 1  # a row wider than the limit: one a batch
    assert batch_rows(pq.read_metadata(narrow), 7, LIMIT) == 7  # the row limit comes first


def test_bounded_cuts_only_the_batches_over_the_limit() -> None:
    table = wide_table()
    small = table.slice(0, 2)
    assert small.nbytes < LIMIT < table.nbytes
    out = list(bounded(iter([(100, small), (102, table)]), LIMIT))
    assert out[0][1] is small  # within the limit: as it was
    firsts = [first for first, _ in out]
    sizes = [part.num_rows for _, part in out]
    assert firsts == [100 + sum(sizes[:n]) for n in range(len(out))]  # the rows keep numbers
    assert sum(sizes) == 2 + table.num_rows and len(out) > 3
    assert all(part.nbytes <= 2 * LIMIT for _, part in out)  # about the limit: rows vary
    assert pa.concat_tables(part for _, part in out[1:]).equals(table)


@pytest.mark.parametrize("shards", [None, 2])
@pytest.mark.usefixtures("small_limit")
def test_a_stream_of_wide_rows_reads_small_batches(wide: Path, shards: int | None) -> None:
    samples = stream("hellaswag", data_files=str(wide), on_error="skip")
    parts = [samples] if shards is None else [samples.shard(shards, i) for i in range(shards)]
    assert shards is None or samples.n_shards == shards  # one shard a row group
    tables, rejected = [], []
    for part in parts:
        for table, rejects in part.batches():
            tables.append(table)
            rejected += [problem.row for problem in rejects.problems]
    assert max(table.num_rows for table in tables) < 30  # not the row limit's 16,384
    assert all(table.nbytes <= 2 * LIMIT for table in tables)
    assert rejected == [BAD]  # its number in the split, whatever batch it fell in
    eager = load("hellaswag", data_files=str(wide), on_error="skip")
    assert pa.concat_tables(tables).equals(eager.table)


@pytest.mark.usefixtures("small_limit")
def test_the_written_file_has_row_groups_of_the_byte_limit(wide: Path, tmp_path: Path) -> None:
    output = tmp_path / "out.parquet"
    samples = stream("hellaswag", data_files=str(wide), on_error="skip")
    converted = convert_to_files(samples, output)
    assert converted.summary.rows_in == 60 and sum(converted.summary.rejects.values()) == 1
    meta = pq.read_metadata(output)
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    assert len(groups) > 2 and sum(group.num_rows for group in groups) == 59
    assert max(group.num_rows for group in groups) < 30
    eager = load("hellaswag", data_files=str(wide), on_error="skip")
    columns = ["context", "choices", "answer_index"]
    assert pq.read_table(output, columns=columns).equals(eager.table.select(columns))


def test_batch_rows_of_one_row_group_see_only_its_width(tmp_path: Path) -> None:
    path = tmp_path / "mixed.parquet"
    table = wide_table()
    narrow = wide_table(1).slice(0, 30)
    pq.write_table(pa.concat_tables([narrow, table.slice(30)]), path, row_group_size=30)
    meta = pq.read_metadata(path)
    assert batch_rows(meta, 1000, LIMIT, groups=[0]) > 10 * batch_rows(
        meta, 1000, LIMIT, groups=[1]
    )
    assert batch_rows(meta, 1000, LIMIT) == batch_rows(meta, 1000, LIMIT, groups=[1])
