"""The sample writer encodes Parquet row groups in a thread beside the caller, in order."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import load_hellaswag, read_parquet
from sdvm_hf.files import SampleWriter


def _groups(rows: int = 12) -> list[pa.Table]:
    table = load_hellaswag(bundled=True).table.slice(0, rows)
    return [table.slice(start, 3) for start in range(0, rows, 3)]


def test_row_groups_are_written_beside_the_caller_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: list[str] = []
    real = pq.ParquetWriter.write_table

    def spy(self: pq.ParquetWriter, table: pa.Table, *args: object, **kwargs: object) -> None:
        writers.append(threading.current_thread().name)
        real(self, table, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", spy)
    monkeypatch.setattr("sdvm_hf.files._writer.ROW_GROUP_ROWS", 3)  # a group per table
    out = tmp_path / "out.parquet"
    tables = _groups()
    with SampleWriter(out) as writer:
        for table in tables:
            writer.write(table)
    assert writers and threading.current_thread().name not in writers
    assert pq.ParquetFile(out).metadata.num_row_groups == len(tables)
    assert read_parquet(out).table.equals(pa.concat_tables(tables))


def test_a_failed_group_stops_the_file_and_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[int] = []
    real = pq.ParquetWriter.write_table

    def second_fails(self: pq.ParquetWriter, table: pa.Table, *a: object, **k: object) -> None:
        if written:
            raise OSError("[Errno 28] No space left on device")
        written.append(table.num_rows)
        real(self, table, *a, **k)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", second_fails)
    monkeypatch.setattr("sdvm_hf.files._writer.ROW_GROUP_ROWS", 3)
    out = tmp_path / "out.parquet"
    with (
        pytest.raises(OSError, match=rf"cannot write {out}: .*No space left"),
        SampleWriter(out) as writer,
    ):
        for table in _groups():
            writer.write(table)
    assert written == [3]  # nothing after the failed group
    assert not out.exists() and list(tmp_path.iterdir()) == []


def _repeating_choices(rows: int) -> pa.Table:
    """Samples whose choices come from a pool of 1.3 MB of text: past pyarrow's 1 MiB
    dictionary budget, as four per-choice source columns of it were not."""
    from sdvm_hf import MultipleChoiceQuestionAnswerSample
    from sdvm_hf.arrow.sequence import samples_to_table

    pool = [f"choice {n:05d} " + "x" * 40 for n in range(24_000)]
    return samples_to_table(
        MultipleChoiceQuestionAnswerSample(
            context=f"question {n % 7}",
            choices=[pool[(n * 4 + k) % len(pool)] for k in range(4)],
            answer_index=n % 4,
        )
        for n in range(rows)
    )


def _choices_bytes(path: Path) -> int:
    """The encoded size of the choices' values, before compression."""
    meta = pq.ParquetFile(path).metadata
    column = [meta.schema.column(i).path for i in range(meta.num_columns)].index(
        "choices.list.element"
    )
    groups = range(meta.num_row_groups)
    return sum(meta.row_group(g).column(column).total_uncompressed_size for g in groups)


def test_choices_that_repeat_stay_dictionary_encoded(tmp_path: Path) -> None:
    from sdvm_hf import write_parquet

    table = _repeating_choices(48_000)  # each pool value eight times
    write_parquet(table, tmp_path / "eager.parquet")
    with SampleWriter(tmp_path / "streamed.parquet") as writer:
        for start in range(0, table.num_rows, 8_000):
            writer.write(table.slice(start, 8_000))
    pq.write_table(table, tmp_path / "defaults.parquet")  # pyarrow's 1 MiB budget
    plain = _choices_bytes(tmp_path / "defaults.parquet")
    assert plain > 48_000 * 4 * 50  # it overflowed: the values written out in full
    expected = read_parquet(tmp_path / "defaults.parquet").table
    for name in ("eager.parquet", "streamed.parquet"):
        assert _choices_bytes(tmp_path / name) < plain / 2  # indices and one dictionary
        assert read_parquet(tmp_path / name).table.equals(expected)
