import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from helpers import assert_same_samples
from hypothesis import given
from hypothesis import strategies as st

from sdvm_hf import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
    SampleSequence,
    SampleTableError,
    load_hellaswag,
    read_parquet,
    write_parquet,
)
from sdvm_hf.arrow.schema import sample_features, sample_schema
from sdvm_hf.arrow.sequence import samples_to_table
from sdvm_hf.files import iter_parquet
from sdvm_hf.jobs import inspect_file, validate_file

STEM = MultipleChoiceCompletionSample(
    context="A woman applies mascara. she",
    choices=["applies it.", "drives off."],
    answer_index=0,
    extra={"ind": 24, "activity_label": "Applying makeup", "split": "val"},
)
QUESTION = MultipleChoiceQuestionAnswerSample(
    context="What is the capital of France?",
    choices=["Berlin", "Paris"],
    answer_index=1,
    extra={"subject": "geography"},
)


def stem(index: int, **extra: Any) -> MultipleChoiceCompletionSample:
    return MultipleChoiceCompletionSample(
        context=f"stem {index}", choices=["a", "b", "c"], answer_index=index % 3, extra=extra
    )


CASES: dict[str, list[MultipleChoiceSample]] = {
    "uniform scalars": [stem(0, ind=1, label="x"), stem(1, ind=2, label="y")],
    "None versus missing key": [stem(0, a=None), stem(1)],
    "int and float under one key": [stem(0, v=1), stem(1, v=1.0)],
    "bool and int under one key": [stem(0, v=True), stem(1, v=1)],
    "int beyond int64": [stem(0, big=2**70), stem(1, big=-(2**64))],
    "floats bit-exact": [stem(0, f=0.1 + 0.2), stem(1, f=-0.0), stem(2, f=5e-324)],
    "nested lists and dicts": [stem(0, n={"a": [1, {"b": None}]}), stem(1, n={"a": [], "c": "d"})],
    "nested dicts with other keys": [stem(0, n={"a": 1}), stem(1, n={"b": 1})],
    "empty dict and list": [stem(0, d={}, l=[]), stem(1, d={}, l=[])],
    "same keys in another order": [
        stem(0, a=1, b=2),
        MultipleChoiceCompletionSample(
            context="s", choices=["a", "b"], answer_index=0, extra={"b": 2, "a": 1}
        ),
    ],
    "no extra at all": [stem(0), stem(1)],
    "any unicode": [
        MultipleChoiceQuestionAnswerSample(
            context="¿Qué es 🐍\u0000\ud7ff?",
            choices=["\u200b", "é"],
            answer_index=0,
            extra={"ключ": "値"},
        )
    ],
    "mixed classes": [STEM, QUESTION],
    "stage blocks": [
        QUESTION.model_copy(update={"audit": {"grammar": True, "score": 0.5}}),
        QUESTION.model_copy(
            update={
                "audit": {"grammar": False},
                "fix": {"changes": ["x"], "flagged": False, "attempts": 1},
                "reaudit": {"grammar": True},
            }
        ),
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_parquet_round_trip_is_exact(name: str, tmp_path: Path) -> None:
    path = tmp_path / "samples.parquet"
    assert write_parquet(CASES[name], path) == len(CASES[name])
    assert_same_samples(list(read_parquet(path)), CASES[name])


def test_uniform_extras_become_a_queryable_struct(tmp_path: Path) -> None:
    path = tmp_path / "mmlu.parquet"
    write_parquet([QUESTION, QUESTION.model_copy(update={"extra": {"subject": "astronomy"}})], path)
    assert pq.read_schema(path).field("extra").type == pa.struct([("subject", pa.string())])
    found = pads.dataset(path).to_table(filter=pads.field("extra", "subject") == "astronomy")
    assert found.num_rows == 1


def test_differing_keys_give_a_struct_of_the_union_and_the_missing_keys(tmp_path: Path) -> None:
    path = tmp_path / "mixed.parquet"
    write_parquet([STEM, QUESTION], path)
    table = pq.read_table(path)
    assert [field.name for field in table.schema.field("extra").type] == [
        *STEM.extra,
        *QUESTION.extra,
    ]
    assert table.column("extra_missing").to_pylist() == [["subject"], list(STEM.extra)]
    assert_same_samples(list(read_parquet(path)), [STEM, QUESTION])


def test_conflicting_value_types_fall_back_to_one_json_object_per_row(tmp_path: Path) -> None:
    other = STEM.model_copy(update={"extra": {"ind": "twenty-four"}})
    path = tmp_path / "mixed.parquet"
    write_parquet([STEM, other], path)
    table = pq.read_table(path)
    assert table.schema.field("extra").type == pa.string()
    assert [json.loads(text) for text in table.column("extra").to_pylist()] == [
        STEM.extra,
        other.extra,
    ]


def test_struct_fields_keep_their_arrow_types(tmp_path: Path) -> None:
    table = samples_to_table([STEM])
    extra = pa.StructArray.from_arrays([pa.array([24], pa.int32())], names=["ind"])
    table = table.set_column(table.schema.get_field_index("extra"), "extra", extra)
    path = tmp_path / "typed.parquet"
    write_parquet(table, path)
    assert pq.read_schema(path).field("extra").type == pa.struct([("ind", pa.int32())])
    (sample,) = read_parquet(path)
    assert sample.extra == {"ind": 24}


def test_fresh_and_audited_files_share_one_schema(tmp_path: Path) -> None:
    write_parquet([QUESTION], tmp_path / "fresh.parquet")
    write_parquet(
        [QUESTION.model_copy(update={"audit": {"ok": True}})], tmp_path / "audited.parquet"
    )
    assert pq.read_schema(tmp_path / "fresh.parquet") == pq.read_schema(
        tmp_path / "audited.parquet"
    )
    assert pq.read_schema(tmp_path / "fresh.parquet") == sample_schema(
        pa.struct([("subject", pa.string())])
    )


def test_written_file_loads_with_datasets_in_the_sample_features(tmp_path: Path) -> None:
    path = tmp_path / "samples.parquet"
    write_parquet([STEM, STEM], path)
    features = read_parquet(path).features
    loaded = datasets.load_dataset(
        "parquet",
        data_files=str(path),
        split="train",
        features=features,
        cache_dir=str(tmp_path / "cache"),
    )
    assert loaded.features == features
    assert loaded[0]["extra"] == STEM.extra
    row = loaded[0]
    wire = {key: value for key, value in row.items() if key != "extra" and value is not None}
    assert MultipleChoiceSample.from_dict(wire | row["extra"]) == STEM


def test_written_file_reads_with_plain_pyarrow(tmp_path: Path) -> None:
    path = tmp_path / "samples.parquet"
    write_parquet([QUESTION], path)
    assert pq.read_table(path).column("context").to_pylist() == [QUESTION.context]


def test_sample_features_match_the_arrow_schema() -> None:
    extra = pa.struct([("ind", pa.int32()), ("split", pa.string())])
    assert sample_features(extra).arrow_schema == sample_schema(extra)


def test_a_failed_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "samples.parquet"
    write_parquet([QUESTION], path)
    before = path.read_bytes()

    def crash(table: pa.Table, where: Path, **options: object) -> None:
        Path(where).write_bytes(b"PAR1 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(pq, "write_table", crash)
    with pytest.raises(KeyboardInterrupt):
        write_parquet([QUESTION, QUESTION], path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["samples.parquet"]


def test_a_file_that_is_not_a_sample_table_lists_missing_and_mistyped_columns(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mmlu.parquet"
    pq.write_table(
        pa.table({"question": ["q"], "choices": [["a", "b"]], "answer_index": ["1"]}), path
    )
    message = (
        "is not a sample table: missing column 'task_type'; missing column 'style'; "
        "missing column 'context'; missing column 'extra'; missing column 'audit'; "
        "missing column 'fix'; missing column 'reaudit'; unknown column 'question'; "
        "column 'answer_index': expected an integer type, got string"
    )
    with pytest.raises(SampleTableError, match=message):
        read_parquet(path)


def test_an_extra_struct_with_a_reserved_key_is_refused() -> None:
    table = samples_to_table([STEM])
    extra = pa.StructArray.from_arrays([pa.array(["x"])], names=["context"])
    table = table.set_column(table.schema.get_field_index("extra"), "extra", extra)
    with pytest.raises(
        SampleTableError,
        match=r"column 'extra': expected a struct without reserved wire keys \(found context\)",
    ):
        SampleSequence(table)


def test_not_parquet_at_all(tmp_path: Path) -> None:
    path = tmp_path / "notes.parquet"
    path.write_text("hello")
    with pytest.raises(SampleTableError, match=r"notes\.parquet cannot be read as Parquet"):
        read_parquet(path)


def _with(
    table: pa.Table, column: str, values: list[Any], dtype: pa.DataType | None = None
) -> pa.Table:
    index = table.schema.get_field_index(column)
    return table.set_column(
        index, column, pa.array(values, dtype or table.schema.field(column).type)
    )


BAD_ROWS = [
    (
        "task_type",
        ["multiple_choice", "text"],
        r"row 1, column 'task_type': expected 'multiple_choice', got 'text'",
    ),
    ("style", [None, "qa"], r"row 0, column 'style': expected 'continuation' or 'qa', got None"),
    (
        "context",
        ["ok", " \u3000"],
        r"row 1, column 'context': expected a non-empty string, got ' \\u3000'",
    ),
    (
        "choices",
        [["a", "b"], ["a"]],
        r"row 1, column 'choices': expected at least two choices, got \['a'\]",
    ),
    (
        "choices",
        [["a", None], ["a", "b"]],
        r"row 0, column 'choices': expected every choice to be a string, got \['a', None\]",
    ),
    ("answer_index", [0, 2], r"row 1, column 'answer_index': expected 0..1 for 2 choices, got 2"),
    ("answer_index", [-1, 0], r"row 0, column 'answer_index': expected 0..1 for 2 choices, got -1"),
    ("extra", ['{"a": 1}', "[1]"], r"row 1, column 'extra': expected a JSON object, got list"),
    (
        "extra",
        ['{"style": 1}', "{}"],
        r"row 0, column 'extra': expected a JSON object without reserved wire keys, got the key 'style'",
    ),
    (
        "extra",
        ['{"a": NaN}', "{}"],
        r"row 0, column 'extra': expected a JSON object, got '\{\"a\": NaN\}' \(NaN is not JSON\)",
    ),
    ("audit", [None, "true"], r"row 1, column 'audit': expected a JSON object, got bool"),
]


@pytest.mark.parametrize(("column", "values", "message"), BAD_ROWS)
def test_invalid_rows_name_the_row_column_expected_and_got(
    column: str, values: list[Any], message: str
) -> None:
    table = samples_to_table([STEM, STEM.model_copy(update={"extra": {"ind": "x"}})])
    table = _with(table, column, values)
    with pytest.raises(SampleTableError, match=message):
        SampleSequence(table, source="demo.parquet")


def test_non_finite_floats_in_a_struct_extra_are_refused() -> None:
    table = samples_to_table([stem(0, f=1.0), stem(1, f=2.0)])
    extra = pa.StructArray.from_arrays([pa.array([1.0, float("inf")])], names=["f"])
    table = table.set_column(table.schema.get_field_index("extra"), "extra", extra)
    with pytest.raises(
        SampleTableError,
        match=r"row 1, column 'extra.f': expected a finite number \(JSON has no NaN or infinity\), got inf",
    ):
        SampleSequence(table)


def test_blank_means_what_python_strip_means() -> None:
    from sdvm_hf.arrow._rules import blank

    characters = [chr(code) for code in range(0x3100)]
    got = blank(pa.array(characters)).to_pylist()
    assert [c for c, is_blank in zip(characters, got, strict=True) if is_blank] == [
        c for c in characters if not c.strip()
    ]


_SPACES = "".join(c for c in map(chr, range(0x3100)) if c.isspace())


@given(
    texts=st.lists(
        st.none() | st.text(alphabet=st.sampled_from(_SPACES + "ab\u00e9\u2030\u3001")), max_size=30
    ),
    start=st.integers(0, 3),
    cut=st.integers(1, 30),
)
def test_blank_is_python_strip_on_any_array_sliced_or_chunked(
    texts: list[str | None], start: int, cut: int
) -> None:
    """The pattern runs only where a string may be blank: the answer is still Python's."""
    from sdvm_hf.arrow._rules import blank

    expected = [None if text is None else not text.strip() for text in texts[start:]]
    array = pa.array(texts, pa.string()).slice(start)
    assert blank(array).to_pylist() == expected
    chunked = pa.chunked_array([array[:cut], array[cut:]], pa.string())
    assert blank(chunked).to_pylist() == expected
    assert blank(array.cast(pa.large_string())).to_pylist() == expected


def test_blank_takes_an_empty_array_with_no_offsets() -> None:
    """Arrow allows a 0-length string array a 0-byte offsets buffer (other implementations)."""
    from sdvm_hf.arrow._rules import blank

    empty = pa.Array.from_buffers(pa.string(), 0, [None, pa.py_buffer(b""), pa.py_buffer(b"")])
    assert blank(empty).to_pylist() == []


def test_the_sequence_indexes_slices_and_becomes_a_dataset(tmp_path: Path) -> None:
    batch = [stem(i, i=i) for i in range(10)]
    path = tmp_path / "s.parquet"
    write_parquet(batch, path)
    seq = read_parquet(path)
    assert len(seq) == 10
    assert seq[3] == batch[3] and seq[-1] == batch[-1]
    assert list(seq[2:5]) == batch[2:5]
    assert list(seq[::-3]) == batch[::-3]
    assert isinstance(seq[2:5], SampleSequence)
    with pytest.raises(IndexError, match="sample index 10 out of range for 10 samples"):
        seq[10]
    assert seq.dataset.num_rows == 10
    assert seq.dataset.features == seq.features


def test_non_finite_floats_inside_list_extras_name_their_rows() -> None:
    table = samples_to_table([stem(i, f=[1.0]) for i in range(4)])
    values = pa.array([[1.0, float("nan")], [], [2.0], [float("inf")]])
    extra = pa.StructArray.from_arrays([values], names=["f"])
    table = table.set_column(table.schema.get_field_index("extra"), "extra", extra)
    with pytest.raises(
        SampleTableError,
        match=r"row 0, column 'extra.f\[1\]': expected a finite number .*, got nan; row 3, column 'extra.f\[0\]': .* got inf",
    ):
        SampleSequence(table)


def test_a_file_corrupt_midway_is_named_by_every_batch_by_batch_reader(tmp_path: Path) -> None:
    """The first row group reads; the second's page header is garbage."""
    table = pa.concat_tables([load_hellaswag(bundled=True).table] * 50)
    path = tmp_path / "corrupt.parquet"
    pq.write_table(table, path, row_group_size=table.num_rows // 3)
    chunk = pq.read_metadata(path).row_group(1).column(1)
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset + 40 : chunk.data_page_offset + 240] = b"\xff" * 200
    path.write_bytes(bytes(data))
    readers: dict[str, Callable[[], object]] = {
        "iter_parquet": lambda: sum(1 for _ in iter_parquet(path)),
        "validate_file": lambda: validate_file(path),
        "inspect_file": lambda: inspect_file(path),
    }
    for name, read in readers.items():
        with pytest.raises(SampleTableError, match=r"corrupt\.parquet cannot be read as Parquet"):
            read()
            pytest.fail(f"{name} read a corrupt file")
