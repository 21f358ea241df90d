"""The generic mapping's shapes: answer formats, struct fields, joined contexts, blanks, extra."""

from typing import Any

import pyarrow as pa
import pytest

from sdvm_hf import ConversionError, LayoutError, MultipleChoiceMapping, SampleSequence


def typed(table: pa.Table) -> list[Any]:
    return list(SampleSequence(table))


def source(answers: pa.Array, **columns: pa.Array) -> pa.Table:
    n = len(answers)
    base = {"q": ["Which?"] * n, "c": [["x", "y", "z"]] * n, "a": answers}
    return pa.table({**base, **columns})


@pytest.mark.parametrize(
    ("answers", "want"),
    [
        (pa.array([3, 1], pa.int8()), [2, 0]),
        (pa.array(["3", "1"]), [2, 0]),
        (pa.array(["3\n", " 1 "]), [2, 0]),
    ],
)
def test_one_based_answers(answers: pa.Array, want: list[int]) -> None:
    mapping = MultipleChoiceMapping(
        dataset="t", context="q", choices="c", answer="a", answer_format="one_based"
    )
    assert [s.answer_index for s in typed(mapping.table(source(answers)))] == want


@pytest.mark.parametrize(
    ("answer", "expected", "withheld"),
    [
        ("0", "'1'..'3'", False),
        ("01", "'1'..'3'", False),
        ("4", "'1'..'3'", False),
        ("1.0", "'1'..'3'", False),
        ("99999999999999999999999", "'1'..'3'", False),
        ("", "'1'..'3'", True),
        ("-1", "'1'..'3'", True),
    ],
)
def test_one_based_answers_outside_the_choices_are_bad_rows(
    answer: str, expected: str, withheld: bool
) -> None:
    mapping = MultipleChoiceMapping(
        dataset="t", context="q", choices="c", answer="a", answer_format="one_based"
    )
    with pytest.raises(ConversionError, match=rf"^t row 1, column 'a': expected {expected}") as e:
        mapping.table(source(pa.array(["1", answer])))
    assert ("withheld" in str(e.value)) is withheld


@pytest.mark.parametrize(
    ("answers", "note"),
    [
        (pa.array([1, -1], pa.int64()), True),
        (pa.array(["1", ""]), True),
        (pa.array(["1", "-1"]), True),
        (pa.array(["1", None]), True),
        (pa.array([1, 7], pa.int64()), False),
    ],
)
def test_every_spelling_of_a_withheld_answer_is_explained(answers: pa.Array, note: bool) -> None:
    mapping = MultipleChoiceMapping(dataset="t", context="q", choices="c", answer="a")
    with pytest.raises(ConversionError, match=r"t test row 1, column 'a'") as raised:
        mapping.table(source(answers), split="test")
    assert ("the labels of this split are withheld" in str(raised.value)) is note


def test_a_missing_answer_column_is_a_withheld_split() -> None:
    mapping = MultipleChoiceMapping(dataset="t", context="q", choices="c", answer="a")
    rows = source(pa.array([0, 1])).drop_columns(["a"])
    with pytest.raises(
        LayoutError,
        match=r"t test: column 'a' is missing; columns seen: q, c "
        r"\(a split whose labels are withheld has no answers",
    ):
        mapping.table(rows, split="test")


STRUCT = pa.struct([("text", pa.list_(pa.string())), ("label", pa.list_(pa.string()))])


def arc_like(keys: list[str], labels: list[list[str]]) -> pa.Table:
    choices = [
        {"text": [f"t{i}" for i in range(len(row))], "label": row}
        for row in labels  # texts t0, t1, ... in published order
    ]
    return pa.table(
        {
            "id": [f"q{i}" for i in range(len(keys))],
            "question": ["Which?"] * len(keys),
            "choices": pa.array(choices, STRUCT),
            "answerKey": keys,
        }
    )


LABELLED = MultipleChoiceMapping(
    dataset="t",
    context="question",
    choices="choices.text",
    answer="answerKey",
    answer_format="label",
    labels="choices.label",
)


def test_label_answers_are_matched_against_the_rows_own_labels() -> None:
    table = arc_like(["C", "2", "E"], [["A", "B", "C"], ["3", "1", "2", "4"], list("ABCDE")])
    samples = typed(LABELLED.table(table))
    assert [s.answer_index for s in samples] == [2, 2, 4]
    assert samples[1].choices == ["t0", "t1", "t2", "t3"]
    assert samples[0].extra == {"id": "q0"}


def test_struct_fields_a_mapping_does_not_name_go_to_extra_by_their_path() -> None:
    mapping = MultipleChoiceMapping(
        dataset="t", context="question", choices="choices.text", answer="answerKey",
        answer_format="letter",
    )  # fmt: skip
    table = mapping.table(arc_like(["B"], [["A", "B"]]))
    assert table.schema.field("extra").type == pa.struct(
        [("id", pa.string()), ("choices.label", pa.list_(pa.string()))]
    )
    dropped = MultipleChoiceMapping(
        dataset="t", context="question", choices="choices.text", answer="answerKey",
        answer_format="letter", drop=("choices.label",),
    )  # fmt: skip
    assert typed(dropped.table(arc_like(["B"], [["A", "B"]])))[0].extra == {"id": "q0"}


def test_struct_paths_reach_fields_of_chunked_and_sliced_tables() -> None:
    table = pa.concat_tables(
        [arc_like(["B", "A"], [["A", "B"], ["A", "B"]]), arc_like(["2"], [["1", "2", "3"]])]
    )
    by_batch = [s for b in table.to_batches(max_chunksize=1) for s in typed(LABELLED.table(b))]
    assert by_batch == typed(LABELLED.table(table))
    assert [s.answer_index for s in by_batch] == [1, 0, 1]


def test_the_label_format_and_the_labels_column_go_together() -> None:
    with pytest.raises(ValueError, match=r"labels=... names the label column"):
        MultipleChoiceMapping(dataset="t", context="q", choices="c", answer="a", labels="l")
    with pytest.raises(ValueError, match=r"labels=... names the label column"):
        MultipleChoiceMapping(
            dataset="t", context="q", choices="c", answer="a", answer_format="label"
        )
    with pytest.raises(ValueError, match=r"answer_format must be one of index, one_based"):
        MultipleChoiceMapping(dataset="t", context="q", choices="c", answer="a", answer_format="x")  # type: ignore[arg-type]


def test_a_missing_labels_column_names_the_columns_seen() -> None:
    table = arc_like(["A"], [["A", "B"]]).drop_columns(["choices"])
    with pytest.raises(LayoutError, match=r"t: column 'choices.text' is missing; columns seen"):
        LABELLED.table(table)


def test_text_answers_count_positions_from_each_rows_start_in_a_slice() -> None:
    mapping = MultipleChoiceMapping(
        dataset="t", context="q", choices="c", answer="a", answer_format="text"
    )
    table = pa.table(
        {
            "q": ["1?", "2?", "3?"],
            "c": [["a", "b", "c", "d"], ["e", "f", "g", "h"], ["i", "j", "k", "l"]],
            "a": ["b", "h", "k"],
        }
    )
    batches = table.to_batches(max_chunksize=1)
    assert [typed(mapping.table(b))[0].answer_index for b in batches] == [1, 3, 2]
    assert [s.answer_index for s in typed(mapping.table(table.slice(1)))] == [3, 2]


def test_one_hot_flags_mark_the_answer() -> None:
    mapping = MultipleChoiceMapping(
        dataset="t", context="q", choices="c", answer="a", answer_format="one_hot"
    )
    flags = pa.array([[0, 0, 1], [1, 0, 0]], pa.list_(pa.int32()))
    assert [s.answer_index for s in typed(mapping.table(source(flags)))] == [2, 0]
    with pytest.raises(LayoutError, match=r"expected a list of 0/1 integers"):
        mapping.table(source(pa.array([1, 2])))


def test_a_context_joined_from_several_columns_keeps_its_sources_in_extra() -> None:
    mapping = MultipleChoiceMapping(
        dataset="t",
        context=("context", "question"),
        context_join=" ",
        choices=("A", "B"),
        answer="label",
        answer_format="one_based",
        keep=("context", "question"),
        rename={"context": "situation"},
    )
    table = pa.table(
        {
            "context": ["Sydney left.", None],
            "question": ["Why?", "How?"],
            "A": ["a", "b"],
            "B": ["c", "d"],
            "label": ["1", "2"],
        }
    )
    converted = mapping.convert(table, on_error="skip")
    (sample,) = typed(converted.table)
    assert sample.context == "Sydney left. Why?"
    assert sample.extra == {"situation": "Sydney left.", "question": "Why?"}
    (reject,) = converted.rejects
    assert (reject.row, reject.column) == (1, "context+question")


def test_a_kept_column_named_like_a_wire_key_must_be_renamed_or_dropped() -> None:
    mapping = MultipleChoiceMapping(
        dataset="t", context=("context", "question"), choices=("A", "B"), answer="label",
        keep=("context",),
    )  # fmt: skip
    table = pa.table({"context": ["c"], "question": ["q"], "A": ["a"], "B": ["b"], "label": [0]})
    with pytest.raises(LayoutError, match=r"'context' .* drop=\(\.\.\.\) or rename=\{'context'"):
        mapping.table(table)


def test_a_blank_in_list_column_choices_and_in_sliced_batches() -> None:
    mapping = MultipleChoiceMapping(
        dataset="t", context="s", blank="_", choices="o", answer="a", style="continuation"
    )
    table = pa.table(
        {
            "s": ["Ann asked Bo because _ knew.", "Cy paid _ back.", "Di met _"],
            "o": [["Ann", "Bo"], ["Di", "Ed", "Fay"], ["Gus", "Hal"]],
            "a": [1, 2, 0],
        }
    )
    whole = typed(mapping.table(table))
    sliced = [s for b in table.to_batches(max_chunksize=2) for s in typed(mapping.table(b))]
    assert whole == sliced
    assert [(s.context, s.choices) for s in whole] == [
        ("Ann asked Bo because", ["Ann knew.", "Bo knew."]),
        ("Cy paid", ["Di back.", "Ed back.", "Fay back."]),
        ("Di met", ["Gus", "Hal"]),
    ]


def test_a_blank_needs_one_context_column() -> None:
    with pytest.raises(ValueError, match=r"blank='_' needs one context column"):
        MultipleChoiceMapping(dataset="t", context=("a", "b"), choices="c", answer="x", blank="_")


def test_a_typo_in_a_column_name_is_answered_with_the_close_one() -> None:
    source = pa.table({"q": ["Why?"], "a": ["x"], "b": ["y"], "answer": [0]})
    mapping = MultipleChoiceMapping(dataset="typo", context="q", choices=("a", "b"), answer="answr")
    with pytest.raises(LayoutError, match=r"column 'answr' is missing; .*did you mean 'answer'\?$"):
        mapping.table(source)
    wrong_context = MultipleChoiceMapping(
        dataset="typo", context="qq", choices=("a", "b"), answer="answer"
    )
    with pytest.raises(LayoutError, match=r"column 'qq' is missing; .*did you mean 'q'\?$"):
        wrong_context.table(source)
