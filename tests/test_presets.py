"""Every preset against real rows in its published layout: exact samples, one answer per form.

Each expected sample comes from a plain-Python reading of the dataset's documented rule
(``REFERENCE``), row by row, independent of the vectorised table form under test.
"""

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import assert_same_samples

import sdvm_hf
from sdvm_hf import (
    PRESETS,
    ConversionError,
    MultipleChoiceCompletionSample,
    MultipleChoiceMapping,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
    SampleSequence,
    load,
    read_jsonl,
    read_parquet,
    stream,
    write_jsonl,
    write_parquet,
)
from sdvm_hf.cli import main
from sdvm_hf.presets.arc import ARC
from sdvm_hf.presets.openbookqa import OPENBOOKQA
from sdvm_hf.presets.social_i_qa import SOCIAL_I_QA
from sdvm_hf.presets.swag import SWAG
from sdvm_hf.presets.truthfulqa import TRUTHFULQA
from sdvm_hf.presets.winogrande import WINOGRANDE

FIXTURES = Path(__file__).parent / "fixtures"

Expected = tuple[str, list[str], int, dict[str, Any]]


def _struct_choices(context: str) -> Callable[[dict[str, Any]], Expected]:
    def reference(row: dict[str, Any]) -> Expected:
        labels = row["choices"]["label"]
        assert labels.count(row["answerKey"]) == 1
        extra = {  # choices.label is kept, so the export gives choices and answerKey back
            ("choices.label" if k == "choices" else k): (labels if k == "choices" else v)
            for k, v in row.items()
            if k not in (context, "answerKey")
        }
        return row[context], row["choices"]["text"], labels.index(row["answerKey"]), extra

    return reference


def _piqa(row: dict[str, Any]) -> Expected:
    return row["goal"], [row["sol1"], row["sol2"]], row["label"], {}


def _social_i_qa(row: dict[str, Any]) -> Expected:
    choices = [row["answerA"], row["answerB"], row["answerC"]]
    extra = {"situation": row["context"], "question": row["question"], "label": row["label"]}
    return f"{row['context']} {row['question']}", choices, int(row["label"]) - 1, extra


def _winogrande(row: dict[str, Any]) -> Expected:
    sentence = row["sentence"]
    i = sentence.index("_")
    choices = [row["option1"] + sentence[i + 1 :], row["option2"] + sentence[i + 1 :]]
    return sentence[:i].rstrip(), choices, int(row["answer"]) - 1, dict(row)


def _swag(row: dict[str, Any]) -> Expected:
    endings = [row[f"ending{i}"] for i in range(4)]
    skip = {"startphrase", "label", *(f"ending{i}" for i in range(4))}
    return (
        row["startphrase"],
        endings,
        row["label"],
        {k: v for k, v in row.items() if k not in skip},
    )


def _truthfulqa(row: dict[str, Any]) -> Expected:
    mc1 = row["mc1_targets"]
    return (
        row["question"],
        mc1["choices"],
        mc1["labels"].index(1),
        {"mc2_targets": row["mc2_targets"]},
    )


def _sciq(row: dict[str, Any]) -> Expected:
    choices = [row["distractor1"], row["distractor2"], row["distractor3"], row["correct_answer"]]
    return (
        row["question"],
        choices,
        choices.index(row["correct_answer"]),
        {"support": row["support"]},
    )


def _copa(row: dict[str, Any]) -> Expected:
    extra = {"question": row["question"], "idx": row["idx"]}
    return row["premise"], [row["choice1"], row["choice2"]], row["label"], extra


REFERENCE: dict[str, Callable[[dict[str, Any]], Expected]] = {
    "arc": _struct_choices("question"),
    "openbookqa": _struct_choices("question_stem"),
    "commonsense_qa": _struct_choices("question"),
    "piqa": _piqa,
    "social_i_qa": _social_i_qa,
    "winogrande": _winogrande,
    "swag": _swag,
    "truthfulqa": _truthfulqa,
    "sciq": _sciq,
    "copa": _copa,
}

STYLE = {
    "arc": "qa",
    "openbookqa": "continuation",
    "commonsense_qa": "qa",
    "piqa": "qa",
    "social_i_qa": "qa",
    "winogrande": "continuation",
    "swag": "continuation",
    "truthfulqa": "qa",
    "sciq": "qa",
    "copa": "qa",
}

# (preset, fixture file, split) for every fixture whose rows all have answers
ANSWERED = [
    ("arc", "arc/ARC-Challenge-train.parquet", "train"),
    ("arc", "arc/ARC-Challenge-test.parquet", "test"),
    ("openbookqa", "openbookqa/main-train.parquet", "train"),
    ("openbookqa", "openbookqa/main-test.parquet", "test"),
    ("openbookqa", "openbookqa/additional-train.parquet", "train"),
    ("commonsense_qa", "commonsense_qa/default-validation.parquet", "validation"),
    ("piqa", "piqa/default-validation.parquet", "validation"),
    ("social_i_qa", "social_i_qa/default-validation.parquet", "validation"),
    ("winogrande", "winogrande/winogrande_xl-train.parquet", "train"),
    ("winogrande", "winogrande/winogrande_xl-validation.parquet", "validation"),
    ("swag", "swag/regular-validation.parquet", "validation"),
    ("truthfulqa", "truthfulqa/multiple_choice-validation.parquet", "validation"),
    ("sciq", "sciq/default-validation.parquet", "validation"),
    ("copa", "copa/copa-validation.parquet", "validation"),
]

# (preset, fixture file, the answer column) for the splits whose answers are withheld
WITHHELD = [
    ("commonsense_qa", "commonsense_qa/default-test.parquet", "answerKey"),
    ("piqa", "piqa/default-test.parquet", "label"),
    ("winogrande", "winogrande/winogrande_xl-test.parquet", "answer"),
    ("swag", "swag/regular-test.parquet", "label"),
    ("copa", "copa/copa-test.parquet", "label"),
]

# one fixture per preset, for the checks every preset must pass
ONE_FIXTURE = {
    "hellaswag": ("hellaswag/validation.parquet", "validation"),
    "mmlu": ("mmlu/cais_test.parquet", "test"),
    **{name: (file, split) for name, file, split in ANSWERED},
}


def mapping_of(name: str, source: pa.Table) -> MultipleChoiceMapping:
    return PRESETS[name].mapping(source.column_names)


def expected_samples(name: str, source: pa.Table) -> list[MultipleChoiceSample]:
    cls = (
        MultipleChoiceCompletionSample
        if STYLE[name] == "continuation"
        else MultipleChoiceQuestionAnswerSample
    )
    samples: list[MultipleChoiceSample] = []
    for row in source.to_pylist():
        context, choices, answer, extra = REFERENCE[name](row)
        samples.append(cls(context=context, choices=choices, answer_index=answer, extra=extra))
    return samples


def test_every_new_preset_has_a_reference_a_fixture_and_its_module_mapping() -> None:
    assert set(ONE_FIXTURE) == set(PRESETS)
    for name in REFERENCE:
        module = importlib.import_module(f"sdvm_hf.presets.{name}")
        assert getattr(module, name.upper()) is PRESETS[name].mapping([])
        assert not hasattr(sdvm_hf, f"load_{name}")  # one front door: load(name, ...)


@pytest.mark.parametrize(("name", "file", "split"), ANSWERED)
def test_each_preset_converts_its_fixture_exactly(name: str, file: str, split: str) -> None:
    source = pq.read_table(FIXTURES / file)
    table = mapping_of(name, source).table(source, split=split)
    got = list(SampleSequence(table))
    assert_same_samples(got, expected_samples(name, source))
    assert {sample.style for sample in got} == {STYLE[name]}


@pytest.mark.parametrize(("name", "file", "split"), ANSWERED)
def test_extra_keeps_the_published_arrow_types(name: str, file: str, split: str) -> None:
    source = pq.read_table(FIXTURES / file)
    mapping = mapping_of(name, source)
    extra = mapping.table(source, split=split).schema.field("extra").type
    if not pa.types.is_struct(extra):  # PIQA: no column left for extra
        assert name == "piqa"
        return
    rename = dict(mapping.rename)
    published = {rename.get(f.name, f.name): f.type for f in source.schema}
    for field in source.schema:  # a kept struct field by its path (ARC's choices.label)
        if pa.types.is_struct(field.type):
            published.update({f"{field.name}.{f.name}": f.type for f in field.type})
    assert {f.name: f.type for f in extra} == {f.name: published[f.name] for f in extra}


@pytest.mark.parametrize("name", sorted(ONE_FIXTURE))
def test_the_three_forms_agree_for_every_preset(name: str) -> None:
    file, split = ONE_FIXTURE[name]
    source = pq.read_table(FIXTURES / file)
    mapping = mapping_of(name, source)
    by_table = list(SampleSequence(mapping.table(source, split=split)))
    by_row = [mapping.row(row, split=split, row=i) for i, row in enumerate(source.to_pylist())]
    dataset = datasets.Dataset(datasets.table.InMemoryTable(source))
    mapped = dataset.map(
        mapping.batch,
        batched=True,
        batch_size=2,  # slices whose list offsets do not start at 0
        with_indices=True,
        remove_columns=dataset.column_names,
        features=mapping.features(dataset.features),
        fn_kwargs={"split": split},
    )
    by_batch = list(SampleSequence(mapped.data.table))
    assert by_table == by_batch == by_row
    assert len(by_table) == source.num_rows


@pytest.mark.parametrize("name", sorted(ONE_FIXTURE))
def test_every_preset_round_trips_through_parquet_and_the_wire(name: str, tmp_path: Path) -> None:
    file, split = ONE_FIXTURE[name]
    source = pq.read_table(FIXTURES / file)
    table = mapping_of(name, source).table(source, split=split)
    samples = list(SampleSequence(table))
    write_parquet(table, tmp_path / "s.parquet")  # the converted table: Arrow types kept
    back = read_parquet(tmp_path / "s.parquet")
    assert_same_samples(list(back), samples)
    assert back.table.schema == table.schema
    write_parquet(samples, tmp_path / "typed.parquet")  # typed samples: values kept
    assert_same_samples(list(read_parquet(tmp_path / "typed.parquet")), samples)
    write_jsonl(samples, tmp_path / "s.jsonl")
    assert_same_samples(list(read_jsonl(tmp_path / "s.jsonl")), samples)


@pytest.mark.parametrize(("name", "file", "column"), WITHHELD)
def test_a_withheld_split_is_explained_as_withheld(name: str, file: str, column: str) -> None:
    source = pq.read_table(FIXTURES / file)
    mapping = mapping_of(name, source)
    message = (
        rf"{name} test row 0, column '{column}': expected .+, got .+ "
        r"\(the labels of this split are withheld, so its rows cannot be samples\)"
    )
    with pytest.raises(ConversionError, match=message):
        mapping.table(source, split="test")
    skipped = mapping.convert(source, split="test", on_error="skip")
    assert skipped.table.num_rows == 0
    assert [r.row for r in skipped.rejects] == list(range(source.num_rows))
    assert all("withheld" in r.note and r.column == column for r in skipped.rejects)


@pytest.mark.parametrize(("name", "file", "split"), ANSWERED)
def test_load_reads_every_preset_with_the_same_arguments(name: str, file: str, split: str) -> None:
    by_name = load(name, None, split, data_files=str(FIXTURES / file))
    by_preset = load(PRESETS[name], split=split, data_files=str(FIXTURES / file))
    source = pq.read_table(FIXTURES / file)
    assert list(by_name) == list(by_preset) == expected_samples(name, source)
    streamed = stream(name, None, split, data_files=str(FIXTURES / file))
    assert list(streamed) == list(by_name)


@pytest.mark.parametrize(("name", "file", "split"), ANSWERED[::3])
def test_the_command_converts_each_preset(
    name: str, file: str, split: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / f"{name}.jsonl"
    args = ["convert", name, "--data-files", str(FIXTURES / file), "--split", split]
    assert main([*args, "-o", str(out)]) == 0
    source = pq.read_table(FIXTURES / file)
    assert_same_samples(list(read_jsonl(out)), expected_samples(name, source))


def test_the_command_reports_a_withheld_split_in_the_rejects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "swag.parquet"
    fixture = str(FIXTURES / "swag" / "regular-test.parquet")
    args = ["convert", "swag", "--data-files", fixture, "--split", "test", "--on-error", "skip"]
    assert main([*args, "-o", str(out)]) == 1  # every row rejected: no sample file
    printed = capsys.readouterr()
    assert "samples out:  0" in printed.out
    assert "every one of the 4 rows was rejected" in printed.err and not out.exists()
    rejects = (tmp_path / "swag.rejects.jsonl").read_text().splitlines()
    assert len(rejects) == 4 and all("withheld" in line for line in rejects)


# -- the rules of single presets, on rows changed from the fixtures --------------------------


def changed(file: str, row: int, **change: Any) -> pa.Table:
    source = pq.read_table(FIXTURES / file)
    rows = source.to_pylist()
    rows[row] = {**rows[row], **change}
    return pa.Table.from_pylist(rows, schema=source.schema)


@pytest.mark.parametrize("label", ["2", "2\n", " 2 ", "2\r\n"])
def test_social_i_qa_labels_ignore_whitespace_around_them(label: str) -> None:
    source = changed("social_i_qa/default-validation.parquet", 1, label=label)
    samples = list(SampleSequence(SOCIAL_I_QA.table(source)))
    assert samples[1].answer_index == 1
    assert samples[0].answer_index == 2  # the fixture's raw "3\n"
    assert samples[1].extra == {
        "situation": source.column("context")[1].as_py(),
        "question": source.column("question")[1].as_py(),
        "label": label,  # kept as it was, so the export gives it back exactly
    }


@pytest.mark.parametrize(
    ("label", "expected", "note"),
    [
        ("0", "'1'..'3'", ""),
        ("4", "'1'..'3'", ""),
        ("2 2", "'1'..'3'", ""),
        ("", "'1'..'3'", " \\(the labels of this split are withheld"),
    ],
)
def test_social_i_qa_other_labels_are_bad_rows(label: str, expected: str, note: str) -> None:
    source = changed("social_i_qa/default-validation.parquet", 1, label=label)
    with pytest.raises(
        ConversionError,
        match=rf"social_i_qa validation row 1, column 'label': expected {expected}, "
        rf"got {label!r}{note}",
    ):
        SOCIAL_I_QA.table(source, split="validation")


def test_arc_matches_digit_labels_in_any_order_never_by_position() -> None:
    choices = {"text": ["three", "one", "two"], "label": ["3", "1", "2"]}
    source = changed("arc/ARC-Challenge-test.parquet", 1, choices=choices, answerKey="1")
    sample = list(SampleSequence(ARC.table(source)))[1]
    assert (sample.choices, sample.answer_index) == (["three", "one", "two"], 1)


@pytest.mark.parametrize(
    ("choices", "key", "expected"),
    [
        (
            {"text": ["a", "b", "c", "d"], "label": ["A", "B", "C", "D"]},
            "E",
            r"one of the row's labels \['A', 'B', 'C', 'D'\], got 'E'",
        ),
        (
            {"text": ["a", "b", "c", "d"], "label": ["A", "B", "B", "D"]},
            "B",
            r"one of the row's labels, each label once, but 'B' is there 2 times in "
            r"\['A', 'B', 'B', 'D'\], got 'B'",
        ),
        (
            {"text": ["a", "b", "c", "d"], "label": ["A", "B", "C"]},
            "A",
            "one label per choice, but the row has 3 for 4 choices, got 'A'",
        ),
        (
            {"text": ["a", "b", "c", "d"], "label": ["A", "B", "C", "D"]},
            " B",
            r"one of the row's labels \['A', 'B', 'C', 'D'\], got ' B'",
        ),
    ],
)
def test_arc_answers_that_match_no_single_label_are_bad_rows(
    choices: dict[str, list[str]], key: str, expected: str
) -> None:
    source = changed("arc/ARC-Challenge-test.parquet", 1, choices=choices, answerKey=key)
    with pytest.raises(
        ConversionError, match=rf"arc test row 1, column 'answerKey': expected {expected}$"
    ):
        ARC.table(source, split="test")


@pytest.mark.parametrize(
    "labels", [[0, 0, 0, 0], [1, 0, 1, 0], [1, 0, 2, 0], [1, 0, 0], [1, 0, 0, 0, 0]]
)
def test_truthfulqa_needs_exactly_one_true_flag_per_choice(labels: list[int]) -> None:
    file = "truthfulqa/multiple_choice-validation.parquet"
    first = pq.read_table(FIXTURES / file).to_pylist()[0]
    mc1 = {"choices": first["mc1_targets"]["choices"], "labels": labels}
    source = changed(file, 2, mc1_targets=mc1)
    with pytest.raises(
        ConversionError,
        match=rf"truthfulqa validation row 2, column 'mc1_targets.labels': expected 4 flags, "
        rf"one per choice, each 0 or 1, exactly one of them 1, got {labels!r}".replace(
            "[", r"\["
        ).replace("]", r"\]"),
    ):
        TRUTHFULQA.table(source, split="validation")
    kept = TRUTHFULQA.convert(source, on_error="skip")
    assert [r.row for r in kept.rejects] == [2] and kept.table.num_rows == 4


@pytest.mark.parametrize(
    ("sentence", "expected", "note"),
    [
        ("_ is more likely to live in a colder climate.", "text before the '_'", "opens"),
        ("Ian thanked Dennis because _ helped _.", "a sentence with exactly one '_'", ""),
        ("Ian thanked Dennis because he helped.", "a sentence with exactly one '_'", ""),
    ],
)
def test_winogrande_sentences_that_cannot_be_split_are_bad_rows(
    sentence: str, expected: str, note: str
) -> None:
    source = changed("winogrande/winogrande_xl-validation.parquet", 1, sentence=sentence)
    with pytest.raises(
        ConversionError,
        match=rf"winogrande validation row 1, column 'sentence': expected {expected}, "
        rf"got .*{note}",
    ):
        WINOGRANDE.table(source, split="validation")


def test_winogrande_keeps_the_spacing_after_the_blank() -> None:
    sentence = "The trophy doesn't fit in the suitcase because the _, is too big."
    source = changed("winogrande/winogrande_xl-validation.parquet", 0, sentence=sentence)
    sample = SampleSequence(WINOGRANDE.table(source))[0]
    assert sample.context == "The trophy doesn't fit in the suitcase because the"
    assert sample.choices == ["Ian, is too big.", "Dennis, is too big."]
    assert sample.extra["sentence"] == sentence


def test_swag_extra_keeps_the_hyphenated_names_in_order() -> None:
    source = pq.read_table(FIXTURES / "swag" / "regular-validation.parquet")
    table = SWAG.table(source)
    assert [f.name for f in table.schema.field("extra").type] == [
        "video-id",
        "fold-ind",
        "sent1",
        "sent2",
        "gold-source",
    ]


def test_openbookqa_additional_keeps_its_float32_scores() -> None:
    source = pq.read_table(FIXTURES / "openbookqa" / "additional-train.parquet")
    extra = OPENBOOKQA.table(source).schema.field("extra").type
    assert extra.field("humanScore").type == pa.float32()
    assert extra.field("clarity").type == pa.float32()


def test_a_hellaswag_shard_with_an_all_null_column_keeps_the_published_type() -> None:
    from sdvm_hf.presets.hellaswag import HELLASWAG

    source = pq.read_table(FIXTURES / "hellaswag" / "validation.parquet")
    index = source.schema.get_field_index("split_type")
    shard = source.set_column(index, "split_type", pa.nulls(source.num_rows, pa.null()))
    extra = HELLASWAG.table(shard, split="validation").schema.field("extra").type
    assert extra.field("split_type").type == pa.string()
    assert extra == HELLASWAG.table(source, split="validation").schema.field("extra").type
