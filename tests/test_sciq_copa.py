"""SciQ and COPA: the rules of their modules, on their real fixture rows and rows changed from them.

What every preset must do (convert exactly, the three forms, the round trip, identity export)
is checked for these two in test_presets.py and test_export.py, parametrized over all presets;
here are the rules of these two alone: SciQ's derived answer and its columns following a fix,
COPA's label and its original JSON Lines layout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_export import convert, exported_table, refined

from sdvm_hf import ConversionError, SampleSequence, export, load, read_samples, write_parquet
from sdvm_hf.exporter import ExportError
from sdvm_hf.presets.copa import COPA
from sdvm_hf.presets.sciq import SCIQ

FIXTURES = Path(__file__).parent / "fixtures"
SCIQ_FILE = FIXTURES / "sciq" / "default-validation.parquet"
COPA_FILE = FIXTURES / "copa" / "copa-validation.parquet"


def changed(file: Path, row: int, **change: Any) -> pa.Table:
    source = pq.read_table(file)
    rows = source.to_pylist()
    rows[row] = {**rows[row], **change}
    return pa.Table.from_pylist(rows, schema=source.schema)


def records(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "export-record.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


# -- SciQ -----------------------------------------------------------------------------------


def test_sciq_choices_are_the_distractors_then_the_correct_answer() -> None:
    source = pq.read_table(SCIQ_FILE).to_pylist()
    samples = list(SampleSequence(SCIQ.table(pq.read_table(SCIQ_FILE))))
    for row, sample in zip(source, samples, strict=True):
        assert sample.choices[:3] == [row[f"distractor{i}"] for i in (1, 2, 3)]
        assert sample.choices[sample.answer_index] == row["correct_answer"]
    assert {s.answer_index for s in samples} == {3}
    assert any(len(set(s.choices[:3])) == 2 for s in samples)  # row 479: 'white' twice


def test_sciq_a_distractor_spelled_like_the_answer_makes_the_first_equal_choice_the_answer(
    tmp_path: Path,
) -> None:
    source = changed(SCIQ_FILE, 0, distractor2="darwin")
    sample = SampleSequence(SCIQ.table(source, split="validation"))[0]
    assert (sample.choices, sample.answer_index) == (["Linnaeus", "darwin", "Scopes", "darwin"], 1)
    pq.write_table(source, tmp_path / "dup.parquet")
    sample_file = convert("sciq", tmp_path / "dup.parquet", "validation", tmp_path / "s.parquet")
    export(sample_file, tmp_path / "out")
    assert exported_table(tmp_path / "out", "default", "validation").to_pylist() == (
        source.to_pylist()
    )


@pytest.mark.parametrize(
    ("change", "column", "expected"),
    [
        ({"distractor2": None}, "distractor1..correct_answer", "every choice to be a string"),
        ({"question": ""}, "question", "a non-empty string"),
    ],
)
def test_sciq_bad_rows_are_named(change: dict[str, Any], column: str, expected: str) -> None:
    source = changed(SCIQ_FILE, 2, **change)
    with pytest.raises(
        ConversionError,
        match=rf"sciq validation row 2, column '{column}': expected {expected}, got",
    ):
        SCIQ.table(source, split="validation")
    kept = SCIQ.convert(source, split="validation", on_error="skip")
    assert [r.row for r in kept.rejects] == [2] and kept.table.num_rows == 4


def test_sciq_columns_follow_fixed_texts(tmp_path: Path) -> None:
    source = convert("sciq", SCIQ_FILE, "validation", tmp_path / "s.parquet")
    sample = read_samples(source)[1]
    choices = [sample.choices[0], "lipids", sample.choices[2], "nucleotide bases"]
    fixed = refined(source, tmp_path / "r.parquet", {1: {"choices": choices}})
    export(fixed, tmp_path / "out")
    rows = exported_table(tmp_path / "out", "default", "validation").to_pylist()
    original = pq.read_table(SCIQ_FILE).to_pylist()
    assert rows[1] == {**original[1], "distractor2": "lipids", "correct_answer": "nucleotide bases"}
    assert rows[:1] + rows[2:] == original[:1] + original[2:]


def test_sciq_a_moved_answer_swaps_the_correct_answer_with_the_distractor_it_was(
    tmp_path: Path,
) -> None:
    source = convert("sciq", SCIQ_FILE, "validation", tmp_path / "s.parquet")
    sample = read_samples(source)[0]  # Linnaeus, shaw, Scopes, darwin (the answer)
    fixed = refined(source, tmp_path / "r.parquet", {0: {"answer_index": 1}})
    result = export(fixed, tmp_path / "out")
    row = exported_table(tmp_path / "out", "default", "validation").to_pylist()[0]
    assert row["correct_answer"] == sample.choices[1] == "shaw"
    assert (row["distractor1"], row["distractor2"], row["distractor3"]) == (
        "Linnaeus",
        "darwin",
        "Scopes",
    )
    assert result.total.replaced == 1
    assert records(tmp_path / "out")[0]["reason"] == ""
    again = load("sciq", None, "validation", data_files=str(tmp_path / "out/default"))[0]
    assert again.choices[again.answer_index] == "shaw"
    assert sorted(again.choices) == sorted(sample.choices)


def test_sciq_a_fix_with_another_number_of_choices_is_refused(tmp_path: Path) -> None:
    source = convert("sciq", SCIQ_FILE, "validation", tmp_path / "s.parquet")
    sample = read_samples(source)[0]
    fixed = refined(source, tmp_path / "r.parquet", {0: {"choices": [*sample.choices, "wallace"]}})
    with pytest.raises(
        ExportError, match=r"the layout has 4 choice columns .* the sample 5 choices"
    ):
        export(fixed, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- COPA -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "note"),
    [(2, ""), (-1, r" \(the labels of this split are withheld")],
)
def test_copa_labels_outside_its_two_choices_are_bad_rows(label: int, note: str) -> None:
    source = changed(COPA_FILE, 1, label=label)
    with pytest.raises(
        ConversionError,
        match=rf"copa validation row 1, column 'label': expected an index 0..1, got {label}{note}",
    ):
        COPA.table(source, split="validation")


def test_copa_label_and_choices_follow_a_fix(tmp_path: Path) -> None:
    source = convert("copa", COPA_FILE, "validation", tmp_path / "s.parquet")
    sample = read_samples(source)[2]  # the woman retired: choice1 is the answer
    choices = [sample.choices[0], "She spent her days gardening."]
    fixed = refined(source, tmp_path / "r.parquet", {2: {"choices": choices, "answer_index": 1}})
    export(fixed, tmp_path / "out")
    rows = exported_table(tmp_path / "out", "copa", "validation").to_pylist()
    original = pq.read_table(COPA_FILE).to_pylist()
    assert rows[2] == {**original[2], "choice2": "She spent her days gardening.", "label": 1}
    assert rows[:2] + rows[3:] == original[:2] + original[3:]


def test_copas_original_jsonl_loads_and_exports_in_the_hub_layout(tmp_path: Path) -> None:
    hub = pq.read_table(COPA_FILE)
    order = ["premise", "choice1", "choice2", "question", "label", "idx"]  # SuperGLUE's val.jsonl
    jsonl = tmp_path / "val.jsonl"
    jsonl.write_text("".join(json.dumps({k: r[k] for k in order}) + "\n" for r in hub.to_pylist()))
    samples = load("copa", None, "validation", data_files=str(jsonl))
    assert samples.table.schema.field("extra").type == pa.struct(
        [("question", pa.string()), ("idx", pa.int32())]
    )
    write_parquet(samples, tmp_path / "s.parquet")
    export(tmp_path / "s.parquet", tmp_path / "out")
    got = exported_table(tmp_path / "out", "copa", "validation")
    assert got.schema.remove_metadata() == hub.schema.remove_metadata()
    assert got.to_pylist() == hub.to_pylist()
    card = (tmp_path / "out" / "README.md").read_text()
    assert "class_label" in card and "choice2" in card
