"""The cold path's batches: chunk-aligned and zero-copy, output identical (issues #19 and #28).

The fixed grid of slices they replace is kept here as the reference.
"""

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sdvm_hf
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.sources import _convert
from sdvm_hf.sources._convert import convert_handed, regrouped

FIXTURES = Path(__file__).parent / "fixtures"
HELLASWAG = pq.read_table(FIXTURES / "hellaswag" / "validation.parquet")
MMLU_PRO = pq.read_table(FIXTURES / "mmlu" / "mmlu_pro.parquet")  # row 6 is a bad row
BIG = 4_096  # rows of a big CSV chunk (two make the rejects' source)


def _fixed_grid(table: pa.Table, first_row: int, rows: int) -> Iterator[tuple[int, pa.Table]]:
    """The batches before: slices at every ``rows`` rows, combined when they straddle chunks."""
    for offset in range(0, table.num_rows, rows):
        part = table.slice(offset, rows)
        if part.column(0).num_chunks > 1 if part.num_columns else False:
            part = part.combine_chunks()
        yield first_row + offset, part


def _chunked(table: pa.Table, sizes: list[int], copies: int) -> pa.Table:
    """``table`` repeated ``copies`` times, re-chunked to ``sizes`` (cycled) rows a chunk."""
    whole = pa.concat_tables([table] * copies).combine_chunks()
    chunks, offset, n = [], 0, 0
    while offset < whole.num_rows:
        size = sizes[n % len(sizes)]
        chunks.extend(whole.slice(offset, size).to_batches())
        offset, n = offset + size, n + 1
    return pa.Table.from_batches(chunks, schema=whole.schema)


def _bytes(samples: sdvm_hf.SampleSequence, path: Path) -> bytes:
    sdvm_hf.write_parquet(samples, path)
    return path.read_bytes()


@given(
    source=st.sampled_from(["hellaswag", "mmlu"]),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=6),
    copies=st.integers(1, 12),
    batch=st.sampled_from([4, 8, 16, 65_536]),
    start=st.integers(0, 5),
)
@pytest.mark.slow  # hypothesis at strength, or a big table
def test_the_output_is_the_fixed_grids_byte_for_byte(
    source: str,
    sizes: list[int],
    copies: int,
    batch: int,
    start: int,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    raw, preset = (HELLASWAG, "hellaswag") if source == "hellaswag" else (MMLU_PRO, "mmlu")
    table = _chunked(raw, sizes, copies).slice(start)  # a sliced split starts mid-chunk
    mapping = PRESETS[preset].mapping(table.column_names)
    folder = tmp_path_factory.mktemp("out")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_convert, "BATCH_ROWS", batch)
        ours = convert_handed([table], mapping, "test", "skip", first_row=start)
        patch.setattr(_convert, "regrouped", _fixed_grid)
        before = convert_handed([table], mapping, "test", "skip", first_row=start)
    assert ours.table.schema == before.table.schema
    assert ours.table.equals(before.table)
    assert list(ours.rejects) == list(before.rejects)
    assert _bytes(ours, folder / "ours.parquet") == _bytes(before, folder / "before.parquet")


@given(sizes=st.lists(st.integers(0, 50), min_size=1, max_size=8), rows=st.integers(1, 20))
def test_batches_cover_every_row_in_order_none_copied(sizes: list[int], rows: int) -> None:
    table = _chunked(HELLASWAG, [size or 1 for size in sizes], 8)
    batches = list(regrouped(table, 100, rows))
    assert [first for first, _ in batches] == [
        100 + sum(part.num_rows for _, part in batches[:n]) for n in range(len(batches))
    ]
    assert all(0 < part.num_rows <= rows for _, part in batches)
    sources = {chunk.buffers()[2].address for chunk in table.column("ctx").chunks}
    assert all(
        chunk.buffers()[2].address in sources
        for _, part in batches
        for chunk in part.column("ctx").chunks
    )  # small chunks are put together, never combined into a copy (issue #28)
    big = max(min(rows // 4, _convert.BIG_CHUNK), 1)
    for _, part in batches:  # a big chunk is a batch (or slices) of its own
        lengths = [len(chunk) for chunk in part.column("ctx").chunks]
        assert len(lengths) == 1 or max(lengths) < big
    assert pa.concat_tables([part for _, part in batches]).equals(table)


def test_a_big_chunk_is_sliced_without_a_copy() -> None:
    """Chunks of a Parquet row group that the fixed grid straddled: now never copied."""
    table = _chunked(HELLASWAG, [30, 30, 30, 30], 10).slice(5)  # chunks of 25, 30, 30, ...
    sources = {chunk.buffers()[2].address for chunk in table.column("ctx").chunks}
    copied = [
        part
        for _, part in _fixed_grid(table, 0, 16)
        if part.column("ctx").chunk(0).buffers()[2].address not in sources
    ]
    assert copied  # the fixed grid combined (copied) the slices that straddled two chunks
    for _, part in regrouped(table, 0, 16):
        assert part.column("ctx").chunk(0).buffers()[2].address in sources


def test_row_groups_of_ten_thousand_rows_are_batches_of_their_own_not_copies() -> None:
    """The Hub's HellaSwag layout (10,042-row groups) was combined into 65,536-row copies."""
    from sdvm_hf.sources._convert import BATCH_ROWS, BIG_CHUNK

    size = BIG_CHUNK + 10
    table = _chunked(HELLASWAG, [size], -(-3 * size // HELLASWAG.num_rows)).slice(0, 3 * size)
    assert table.column("ctx").num_chunks == 3
    sources = {chunk.buffers()[2].address for chunk in table.column("ctx").chunks}
    batches = list(regrouped(table, 0, BATCH_ROWS))
    assert [part.num_rows for _, part in batches] == [BIG_CHUNK + 10] * 3
    assert {part.column("ctx").chunk(0).buffers()[2].address for _, part in batches} == sources


def _mmlu_csv_chunk(rows: int, number: int) -> pa.RecordBatch:
    """A chunk as pyarrow reads MMLU's CSV: each column in buffers of its own."""
    return pa.record_batch(
        {
            "question": pa.array([f"Question {number}-{row}?" for row in range(rows)]),
            **{letter: pa.array([letter * 256] * rows) for letter in "ABCD"},
            "answer": pa.array(["ABCD"[row % 4] for row in range(rows)]),
        }
    )


def _memory_per_batch(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes Arrow has allocated as each batch's conversion is handed on, filled in."""
    in_use: list[int] = []
    convert = _convert.conversions

    def watched(*args: object, **kwargs: object) -> Iterator[object]:
        for result in convert(*args, **kwargs):  # type: ignore[arg-type]
            in_use.append(pa.total_allocated_bytes())
            yield result

    monkeypatch.setattr(_convert, "conversions", watched)
    return in_use


@pytest.mark.parametrize("handed_over", [True, False])
def test_a_handed_over_source_is_freed_batch_by_batch(
    handed_over: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The eager load holds its source and its samples together a batch at a time (#28).

    Each chunk's four choice columns (1 MiB each) are copied into the samples' ``choices``;
    handed over, a chunk's columns are freed once converted, so the memory in use grows by
    about a batch, not by the whole source's choices as when the caller keeps the table.
    """
    from sdvm_hf.sources._convert import BIG_CHUNK

    count, rows = 8, BIG_CHUNK  # each chunk a batch of its own
    table = pa.Table.from_batches([_mmlu_csv_chunk(rows, n) for n in range(count)])
    choices = 4 * 256 * rows * count
    mapping = PRESETS["mmlu"].mapping(table.column_names)
    in_use = _memory_per_batch(monkeypatch)
    before = pa.total_allocated_bytes()
    if handed_over:
        handed = [table]
        del table
        samples = convert_handed(handed, mapping, "test")
        assert not handed
        assert max(in_use) - before < choices / 3  # the last batches, ahead and in hand
    else:
        samples = convert_handed([table], mapping, "test")
        assert max(in_use) - before > choices * 0.9
    assert len(samples) == count * rows
    assert samples[rows + 1].choices == ["A" * 256, "B" * 256, "C" * 256, "D" * 256]


def test_the_eager_load_hands_its_source_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load`` keeps no reference to the table it read: the CSV's choices are freed as the
    samples' are made (1M MMLU rows: 1.12 GB peak before, 0.99 GB)."""
    from sdvm_hf.sources import _csv

    rows, width = 16_000, 100
    lines = (
        f'"Q{row}?",{",".join(c * width for c in "ABCD")},{"ABCD"[row % 4]}\n'
        for row in range(rows)
    )
    path = tmp_path / "astronomy_test.csv"  # MMLU's headerless layout, named by its subject
    path.write_text("".join(lines))
    monkeypatch.setattr(_csv, "EAGER_BLOCK", 1 << 19)  # chunks of ~1,250 rows
    monkeypatch.setattr(_convert, "BIG_CHUNK", 256)  # each a batch of its own
    in_use = _memory_per_batch(monkeypatch)
    samples = sdvm_hf.load("mmlu", data_files=str(path))
    assert len(in_use) > 8 and len(samples) == rows
    assert samples[5].choices == [c * width for c in "ABCD"]
    grown = max(in_use) - in_use[0]
    assert grown < rows * 4 * width / 3  # not the whole source's choices again


@pytest.mark.parametrize("bad_rows", [[3], [0, 4_100, 8_000], list(range(0, 8_192, 2))])
def test_rejects_hold_their_rows_not_the_batch(bad_rows: list[int]) -> None:
    """A few rejects copy their rows out; the samples then free the batch they came from."""
    table = pa.Table.from_batches([_mmlu_csv_chunk(BIG, n) for n in range(2)])
    answers = table.column("answer").to_pylist()
    for row in bad_rows:
        answers[row] = "E"
    table = table.set_column(5, "answer", pa.array(answers))
    expected = [table.slice(row, 1).to_pylist()[0] for row in bad_rows]
    source_bytes = table.nbytes
    mapping = PRESETS["mmlu"].mapping(table.column_names)
    handed = [table]
    del table
    samples = convert_handed(handed, mapping, "test", "skip")
    assert [reject.original for reject in samples.rejects] == expected
    assert [reject.row for reject in samples.rejects] == bad_rows
    parts = [originals for _, originals in samples.rejects._parts]
    assert all(isinstance(originals, tuple) for originals in parts)  # (table, positions)
    kept = sum(originals[0].nbytes for originals in parts if isinstance(originals, tuple))
    if 2 * len(bad_rows) < 2 * BIG:  # few: their rows alone, not the source's 8 MiB
        assert kept < 2_000 * len(bad_rows)
    else:  # half the rows or more: the pieces are kept as they are, not copied
        assert kept >= source_bytes
    assert len(samples) == 2 * BIG - len(bad_rows)
