"""A sample that exists is valid and stays so; every error pickles."""

import io
import pickle
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from sdvm_hf import (
    ConversionError,
    LayoutError,
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
    Problem,
    Reject,
    SampleTableError,
    read_jsonl,
    read_parquet,
    write_jsonl,
    write_parquet,
)
from sdvm_hf.service import ServiceError

BASE: dict[str, Any] = {
    "context": "Which is a metal?",
    "choices": ["iron", "wood"],
    "answer_index": 0,
}


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_extra_is_a_deep_copy_that_later_changes_to_the_input_do_not_reach() -> None:
    extra: dict[str, Any] = {"tags": ["a"], "meta": {"k": 1}}
    sample = MultipleChoiceSample(**BASE, extra=extra)
    extra["tags"].append("b")
    extra["meta"]["k"] = 2
    extra["new"] = 3
    assert sample.extra == {"tags": ["a"], "meta": {"k": 1}}
    assert sample.to_dict()["tags"] == ["a"]


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.extra.__setitem__("context", "swapped"),
        lambda s: s.extra.update({"x": 1}),
        lambda s: s.extra.pop("tags"),
        lambda s: s.extra["tags"].append("b"),
        lambda s: s.extra["meta"].__setitem__("k", 2),
        lambda s: s.choices.append("glass"),
        lambda s: s.choices.__setitem__(0, "gold"),
    ],
)
def test_extra_and_choices_are_read_only(change: Any) -> None:
    sample = MultipleChoiceSample(**BASE, extra={"tags": ["a"], "meta": {"k": 1}})
    with pytest.raises(TypeError, match="read-only; build a new sample instead"):
        change(sample)
    assert sample.to_dict() == {
        "task_type": "multiple_choice",
        **BASE,
        "style": "continuation",
        "tags": ["a"],
        "meta": {"k": 1},
    }


def test_read_only_containers_still_compare_and_serialise_as_plain_ones() -> None:
    sample = MultipleChoiceSample(**BASE, extra={"tags": ["a"]})
    assert sample.extra == {"tags": ["a"]} and sample.choices == ["iron", "wood"]
    assert isinstance(sample.extra, dict) and isinstance(sample.choices, list)
    assert sample.model_dump()["extra"] == {"tags": ["a"]}


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ({"answer_index": 5}, "answer_index must be in 0..1 for 2 choices, got 5"),
        ({"extra": {"context": "x"}}, "extra key 'context' is reserved"),
        ({"context": " "}, "context must be a non-empty string"),
        ({"style": "qa"}, "MultipleChoiceCompletionSample is always style='continuation'"),
    ],
)
def test_model_copy_validates_its_update(update: dict[str, Any], message: str) -> None:
    sample = MultipleChoiceCompletionSample(**BASE)
    with pytest.raises(ValidationError, match=message):
        sample.model_copy(update=update)


def test_model_copy_with_a_valid_update_gives_a_valid_sample_of_the_same_class() -> None:
    sample = MultipleChoiceQuestionAnswerSample(**BASE)
    copy = sample.model_copy(update={"answer_index": 1, "extra": {"id": "q1"}})
    assert type(copy) is MultipleChoiceQuestionAnswerSample
    assert (copy.answer_index, copy.extra) == (1, {"id": "q1"})


@pytest.mark.parametrize("writer", [write_parquet, write_jsonl])
def test_writers_refuse_a_sample_built_around_the_validators(writer: Any, tmp_path: Path) -> None:
    bad = MultipleChoiceSample.model_construct(
        context="", choices=["a", "b"], answer_index=0, style="continuation", extra={}
    )
    good = MultipleChoiceSample(**BASE)
    target = tmp_path / "out.file"
    with pytest.raises((ValueError, SampleTableError), match="context"):
        writer([good, bad], target)
    assert list(tmp_path.iterdir()) == []


def test_samples_hash_by_value() -> None:
    a = MultipleChoiceSample(**BASE, extra={"n": 1, "tags": ["x"]})
    b = MultipleChoiceSample(**BASE, extra={"tags": ["x"], "n": 1.0})
    assert a == b and hash(a) == hash(b)
    assert len({a, b, MultipleChoiceSample(**BASE)}) == 2


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"context": "a \ud800 b"}, r"context holds a lone surrogate '\\ud800' at position 2"),
        ({"choices": ["iron", "\udfff"]}, r"choices\[1\] holds a lone surrogate"),
        ({"extra": {"k": ["\ud800"]}}, r"extra\.k\[0\] holds a lone surrogate"),
        ({"extra": {"\ud800": 1}}, r"extra has a key that holds a lone surrogate"),
    ],
)
def test_lone_surrogates_are_refused_naming_the_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        MultipleChoiceSample(**{**BASE, **fields})


def test_nesting_deeper_than_parquet_reads_back_is_refused_at_construction() -> None:
    with pytest.raises(
        ValidationError, match=r"nests deeper than 32 levels, which Parquet cannot read"
    ):
        MultipleChoiceSample(**BASE, extra={"deep": nested(33)})
    with pytest.raises(
        ValidationError, match=r"nests deeper than 32 levels, which Parquet cannot read"
    ):
        MultipleChoiceSample(**BASE, extra={"deep": nested(1_000)})


def test_the_deepest_allowed_nesting_round_trips_through_parquet(tmp_path: Path) -> None:
    sample = MultipleChoiceCompletionSample(**BASE, extra={"deep": nested(31)})
    write_parquet([sample], tmp_path / "deep.parquet")
    assert read_parquet(tmp_path / "deep.parquet")[0] == sample


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[" * 200_000, r"line 1: nested too deeply to parse"),
        (
            '{"task_type": "multiple_choice", "context": "c", "choices": ["a", "b"], '
            '"answer_index": 0, "x": NaN}',
            r"line 1: NaN is not JSON",
        ),
        (
            '{"task_type": "multiple_choice", "context": "c", "choices": ["a", "b"], '
            '"answer_index": 0, "x": 1e400}',
            r"line 1: the number 1e400 is out of range",
        ),
    ],
)
def test_hostile_json_lines_are_refused_naming_the_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_jsonl(path)


REJECT = Reject(3, ("extra", "ind"), "an int32", "'abc'", original={"ind": "abc"})
ERRORS: list[BaseException] = [
    ConversionError("hellaswag validation", Problem(7, ("label",), "'0'..'3'", "'9'")),
    LayoutError("mmlu: column 'question' is missing"),
    SampleTableError("x.parquet is not a sample table"),
    ServiceError("batch 0: malformed response"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_every_error_pickles_with_its_type_and_message(error: BaseException) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error)


def test_problems_and_rejects_pickle_with_their_fields() -> None:
    back = pickle.loads(pickle.dumps(REJECT))
    assert back == REJECT and str(back) == "row 3, column 'extra.ind': expected an int32, got 'abc'"
    error = pickle.loads(pickle.dumps(ERRORS[0]))
    assert isinstance(error, ConversionError) and error.problem.row == 7


def test_a_parquet_row_with_a_null_struct_extra_is_named(tmp_path: Path) -> None:
    import pyarrow as pa

    table = pa.table(
        {
            "task_type": ["multiple_choice"] * 2,
            "style": ["qa"] * 2,
            "context": ["q1", "q2"],
            "choices": [["a", "b"]] * 2,
            "answer_index": [0, 1],
            "extra": pa.array([{"id": "x"}, None], pa.struct([("id", pa.string())])),
            "audit": pa.nulls(2, pa.string()),
            "fix": pa.nulls(2, pa.string()),
            "reaudit": pa.nulls(2, pa.string()),
        }
    )
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    (tmp_path / "n.parquet").write_bytes(buffer.getvalue())
    with pytest.raises(SampleTableError, match=r"row 1, column 'extra': expected an object"):
        read_parquet(tmp_path / "n.parquet")


def sample_columns(**change: Any) -> dict[str, Any]:
    import pyarrow as pa

    columns: dict[str, Any] = {
        "task_type": pa.array(["multiple_choice"] * 2),
        "style": pa.array(["qa"] * 2),
        "context": pa.array(["q1", "q2"]),
        "choices": pa.array([["a", "b"]] * 2),
        "answer_index": pa.array([0, 1]),
        "extra": pa.array([{"id": "x"}, {"id": "y"}]),
        "audit": pa.nulls(2, pa.string()),
        "fix": pa.nulls(2, pa.string()),
        "reaudit": pa.nulls(2, pa.string()),
    }
    columns.update(change)
    return columns


def duplicate_fields() -> Any:
    import pyarrow as pa

    ids = pa.array(["x", "y"])
    return pa.StructArray.from_arrays([ids, ids], names=["id", "id"])


FILES = {
    "valid": sample_columns(),
    "unknown column": sample_columns(score=[1, 2]),
    "duplicate struct fields": sample_columns(extra=duplicate_fields()),
    "bad answer": sample_columns(answer_index=[0, 5]),
    "blank context": sample_columns(context=["q1", " "]),
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_validate_agrees_with_read_parquet(name: str, tmp_path: Path) -> None:
    import pyarrow as pa

    from sdvm_hf.jobs import validate_file

    path = tmp_path / "file.parquet"
    pq.write_table(pa.table(FILES[name]), path)
    try:
        read_parquet(path)
        readable = True
    except SampleTableError:
        readable = False
    try:
        problems = validate_file(path).problems
    except SampleTableError:
        problems = ["not a sample table"]
    assert readable == (name == "valid") == (problems == [])


def test_an_unknown_column_and_duplicate_struct_fields_are_named(tmp_path: Path) -> None:
    import pyarrow as pa

    for columns, message in (
        (FILES["unknown column"], r"unknown column 'score'"),
        (FILES["duplicate struct fields"], r"a struct whose field names differ \(found id twice\)"),
    ):
        pq.write_table(pa.table(columns), tmp_path / "f.parquet")
        with pytest.raises(SampleTableError, match=message):
            read_parquet(tmp_path / "f.parquet")
