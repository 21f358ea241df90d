"""The Arrow values made without pandas: equal to pyarrow's own, and a CSV load that needs none.

``sdvm_hf.arrow._values`` stands in for ``pa.array``, ``pa.scalar``, ``np.asarray`` and
``Schema.empty_table`` on the conversion path, since each of those imports pandas the first
time it runs (0.16 s and 40 MB of an eager CSV load). Each is held to pyarrow's own here.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sdvm_hf
from sdvm_hf.arrow import (
    FALSE,
    TRUE,
    empty_table,
    from_numpy,
    integers,
    out_of_range,
    rows_where,
    scalar,
    strings,
    to_numpy,
)

FIXTURES = Path(__file__).parent / "fixtures"

_DTYPES = st.sampled_from(
    [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float32, np.float64]
)
_TYPES = st.sampled_from([None, pa.int64(), pa.int32(), pa.float64()])


@given(
    values=_DTYPES.flatmap(lambda dtype: hnp.arrays(dtype, st.integers(0, 40))),
    data=st.data(),
)
def test_from_numpy_is_pa_array(values: np.ndarray, data: st.DataObject) -> None:
    mask = data.draw(hnp.arrays(np.bool_, len(values)) | st.none())
    kind = data.draw(_TYPES)
    try:
        want = pa.array(values, kind, mask=mask)
    except (pa.ArrowInvalid, OverflowError):
        return  # a value that does not fit the type: pyarrow refuses it too
    got = from_numpy(values, kind, mask=mask)
    assert got.type == want.type
    assert got.is_null().equals(want.is_null())
    valid = want.is_valid()  # NaN is not equal to itself in .equals: numpy compares them
    np.testing.assert_array_equal(np.asarray(got.filter(valid)), np.asarray(want.filter(valid)))


@given(hnp.arrays(np.bool_, st.integers(0, 70)), st.integers(0, 9), st.booleans())
def test_booleans_both_ways_at_any_offset(values: np.ndarray, cut: int, masked: bool) -> None:
    mask = (np.arange(len(values)) % 3 == 0) if masked else None
    made = from_numpy(values, mask=mask)
    assert made.equals(pa.array(values, mask=mask))
    part = pa.array(values)[min(cut, len(values)) :]
    assert to_numpy(part).tolist() == np.asarray(part).tolist()
    assert to_numpy(part).dtype == np.bool_


@given(
    st.lists(st.lists(st.integers(-(2**40), 2**40), max_size=6), min_size=1, max_size=4),
    st.integers(0, 3),
    st.sampled_from([pa.int64(), pa.int32(), pa.uint64(), pa.float64()]),
)
def test_to_numpy_is_np_asarray(chunks: list[list[int]], cut: int, kind: pa.DataType) -> None:
    try:
        chunked = pa.chunked_array([pa.array(chunk).cast(kind) for chunk in chunks], kind)
    except pa.ArrowInvalid:
        return
    for values in (chunked, chunked.chunk(0)[min(cut, len(chunks[0])) :]):
        got, want = to_numpy(values), np.asarray(values)
        assert got.dtype == want.dtype
        assert got.tolist() == want.tolist()


@given(
    st.lists(st.lists(st.booleans() | st.none(), max_size=6), min_size=1, max_size=4),
    st.booleans(),
)
def test_rows_where_counts_a_null_as_asked(chunks: list[list[bool | None]], null: bool) -> None:
    mask = pa.chunked_array([pa.array(chunk, pa.bool_()) for chunk in chunks])
    flags = [null if flag is None else flag for chunk in chunks for flag in chunk]
    got = rows_where(mask, null=null)
    assert got.dtype == np.int64
    assert got.tolist() == [row for row, flag in enumerate(flags) if flag]


@given(st.lists(st.tuples(st.integers(-3, 6) | st.none(), st.integers(0, 5) | st.none())))
def test_out_of_range_marks_answers_no_choice_has(
    rows: list[tuple[int | None, int | None]],
) -> None:
    answers = pa.array([answer for answer, _ in rows], pa.int64())
    lengths = pa.array([length for _, length in rows], pa.int32())
    want = [
        length is not None and length >= 2 and (answer is None or not 0 <= answer < length)
        for answer, length in rows
    ]
    assert out_of_range(answers, lengths).to_pylist() == want


@pytest.mark.parametrize("values", [np.zeros((2, 2)), np.array(["a"]), np.array([object()])])
def test_from_numpy_takes_one_dimension_of_numbers(values: np.ndarray) -> None:
    with pytest.raises(TypeError, match="expected one dimension of numbers or booleans, got"):
        from_numpy(values)


def test_from_numpy_of_a_strided_view_is_its_values() -> None:
    values = np.arange(10)[::3]
    assert from_numpy(values).to_pylist() == [0, 3, 6, 9]
    assert from_numpy(np.array([1, 2], ">i4")).to_pylist() == [1, 2]  # big-endian
    with pytest.raises(TypeError, match="got int64 in 0 dimensions"):
        from_numpy(np.array(5))
    with pytest.raises(ValueError, match="a mask of 1 flags for 3 values"):
        from_numpy(np.array([1, 2, 3]), mask=np.array([True]))


def test_to_numpy_of_a_far_bool_slice_reads_only_its_bytes() -> None:
    flags = pa.array(np.arange(100_003) % 7 == 0)
    for start in (0, 1, 8, 99_990, 100_003):
        part = flags[start : start + 10]
        assert to_numpy(part).tolist() == np.asarray(part).tolist()


def test_an_unsigned_answer_past_int64_is_a_reject_not_a_crash(tmp_path: Path) -> None:
    """pyarrow made the bound 2**62 an int64 and cast the uint64 column to it first."""
    source = pa.table(
        {
            "question": ["q1", "q2", "q3"],
            "subject": ["s", "s", "s"],
            "choices": [["a", "b"]] * 3,
            "answer": pa.array([1, 2**63, 2**62 + 1], pa.uint64()),
        }
    )
    path = tmp_path / "mmlu.parquet"
    pq.write_table(source, path)
    samples = sdvm_hf.load("mmlu", data_files=path, on_error="skip")
    assert [sample.answer_index for sample in samples] == [1]
    assert samples.rejects is not None and len(samples.rejects) == 2


def test_to_numpy_leaves_nulls_and_other_types_to_pyarrow() -> None:
    with_nulls = pa.array([1.0, None, 3.0])
    assert np.isnan(to_numpy(with_nulls)[1])
    assert to_numpy(pa.array(["a", "b"])).tolist() == ["a", "b"]
    assert to_numpy(pa.chunked_array([], pa.int64())).tolist() == []


@given(st.lists(st.text() | st.none(), max_size=20))
def test_strings_is_pa_array(values: list[str | None]) -> None:
    assert strings(values).equals(pa.array(values, pa.string()))


@given(st.lists(st.integers(-(2**63), 2**63 - 1) | st.none(), max_size=20))
def test_integers_is_pa_array(values: list[int | None]) -> None:
    assert integers(values).equals(pa.array(values, pa.int64()))


@pytest.mark.parametrize(
    ("value", "kind"),
    [(0, pa.int64()), (2, pa.int32()), (1.5, pa.float64()), ("A", pa.string()), (None, pa.int8())],
)
def test_scalar_is_pa_scalar(value: object, kind: pa.DataType) -> None:
    assert scalar(value, kind).equals(pa.scalar(value, kind))  # type: ignore[arg-type]
    assert TRUE.equals(pa.scalar(True)) and FALSE.equals(pa.scalar(False))


def test_empty_table_is_the_schemas_own() -> None:
    schema = pa.schema(
        [("a", pa.list_(pa.string())), ("b", pa.struct([("c", pa.int8())]))], metadata={"k": "v"}
    )
    assert empty_table(schema).equals(schema.empty_table(), check_metadata=True)


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas not installed")
def test_a_clean_csv_load_and_its_parquet_write_import_no_pandas(tmp_path: Path) -> None:
    """pyarrow would import pandas at our first ``pa.array``; reading CSV needs none of it."""
    out = tmp_path / "out.parquet"
    code = (
        "import sys\n"
        "from sdvm_hf import load, write_parquet\n"
        f"samples = load('mmlu', data_files={str(FIXTURES / 'mmlu' / 'hendrycks')!r})\n"
        f"write_parquet(samples, {str(out)!r})\n"
        "print(len(samples), 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rows, imported = done.stdout.split()
    assert int(rows) > 0
    assert imported == "False", "a CSV load imported pandas"
    # the check itself can fail: the same process does import pandas once it asks pyarrow to
    again = code.replace("print(", "import pyarrow as pa; pa.array([1]); print(")
    redone = subprocess.run([sys.executable, "-c", again], capture_output=True, text=True)
    assert redone.stdout.split()[1] == "True"
