"""Constant columns share one array per value (issue #28): no fresh memory per batch."""

from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdvm_hf.arrow import _chunks, constant
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.sources import _csv


def _data(array: pa.Array) -> int:
    return array.buffers()[2].address if array.buffers()[2] is not None else 0


@given(value=st.none() | st.text(max_size=5), n=st.integers(0, 5_000))
def test_a_constant_holds_n_copies_of_its_value(value: str | None, n: int) -> None:
    array = constant(value, n)
    assert array.type == pa.string()
    assert array.to_pylist() == [value] * n
    assert array.null_count == (n if value is None else 0)


def test_batches_of_any_size_share_one_array() -> None:
    sizes = [12_345, 9_000, 16_384, 8_193, 10_001]  # a CSV block's rows: up to 2**14
    arrays = [constant("high_school_physics", n) for n in sizes]
    assert len({_data(array) for array in arrays}) == 1  # one buffer, sliced
    assert [len(array) for array in arrays] == sizes
    bigger = constant("high_school_physics", 16_385)
    assert _data(bigger) != _data(arrays[0])  # the next power of two: an array of its own


def test_past_the_shared_rows_a_constant_is_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_chunks, "_SHARED_ROWS", 1_000)
    first, second = constant("x", 1_001), constant("x", 1_001)
    assert _data(first) != _data(second)
    assert first.equals(second)


def test_a_csv_files_subject_is_one_shared_array(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subject MMLU's file name gives: one buffer for the chunks of a size, not 33 MB anew."""
    path = tmp_path / "astronomy_test.csv"
    path.write_text("".join(f'"Q{row}?",a,b,c,d,A\n' for row in range(3_000)))
    monkeypatch.setattr(_csv, "EAGER_BLOCK", 1 << 14)
    mmlu = PRESETS["mmlu"]
    layout = _csv.CsvLayout(header=mmlu.csv_header, file_columns=mmlu.file_columns)
    table = _csv.read_csv([str(path)], layout)
    subject = table.column("subject")
    assert subject.num_chunks > 3
    sizes = {1 << (len(chunk) - 1).bit_length() for chunk in subject.chunks}  # powers of two
    assert len({_data(chunk) for chunk in subject.chunks}) == len(sizes) < subject.num_chunks
    assert subject.to_pylist() == ["astronomy"] * 3_000
