"""The generic mapping and the presets: three forms that agree, and bad rows reported."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import (
    ConversionError,
    LayoutError,
    MultipleChoiceCompletionSample,
    MultipleChoiceMapping,
    MultipleChoiceQuestionAnswerSample,
    Reject,
    Rejects,
    SampleSequence,
)
from sdvm_hf.convert.mapping import split_rejects
from sdvm_hf.presets.hellaswag import HELLASWAG
from sdvm_hf.presets.mmlu import MMLU_LAYOUTS, detect_mmlu_layout

FIXTURES = Path(__file__).parent / "fixtures"
HELLASWAG_HUB = FIXTURES / "hellaswag" / "validation.parquet"


def typed(table: pa.Table) -> list[Any]:
    return list(SampleSequence(table))


def three_forms(
    mapping: MultipleChoiceMapping, source: pa.Table, split: str = "validation"
) -> tuple[list[Any], list[Any], list[Any]]:
    by_table = typed(mapping.table(source, split=split))
    by_row = [mapping.row(row, split=split, row=i) for i, row in enumerate(source.to_pylist())]
    dataset = datasets.Dataset(datasets.table.InMemoryTable(source))
    mapped = dataset.map(
        mapping.batch,
        batched=True,
        batch_size=5,
        with_indices=True,
        remove_columns=dataset.column_names,
        features=mapping.features(dataset.features),
        fn_kwargs={"split": split},
    )
    by_batch = typed(mapped.data.table)
    return by_table, by_batch, by_row


def test_hellaswag_the_three_forms_give_identical_samples() -> None:
    source = pq.read_table(HELLASWAG_HUB)
    by_table, by_batch, by_row = three_forms(HELLASWAG, source)
    assert by_table == by_batch == by_row
    assert len(by_table) == source.num_rows
    first = by_table[0]
    assert type(first) is MultipleChoiceCompletionSample
    assert first.context == source.column("ctx")[0].as_py() == "A man is sitting on a roof. he"
    assert first.choices == source.column("endings")[0].as_py()
    assert first.answer_index == int(source.column("label")[0].as_py())
    assert list(first.extra) == [
        "ind",
        "activity_label",
        "ctx_a",
        "ctx_b",
        "source_id",
        "split",
        "split_type",
    ]


@pytest.mark.parametrize("layout", sorted(set(MMLU_LAYOUTS) - {"hendrycks_csv", "mmmlu"}))
def test_mmlu_layouts_the_three_forms_agree(layout: str) -> None:
    source = pq.read_table(
        FIXTURES / "mmlu" / f"{'cais_test' if layout == 'cais' else layout}.parquet"
    )
    mapping = MMLU_LAYOUTS[detect_mmlu_layout(source.column_names)]
    assert mapping is MMLU_LAYOUTS[layout]
    if layout == "mmlu_pro":
        source = source.slice(0, 6)  # the fixture's last two rows carry one and two options
    by_table, by_batch, by_row = three_forms(mapping, source, "test")
    assert by_table == by_batch == by_row
    assert all(type(sample) is MultipleChoiceQuestionAnswerSample for sample in by_table)


def test_hellaswag_extra_keeps_the_hub_types_from_either_source() -> None:
    hub = HELLASWAG.table(pq.read_table(HELLASWAG_HUB))
    rows = [
        json.loads(line)
        for line in (FIXTURES / "hellaswag" / "validation.jsonl").read_text().splitlines()
    ]
    original = HELLASWAG.table(pa.Table.from_pylist(rows))
    assert hub.schema.field("extra").type.field("ind").type == pa.int32()
    assert original.schema == hub.schema
    assert typed(original) == typed(hub)


def test_the_table_form_takes_a_record_batch_leaves_it_unchanged_and_repeats_itself() -> None:
    source = pq.read_table(HELLASWAG_HUB)
    batch = source.to_batches()[0]
    before = pa.Table.from_batches([batch]).to_pylist()
    assert HELLASWAG.table(batch).equals(HELLASWAG.table(source))
    assert HELLASWAG.table(batch).equals(HELLASWAG.table(batch))
    assert pa.Table.from_batches([batch]).to_pylist() == before


ARC = MultipleChoiceMapping(
    dataset="arc", context="question", choices=("A", "B", "C"), answer="key", answer_format="letter"
)


def arc_rows(**change: Any) -> pa.Table:
    rows = [
        {
            "question": "Which is a metal?",
            "A": "iron",
            "B": "wood",
            "C": "glass",
            "key": "A",
            "id": "q1",
        },
        {
            "question": "Which is a gas?",
            "A": "ice",
            "B": "steam",
            "C": "stone",
            "key": "B",
            "id": "q2",
        },
    ]
    rows[1].update(change)
    return pa.Table.from_pylist(rows)


@pytest.mark.parametrize(
    ("mapping", "answers", "want"),
    [
        (
            MultipleChoiceMapping(dataset="t", context="q", choices="c", answer="a"),
            pa.array([2, 0], pa.int32()),
            [2, 0],
        ),
        (
            MultipleChoiceMapping(dataset="t", context="q", choices="c", answer="a"),
            pa.array(["2", "0"]),
            [2, 0],
        ),
        (
            MultipleChoiceMapping(
                dataset="t", context="q", choices="c", answer="a", answer_format="letter"
            ),
            pa.array(["C", "A"]),
            [2, 0],
        ),
        (
            MultipleChoiceMapping(
                dataset="t", context="q", choices="c", answer="a", answer_format="text"
            ),
            pa.array(["z", "x"]),
            [2, 0],
        ),
    ],
)
def test_answers_as_index_letter_or_text(
    mapping: MultipleChoiceMapping, answers: pa.Array, want: list[int]
) -> None:
    source = pa.table(
        {"q": ["one?", "two?"], "c": [["x", "y", "z"], ["x", "y", "z"]], "a": answers}
    )
    assert [sample.answer_index for sample in typed(mapping.table(source))] == want


@pytest.mark.parametrize(
    ("answers", "row", "got"),
    [
        (pa.array([2.0, 1.0]), 0, "2.0"),
        (pa.array(["2", "02"]), 1, "'02'"),
        (pa.array(["2", " 2"]), 1, "' 2'"),
        (pa.array(["2", "+2"]), 1, "'\\+2'"),
        (pa.array(["2", "99999999999999999999"]), 1, "'99999999999999999999'"),
    ],
)
def test_an_index_label_must_be_the_exact_published_form(
    answers: pa.Array, row: int, got: str
) -> None:
    mapping = MultipleChoiceMapping(dataset="t", context="q", choices="c", answer="a")
    source = pa.table({"q": ["one?", "two?"], "c": [["x", "y", "z"]] * 2, "a": answers})
    with pytest.raises(
        ConversionError, match=rf"t row {row}, column 'a': expected .*2'?, got {got}"
    ):
        mapping.table(source)
    result = mapping.convert(source, on_error="skip")
    assert [r.row for r in result.rejects] == ([0, 1] if row == 0 else [1])


def test_text_answers_match_the_first_equal_choice_of_their_own_row() -> None:
    mapping = MultipleChoiceMapping(
        dataset="t", context="q", choices="c", answer="a", answer_format="text"
    )
    source = pa.table(
        {
            "q": ["1?", "2?", "3?"],
            "c": [["a", "b", "b"], ["b", "a"], ["c", "d"]],
            "a": ["b", "b", "d"],
        }
    )
    assert [s.answer_index for s in typed(mapping.table(source))] == [1, 0, 1]


def test_generic_mapping_keeps_every_other_column_with_its_type() -> None:
    source = arc_rows().append_column("grade", pa.array([3, 4], pa.int8()))
    table = ARC.table(source, split="test")
    assert table.schema.field("extra").type == pa.struct(
        [("id", pa.string()), ("grade", pa.int8())]
    )
    assert typed(table)[1].extra == {"id": "q2", "grade": 4}


def test_a_source_with_no_other_columns_gets_an_empty_extra() -> None:
    table = ARC.table(arc_rows().drop_columns(["id"]))
    assert [sample.extra for sample in typed(table)] == [{}, {}]


BAD_ROWS = [
    (ARC, arc_rows(key="E"), r"arc test row 1, column 'key': expected a letter 'A'..'C', got 'E'"),
    (
        ARC,
        arc_rows(key=None),
        r"arc test row 1, column 'key': expected a letter 'A'..'C', got None \(the labels of this split are withheld",
    ),
    (
        ARC,
        arc_rows(question=None),
        r"arc test row 1, column 'question': expected a non-empty string, got None",
    ),
    (
        ARC,
        arc_rows(question="  "),
        r"arc test row 1, column 'question': expected a non-empty string, got '  '",
    ),
    (
        ARC,
        arc_rows(B=None),
        r"arc test row 1, column 'A..C': expected every choice to be a string, got \['ice', None, 'stone'\]",
    ),
    (
        HELLASWAG,
        pq.read_table(FIXTURES / "hellaswag" / "test.parquet"),
        r"hellaswag test row 0, column 'label': expected '0'..'3', got '' \(the labels of this split are withheld, so its rows cannot be samples\)",
    ),
    (
        MMLU_LAYOUTS["mmlu_pro"],
        pq.read_table(FIXTURES / "mmlu" / "mmlu_pro.parquet"),
        r"mmlu-pro test row 6, column 'options': expected at least two choices, got \[",
    ),
    (
        HELLASWAG,
        pq.read_table(HELLASWAG_HUB).slice(0, 2).set_column(9, "label", pa.array(["3", "7"])),
        r"hellaswag test row 1, column 'label': expected '0'..'3', got '7'",
    ),
    (
        HELLASWAG,
        pq.read_table(HELLASWAG_HUB).slice(0, 2).set_column(9, "label", pa.array(["3", "x1"])),
        r"hellaswag test row 1, column 'label': expected '0'..'3', got 'x1'",
    ),
]


@pytest.mark.parametrize(("mapping", "source", "message"), BAD_ROWS)
def test_raise_names_dataset_split_row_column_expected_and_got(
    mapping: MultipleChoiceMapping, source: pa.Table, message: str
) -> None:
    with pytest.raises(ConversionError, match=message):
        mapping.table(source, split="test")


@pytest.mark.parametrize(("mapping", "source", "message"), BAD_ROWS)
def test_skip_reports_every_rejected_row_and_loses_none(
    mapping: MultipleChoiceMapping, source: pa.Table, message: str
) -> None:
    result = mapping.convert(source, split="test", on_error="skip", first_row=100)
    assert result.table.num_rows + len(result.rejects) == source.num_rows
    assert result.rejects, "the bad row must be reported"
    rows = source.to_pylist()
    for reject in result.rejects:
        assert isinstance(reject, Reject)
        assert reject.original == rows[reject.row - 100]
        assert reject.expected and reject.column


def test_row_offsets_number_rows_across_batches() -> None:
    with pytest.raises(ConversionError, match="arc test row 41, column 'key'"):
        ARC.table(arc_rows(key="Z"), split="test", first_row=40)


def test_a_split_with_no_label_column_is_a_layout_error_that_says_why() -> None:
    lines = (FIXTURES / "hellaswag" / "test.jsonl").read_text().splitlines()
    source = pa.Table.from_pylist([json.loads(line) for line in lines])
    with pytest.raises(
        LayoutError,
        match=r"hellaswag test: column 'label' is missing; columns seen: ind, .*a split whose "
        r"labels are withheld has no answers",
    ):
        HELLASWAG.table(source, split="test")


def test_batch_form_in_skip_mode_carries_the_rejects_in_its_output() -> None:
    out = ARC.batch(arc_rows(key="Q").to_pydict(), [10, 11], on_error="skip")
    assert isinstance(out, dict)
    assert out["reject"][0] is None and out["context"][1] is None
    result = split_rejects(pa.Table.from_pydict(out))
    assert result.table.num_rows == 1
    assert [(r.row, r.column, r.got) for r in result.rejects] == [(11, "key", "'Q'")]
    assert result.rejects[0].original == arc_rows(key="Q").to_pylist()[1]


@pytest.mark.parametrize(
    ("mapping", "source", "message"),
    [
        (
            ARC,
            arc_rows().drop_columns(["question"]),
            r"arc: column 'question' is missing; columns seen: A, B, C, key, id",
        ),
        (
            ARC,
            arc_rows().append_column("style", pa.array(["x", "y"])),
            r"column 'style' would go to extra, but it is a reserved wire key",
        ),
        (
            ARC,
            arc_rows().append_column("raw", pa.array([b"x", b"y"])),
            r"arc: column raw has Arrow type binary, which is not JSON-compatible",
        ),
        (
            MultipleChoiceMapping(dataset="t", context="question", choices="A", answer="key"),
            arc_rows(),
            r"column 'A' should hold a list of choices, got string",
        ),
    ],
)
def test_sources_that_do_not_fit_the_mapping(
    mapping: MultipleChoiceMapping, source: pa.Table, message: str
) -> None:
    with pytest.raises(LayoutError, match=message):
        mapping.table(source)


def test_non_finite_floats_in_extra_columns_are_bad_rows() -> None:
    source = arc_rows().append_column("score", pa.array([1.0, float("nan")]))
    with pytest.raises(
        ConversionError,
        match=r"arc test row 1, column 'score': expected a finite number \(JSON has no NaN or infinity\), got nan",
    ):
        ARC.table(source, split="test")


def test_unknown_mmlu_layout_lists_the_columns_and_the_layouts() -> None:
    with pytest.raises(
        LayoutError,
        match=r"unknown mmlu layout: columns seen: prompt, options, gold; layouts known: auxiliary_train \(train\); mmlu_pro",
    ):
        detect_mmlu_layout(["prompt", "options", "gold"])


def test_auxiliary_train_unnests_its_struct_column() -> None:
    source = pq.read_table(FIXTURES / "mmlu" / "auxiliary_train.parquet")
    (first, *_) = typed(MMLU_LAYOUTS["auxiliary_train"].table(source))
    assert first.extra == {"subject": ""}
    assert first.context == source.column("train")[0].as_py()["question"]


def test_the_batch_form_on_a_plain_dict_returns_lists_equal_to_the_table_form() -> None:
    source = pq.read_table(HELLASWAG_HUB)
    out = HELLASWAG.batch(source.to_pydict(), split="validation")
    assert isinstance(out, dict) and isinstance(out["context"], list)
    assert typed(pa.Table.from_pydict(out, schema=HELLASWAG.schema(source.schema))) == typed(
        HELLASWAG.table(source)
    )


@pytest.mark.parametrize(
    ("mapping", "source", "message"),
    [
        (
            MultipleChoiceMapping(dataset="t", context="key", choices=("A", "B"), answer="key"),
            arc_rows().set_column(4, "key", pa.array([1, 2])),
            r"t: context column 'key' should hold strings, got int64",
        ),
    ],
)
def test_context_and_choice_columns_of_the_wrong_type(
    mapping: MultipleChoiceMapping, source: pa.Table, message: str
) -> None:
    with pytest.raises(LayoutError, match=message):
        mapping.table(source)


@pytest.mark.parametrize(
    ("column", "got"), [(pa.array([1.5, 2.5]), "1.5"), (pa.array([7, 8]), "7")]
)
def test_choices_that_are_not_text_are_refused_by_name(column: pa.Array, got: str) -> None:
    source = arc_rows().set_column(1, "A", column)
    with pytest.raises(
        ConversionError, match=rf"arc row 0, column 'A': expected a string, got {got}"
    ):
        ARC.table(source)


def test_a_mapping_may_ask_for_integer_choices_to_be_cast_to_text() -> None:
    source = arc_rows().set_column(1, "A", pa.array([7, 8])).set_column(2, "B", pa.array([1, 2]))
    as_text = replace(ARC, types={"A": pa.string(), "B": pa.string()})
    assert [s.choices[:2] for s in typed(as_text.table(source))] == [["7", "1"], ["8", "2"]]


@pytest.mark.parametrize(
    ("endings", "expected"),
    [
        ([[1e16, 2.0], [3.0, 4.0]], "a list of strings"),
        ([[["a"], ["b"]], [["c"], ["d"]]], "a list of strings"),
    ],
)
def test_a_list_of_choices_that_are_not_text_is_refused_not_converted(
    endings: list[Any], expected: str
) -> None:
    mapping = MultipleChoiceMapping(dataset="t", context="q", choices="c", answer="a")
    source = pa.table({"q": ["one?", "two?"], "c": endings, "a": [0, 1]})
    with pytest.raises(ConversionError, match=rf"t row 0, column 'c': expected {expected}"):
        mapping.table(source)


@pytest.mark.parametrize(
    ("ind", "got"),
    [
        (pa.array(["7", "abc"]), "'abc'"),
        (pa.array([7, 2**40]), "1099511627776"),
        (pa.array([7.0, 1.7]), "1.7"),
    ],
)
def test_a_cell_the_mapping_cannot_cast_is_a_bad_row_not_a_crash(ind: pa.Array, got: str) -> None:
    source = pq.read_table(HELLASWAG_HUB).slice(0, 2)
    source = source.set_column(source.schema.get_field_index("ind"), "ind", ind)
    with pytest.raises(
        ConversionError,
        match=rf"hellaswag validation row 1, column 'ind': expected a value that fits int32, got {got}",
    ):
        HELLASWAG.table(source, split="validation")
    result = HELLASWAG.convert(source, split="validation", on_error="skip")
    assert [s.extra["ind"] for s in typed(result.table)] == [7]
    assert [(r.row, r.column) for r in result.rejects] == [(1, "ind")]
    assert result.rejects[0].original["ind"] == ind[1].as_py()


def test_rejects_as_data_round_trip_through_their_table() -> None:
    result = ARC.convert(arc_rows(key="Q"), split="test", on_error="skip", first_row=5)
    table = result.rejects.table()
    assert table.column_names == ["row", "kind", "path", "expected", "got", "note", "original"]
    back = Rejects.from_table(table)
    assert list(back) == list(result.rejects) and back.problems[0].row == 6
    assert [r.kind for r in back] == ["answer_out_of_range"]  # 'Q' of four letters
    older = Rejects.from_table(table.drop_columns(["kind"]))  # written before kinds existed
    assert [r.kind for r in older] == ["unknown"]
    assert [replace(r, kind="answer_out_of_range") for r in older] == list(back)


def test_the_split_is_bound_once_and_every_form_names_it() -> None:
    test = ARC.for_split("test")
    assert test == ARC and test.where == "arc test" and ARC.where == "arc"
    assert "split" not in ARC.describe() and test.describe() == ARC.describe()
    bad = arc_rows(key="Z")
    for form in (
        lambda: test.table(bad),
        lambda: test(bad),
        lambda: test.row(bad.to_pylist()[1], row=1),
        lambda: ARC.table(bad, split="test"),  # a form's split= binds it the same way
    ):
        with pytest.raises(ConversionError, match=r"^arc test row 1, column 'key'"):
            form()
    with pytest.raises(ConversionError, match=r"^arc validation row 1, column 'key'"):
        test.table(bad, split="validation")  # the form's split= wins over the bound one
    rejected = test.convert(bad, on_error="skip").rejects
    assert [r.row for r in rejected] == [1]
