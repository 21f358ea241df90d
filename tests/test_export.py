"""The way back: source -> convert -> export gives the source back, and a fix lands in layout."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_presets import ANSWERED

import sdvm_hf
from sdvm_hf import PRESETS, load, read_samples, write_jsonl, write_parquet
from sdvm_hf.cli import main
from sdvm_hf.exporter import ExportError, export
from sdvm_hf.record import read_record

FIXTURES = Path(__file__).parent / "fixtures"

# (preset, fixture, split): every fixture whose rows all convert, in its published layout
LAYOUTS = [
    ("hellaswag", "hellaswag/validation.parquet", "validation"),
    ("mmlu", "mmlu/cais_test.parquet", "test"),
    ("mmlu", "mmlu/auxiliary_train.parquet", "train"),
    ("mmlu", "mmlu/lukaemon.parquet", "test"),
    ("mmlu", "mmlu/global_mmlu.parquet", "test"),
    ("mmlu", "mmlu/mmlu_redux.parquet", "test"),
    *ANSWERED,  # every other preset's answered fixtures
]


def exported_table(folder: Path, config: str, split: str) -> pa.Table:
    (path,) = (folder / config).glob(f"{split}-*.parquet")
    return pq.read_table(path)


def convert(name: str, fixture: Path, split: str, out: Path, **options: Any) -> Path:
    samples = load(name, None, split, data_files=str(fixture), **options)
    write_parquet(samples, out)
    return out


@pytest.mark.parametrize(("name", "file", "split"), LAYOUTS, ids=lambda v: str(v))
def test_an_unchanged_file_exports_as_its_source_exactly(
    name: str, file: str, split: str, tmp_path: Path
) -> None:
    sample_file = convert(name, FIXTURES / file, split, tmp_path / "samples.parquet")
    record = read_record(sample_file)
    assert record is not None and record.dataset == name
    result = export(sample_file, tmp_path / "out")
    config = record.config or "default"
    got = exported_table(tmp_path / "out", config, split)
    source = pq.read_table(FIXTURES / file)
    assert got.column_names == source.column_names
    assert got.schema.remove_metadata() == source.schema.remove_metadata()
    assert got.to_pylist() == source.to_pylist()
    assert result.total.as_dict() == {
        "rows_in": source.num_rows,
        "kept": source.num_rows,
        "replaced": 0,
        "dropped": 0,
        "rejected": 0,
        "unpublished": 0,
        "refused": 0,
    }


@pytest.mark.parametrize(("name", "file", "split"), [*LAYOUTS[:2], *ANSWERED], ids=str)
def test_load_dataset_reads_the_folder_with_the_sources_features(
    name: str, file: str, split: str, tmp_path: Path
) -> None:
    sample_file = convert(name, FIXTURES / file, split, tmp_path / "samples.parquet")
    export(sample_file, tmp_path / "out")
    config = read_record(sample_file).config or "default"  # type: ignore[union-attr]
    ours = datasets.load_dataset(str(tmp_path / "out"), config, split=split)
    source = datasets.load_dataset("parquet", data_files=str(FIXTURES / file), split="train")
    assert ours.features == source.features
    assert ours.to_list() == source.to_list()


def test_hellaswags_original_jsonl_exports_in_the_hub_layout(tmp_path: Path) -> None:
    jsonl = FIXTURES / "hellaswag" / "validation.jsonl"
    sample_file = convert("hellaswag", jsonl, "validation", tmp_path / "s.parquet")
    export(sample_file, tmp_path / "out")
    got = exported_table(tmp_path / "out", "default", "validation")
    hub = pq.read_table(FIXTURES / "hellaswag" / "validation.parquet")
    assert got.schema.remove_metadata() == hub.schema.remove_metadata()  # label is a string
    assert got.to_pylist() == hub.to_pylist()


def test_mmlu_csv_files_export_as_cais_mmlu_with_a_config_per_subject(tmp_path: Path) -> None:
    folder = FIXTURES / "mmlu" / "hendrycks"
    samples = load("mmlu", split="test", data_files=str(folder), layout="hendrycks_csv")
    write_parquet(samples, tmp_path / "s.parquet")
    result = export(tmp_path / "s.parquet", tmp_path / "out")
    subjects = sorted({s.extra["subject"] for s in samples})
    assert sorted(result.configs) == sorted(["all", *subjects])
    everything = datasets.load_dataset(str(tmp_path / "out"), "all", split="test")
    assert list(everything.features) == ["question", "subject", "choices", "answer"]
    assert everything.features["answer"].names == ["A", "B", "C", "D"]
    assert [(r["question"], r["choices"], r["answer"]) for r in everything] == [
        (s.context, list(s.choices), s.answer_index) for s in samples
    ]
    one = datasets.load_dataset(str(tmp_path / "out"), subjects[0], split="test")
    assert set(one["subject"]) == {subjects[0]}


# -- fixes land where the harnesses read them --------------------------------------------------


def refined(
    source: Path,
    out: Path,
    change: dict[int, dict[str, Any]],
    verdicts: dict[int, bool] | None = None,
) -> Path:
    """A hand-made refined file: ``source`` with the changes, blocks and a record's stage."""
    samples = read_samples(source)
    rows = []
    for index, sample in enumerate(samples):
        fields = change.get(index, {})
        passed = (verdicts or {}).get(index, True)
        audit = {"ok": passed, "checks": {"grammatical": passed, "single_correct_answer": True}}
        fix = {"changes": list(fields), "flagged": False, "attempts": 1}
        rows.append(
            sample.model_copy(update={**fields, "audit": audit, "fix": fix, "reaudit": audit})
        )
    write_parquet(rows, out)
    record = read_record(source)
    assert record is not None
    table = pq.read_table(out)
    metadata = record.with_stage("refine", source, len(rows)).metadata()
    pq.write_table(table.replace_schema_metadata(metadata), out)
    return out


def test_a_fixed_hellaswag_context_reaches_ctx_a_and_ctx_b(tmp_path: Path) -> None:
    source = convert(
        "hellaswag", FIXTURES / "hellaswag/validation.parquet", "validation", tmp_path / "s.parquet"
    )
    first = read_samples(source)[0]
    a, b = first.extra["ctx_a"], first.extra["ctx_b"]
    fixed = refined(source, tmp_path / "r.parquet", {0: {"context": f"{a} {b} quickly"}})
    result = export(fixed, tmp_path / "out", annotate=True)
    row = exported_table(tmp_path / "out", "default", "validation").to_pylist()[0]
    assert row["ctx"] == f"{a} {b} quickly"
    assert (row["ctx_a"], row["ctx_b"]) == (a, f"{b} quickly")
    assert row["sdvm_status"] == "replaced" and row["original_ctx"] == first.context
    assert result.total.replaced == 1 and result.total.kept == result.total.rows_in - 1


def test_every_published_hellaswag_row_joins_ctx_from_ctx_a_and_ctx_b() -> None:
    for row in pq.read_table(FIXTURES / "hellaswag/validation.parquet").to_pylist():
        b = row["ctx_b"]
        assert row["ctx"] == (f"{row['ctx_a']} {b}" if b else row["ctx_a"])


def test_arc_choices_labels_and_answer_key_follow_a_fix(tmp_path: Path) -> None:
    fixture = FIXTURES / "arc/ARC-Challenge-test.parquet"
    source = convert("arc", fixture, "test", tmp_path / "s.parquet")
    sample = read_samples(source)[0]
    choices = [*sample.choices[:-1], "a better last choice"]
    answer = len(choices) - 1
    fixed = refined(
        source, tmp_path / "r.parquet", {0: {"choices": choices, "answer_index": answer}}
    )
    export(fixed, tmp_path / "out")
    row = exported_table(tmp_path / "out", "ARC-Challenge", "test").to_pylist()[0]
    original = pq.read_table(fixture).to_pylist()[0]
    assert row["choices"]["text"] == choices
    assert row["choices"]["label"] == original["choices"]["label"]
    assert row["answerKey"] == original["choices"]["label"][answer]


def test_winogrande_options_follow_and_an_inexpressible_fix_keeps_the_original(
    tmp_path: Path,
) -> None:
    fixture = FIXTURES / "winogrande/winogrande_xl-validation.parquet"
    source = convert("winogrande", fixture, "validation", tmp_path / "s.parquet")
    first, second = read_samples(source)[:2]
    tail = first.extra["sentence"].split("_", 1)[1]
    good = {"context": first.context + " surely", "answer_index": 1 - first.answer_index}
    bad = {"choices": [second.choices[0] + " indeed", second.choices[1]]}
    fixed = refined(source, tmp_path / "r.parquet", {0: good, 1: bad})
    export(fixed, tmp_path / "out")
    rows = exported_table(tmp_path / "out", "winogrande_xl", "validation").to_pylist()
    originals = pq.read_table(fixture).to_pylist()
    assert rows[0]["sentence"].startswith(first.context + " surely")
    assert rows[0]["sentence"].endswith("_" + tail)
    assert rows[0]["answer"] == str(2 - first.answer_index)
    assert (rows[0]["option1"], rows[0]["option2"]) == (
        originals[0]["option1"],
        originals[0]["option2"],
    )
    assert rows[1] == originals[1]
    lines = [json.loads(x) for x in (tmp_path / "out/export-record.jsonl").read_text().splitlines()]
    assert "rest of the sentence differently" in lines[1]["reason"]


def test_social_i_qa_splits_a_fixed_context_back_into_its_two_columns(tmp_path: Path) -> None:
    fixture = FIXTURES / "social_i_qa/default-validation.parquet"
    source = convert("social_i_qa", fixture, "validation", tmp_path / "s.parquet")
    sample = read_samples(source)[0]
    situation = sample.extra["situation"]
    fixed = refined(
        source, tmp_path / "r.parquet", {0: {"context": f"{situation} What did they do next?"}}
    )
    export(fixed, tmp_path / "out")
    row = exported_table(tmp_path / "out", "default", "validation").to_pylist()[0]
    assert (row["context"], row["question"]) == (situation, "What did they do next?")


def test_truthfulqa_mc1_labels_follow_a_moved_answer(tmp_path: Path) -> None:
    fixture = FIXTURES / "truthfulqa/multiple_choice-validation.parquet"
    source = convert("truthfulqa", fixture, "validation", tmp_path / "s.parquet")
    sample = read_samples(source)[0]
    choices = [sample.choices[1], sample.choices[0], *sample.choices[2:]]
    fixed = refined(source, tmp_path / "r.parquet", {0: {"choices": choices, "answer_index": 1}})
    export(fixed, tmp_path / "out")
    row = exported_table(tmp_path / "out", "multiple_choice", "validation").to_pylist()[0]
    original = pq.read_table(fixture).to_pylist()[0]
    assert row["mc1_targets"]["choices"] == choices
    assert row["mc1_targets"]["labels"] == [0, 1] + [0] * (len(choices) - 2)
    assert row["mc2_targets"] == original["mc2_targets"]  # the other task is left as it was


def test_mmlu_pro_answer_letter_follows_answer_index(tmp_path: Path) -> None:
    fixture = FIXTURES / "mmlu/mmlu_pro.parquet"
    samples = load("mmlu", split="test", data_files=str(fixture), on_error="skip")
    write_parquet(samples, tmp_path / "s.parquet")
    moved = (samples[0].answer_index + 1) % len(samples[0].choices)
    fixed = refined(tmp_path / "s.parquet", tmp_path / "r.parquet", {0: {"answer_index": moved}})
    export(fixed, tmp_path / "out")
    row = exported_table(tmp_path / "out", "default", "test").to_pylist()[0]  # TIGER-Lab's name
    assert (row["answer_index"], row["answer"]) == (moved, "ABCDEFGHIJ"[moved])


# -- policies ---------------------------------------------------------------------------------


def test_a_fix_with_more_choices_than_mmlus_labels_keeps_the_original(tmp_path: Path) -> None:
    fixture = FIXTURES / "mmlu/cais_test.parquet"
    source = convert("mmlu", fixture, "test", tmp_path / "s.parquet")
    third = read_samples(source)[2]
    five = {"choices": [*third.choices, "None of these"], "answer_index": 4}
    export(refined(source, tmp_path / "r.parquet", {2: five}), tmp_path / "out")
    assert (
        exported_table(tmp_path / "out", "all", "test").to_pylist()[2]
        == (pq.read_table(fixture).to_pylist()[2])
    )
    lines = [json.loads(x) for x in (tmp_path / "out/export-record.jsonl").read_text().splitlines()]
    assert lines[2]["status"] == "kept" and lines[2]["sdvm_status"] == "kept"
    assert "column 'answer' is a ClassLabel over A, B, C, D, got 4" in lines[2]["reason"]
    subject = datasets.load_dataset(str(tmp_path / "out"), "all", split="test")
    assert subject.features["answer"].int2str(subject[2]["answer"]) in "ABCD"


def test_a_hand_edited_row_outside_mmlus_labels_is_refused(tmp_path: Path) -> None:
    source = convert("mmlu", FIXTURES / "mmlu/cais_test.parquet", "test", tmp_path / "s.parquet")
    table = pq.read_table(source)
    rows = table.to_pylist()
    rows[5] = {**rows[5], "choices": [*rows[5]["choices"], "E"], "answer_index": 4}
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), tmp_path / "edited.parquet")
    with pytest.raises(
        ExportError,
        match=r"edited.parquet row 5: column 'answer' is a ClassLabel over A, B, C, D, got 4",
    ):
        export(tmp_path / "edited.parquet", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.fixture
def mmlu_refined(tmp_path: Path) -> tuple[Path, Path]:
    source = convert("mmlu", FIXTURES / "mmlu/cais_test.parquet", "test", tmp_path / "s.parquet")
    first = read_samples(source)[0]
    change = {0: {"context": first.context + " (fixed)"}}
    return source, refined(source, tmp_path / "r.parquet", change, verdicts={1: False, 2: False})


@pytest.mark.parametrize(
    ("policy", "rows", "counts"),
    [
        ("replace", 12, {"rows_in": 12, "kept": 11, "replaced": 1, "dropped": 0}),
        ("drop", 10, {"rows_in": 12, "kept": 9, "replaced": 1, "dropped": 2}),
        ("original", 12, {"rows_in": 12, "kept": 12, "replaced": 0, "dropped": 0}),
    ],
)
def test_each_policy_gives_its_rows_and_counts(
    policy: str,
    rows: int,
    counts: dict[str, int],
    mmlu_refined: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, fixed = mmlu_refined
    out = tmp_path / policy
    assert main(["export", str(fixed), "-o", str(out), "--policy", policy, "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)
    assert {k: totals[k] for k in counts} == counts
    kinds = ("kept", "replaced", "dropped", "rejected")
    assert sum(totals[k] for k in kinds) == totals["rows_in"]
    table = exported_table(out, "all", "test")
    assert table.num_rows == rows
    questions = table.column("question").to_pylist()
    original = pq.read_table(FIXTURES / "mmlu/cais_test.parquet").column("question").to_pylist()
    if policy == "original":
        assert questions == original
    else:
        assert questions[0] == original[0] + " (fixed)"
    if policy == "drop":
        assert original[1] not in questions and original[2] not in questions


HELLASWAG = FIXTURES / "hellaswag/validation.parquet"
CAIS_TEST = FIXTURES / "mmlu/cais_test.parquet"


def all_dropped(tmp_path: Path, split: str) -> tuple[Path, int]:
    """A refined HellaSwag file whose every row failed its audit, and its number of rows."""
    source = convert("hellaswag", HELLASWAG, split, tmp_path / f"{split}.parquet")
    rows = len(read_samples(source))
    verdicts = dict.fromkeys(range(rows), False)
    return refined(source, tmp_path / f"{split}-refined.parquet", {}, verdicts), rows


@pytest.mark.parametrize("changed_first", [True, False])
def test_an_original_column_has_its_columns_features(changed_first: bool, tmp_path: Path) -> None:
    """MMLU's ``original_answer`` is a ClassLabel like ``answer``, in both splits."""
    test = convert("mmlu", CAIS_TEST, "test", tmp_path / "t.parquet")
    validation = convert("mmlu", CAIS_TEST, "validation", tmp_path / "v.parquet")
    first = read_samples(test)[0]
    moved = {0: {"answer_index": (first.answer_index + 1) % 4}}
    fixed = refined(test, tmp_path / "tr.parquet", moved)
    unchanged = refined(validation, tmp_path / "vr.parquet", {})
    export(
        [fixed, unchanged] if changed_first else [unchanged, fixed], tmp_path / "out", annotate=True
    )
    published = datasets.load_dataset(str(tmp_path / "out"), "all")
    for split in ("test", "validation"):
        features = published[split].features
        assert (
            features["original_answer"]
            == features["answer"]
            == datasets.ClassLabel(names=["A", "B", "C", "D"])
        )
    assert published["test"]["original_answer"][:2] == [first.answer_index, None]
    astronomy = datasets.load_dataset(str(tmp_path / "out"), "astronomy")["test"]
    assert astronomy.features["original_answer"] == datasets.ClassLabel(names=["A", "B", "C", "D"])


def test_a_split_left_with_no_row_is_not_written_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = convert("hellaswag", HELLASWAG, "validation", tmp_path / "kept.parquet")
    gone, rows = all_dropped(tmp_path, "train")
    out = tmp_path / "out"
    assert main(["export", str(kept), str(gone), "-o", str(out), "--policy", "drop"]) == 0
    assert "not written, no row being left: default/train" in capsys.readouterr().out
    published = datasets.load_dataset(str(out))  # a split of no rows would fail it whole
    assert list(published) == ["validation"]
    assert published["validation"].num_rows == len(read_samples(kept))
    card = (out / "README.md").read_text()
    assert "Not written, no row being left: default/train" in card
    assert "train-*.parquet" not in card and not list(out.glob("default/train-*"))
    totals = json.loads((out / "sdvm_hf-export.json").read_text())
    assert totals["not_written"] == ["default/train"]
    assert totals["splits"]["default/train"] == {
        "rows_in": rows,
        "kept": 0,
        "replaced": 0,
        "dropped": rows,
        "rejected": 0,
        "unpublished": 0,
        "refused": 0,
    }


def test_an_export_with_no_row_left_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    gone, rows = all_dropped(tmp_path, "validation")
    with pytest.raises(
        ExportError,
        match=rf"^no row is left to publish in default/validation \(rows in: {rows}, dropped: "
        rf"{rows}\); datasets.load_dataset cannot read a split of no rows, so nothing was written$",
    ):
        export(gone, tmp_path / "out", policy="drop")
    empty = tmp_path / "empty.parquet"
    write_parquet(load("hellaswag", bundled=True)[:0], empty)
    with pytest.raises(
        ExportError, match=r"no row is left to publish in default/validation \(rows in: 0"
    ):
        export(empty, tmp_path / "out", dataset="hellaswag", split="validation")
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith((".out", "out"))]


def test_drop_if_narrows_the_checks_and_names_an_unknown_one(
    mmlu_refined: tuple[Path, Path], tmp_path: Path
) -> None:
    _, fixed = mmlu_refined
    kept = export(fixed, tmp_path / "a", policy="drop", drop_if=["checks.single_correct_answer"])
    assert kept.total.dropped == 0
    with pytest.raises(
        ExportError, match=r"no verdict of any input has the check 'checks.gramatical'; checks seen"
    ):
        export(fixed, tmp_path / "b", policy="drop", drop_if=["checks.gramatical"])
    with pytest.raises(ExportError, match=r"would do nothing with policy 'replace'"):
        export(fixed, tmp_path / "c", drop_if=["checks.single_correct_answer"])
    # with annotate it narrows what sdvm_status says the drop policy would do
    export(fixed, tmp_path / "d", annotate=True, drop_if="checks.single_correct_answer")
    status = exported_table(tmp_path / "d", "all", "test").column("sdvm_status").to_pylist()
    assert "dropped" not in status and status[0] == "replaced"


def test_drop_if_names_a_check_of_any_input_and_an_unaudited_split_keeps_its_rows(
    tmp_path: Path,
) -> None:
    plain = convert("hellaswag", HELLASWAG, "validation", tmp_path / "plain.parquet")
    train = convert("hellaswag", HELLASWAG, "train", tmp_path / "train.parquet")
    audited = refined(train, tmp_path / "audited.parquet", {}, verdicts={1: False, 2: False})
    done = export([plain, audited], tmp_path / "out", policy="drop", drop_if=["checks.grammatical"])
    assert done.splits["default/validation"].dropped == 0
    assert done.splits["default/train"].dropped == 2
    with pytest.raises(ExportError, match=r"checks seen: checks.grammatical, checks.single_"):
        export([plain, audited], tmp_path / "x", policy="drop", drop_if=["checks.typo"])
    with pytest.raises(ExportError, match=r"'checks.typo'; checks seen: \(none: no input is aud"):
        export(plain, tmp_path / "x", policy="drop", drop_if=["checks.typo"])


def test_annotate_adds_status_failing_checks_and_originals(
    mmlu_refined: tuple[Path, Path], tmp_path: Path
) -> None:
    _, fixed = mmlu_refined
    export(fixed, tmp_path / "out", annotate=True)
    table = exported_table(tmp_path / "out", "all", "test")
    assert table.column_names[:4] == ["question", "subject", "choices", "answer"]
    assert table.column_names[4:] == ["sdvm_status", "sdvm_failing", "original_question"]
    status = table.column("sdvm_status").to_pylist()
    assert status[:3] == ["replaced", "dropped", "dropped"] and set(status[3:]) == {"kept"}
    assert table.column("sdvm_failing").to_pylist()[1] == ["ok", "checks.grammatical"]
    # the value before the fix where the column changed, null where it did not
    original = pq.read_table(FIXTURES / "mmlu/cais_test.parquet").column("question").to_pylist()
    assert table.column("original_question").to_pylist() == [original[0]] + [None] * 11


@pytest.mark.parametrize("changed_first", [True, False])
def test_annotated_splits_of_a_config_share_their_columns(
    changed_first: bool, tmp_path: Path
) -> None:
    """Only one split has a fixed context: the other still gets ``original_ctx`` (nulls), so
    ``load_dataset`` reads both in one set of features whichever file comes first."""
    validation = convert("hellaswag", HELLASWAG, "validation", tmp_path / "v.parquet")
    train = convert("hellaswag", HELLASWAG, "train", tmp_path / "t.parquet")
    first = read_samples(validation)[0]
    fixed = refined(validation, tmp_path / "vr.parquet", {0: {"context": first.context + " now"}})
    unchanged = refined(train, tmp_path / "tr.parquet", {})
    inputs = [fixed, unchanged] if changed_first else [unchanged, fixed]
    export(inputs, tmp_path / "out", annotate=True)
    published = datasets.load_dataset(str(tmp_path / "out"))
    assert published["validation"].column_names == published["train"].column_names
    assert list(published["validation"]["original_ctx"]) == [first.context] + [None] * 11
    assert list(published["train"]["original_ctx"]) == [None] * published["train"].num_rows
    assert exported_table(tmp_path / "out", "default", "train").column_names == (
        exported_table(tmp_path / "out", "default", "validation").column_names
    )


def test_the_record_file_has_a_line_per_input_row(
    mmlu_refined: tuple[Path, Path], tmp_path: Path
) -> None:
    _, fixed = mmlu_refined
    export(fixed, tmp_path / "out", policy="drop")
    lines = [json.loads(x) for x in (tmp_path / "out/export-record.jsonl").read_text().splitlines()]
    assert [line["row"] for line in lines] == list(range(12))
    assert [line["status"] for line in lines[:3]] == ["replaced", "dropped", "dropped"]
    assert lines[0]["changed"] == ["question"]
    # not loaded as data
    assert datasets.load_dataset(str(tmp_path / "out"), "all", split="test").num_rows == 10


# -- bad input --------------------------------------------------------------------------------


def test_a_file_without_a_record_needs_its_dataset(tmp_path: Path) -> None:
    samples = load("hellaswag", bundled=True)
    write_jsonl(samples, tmp_path / "s.jsonl")
    with pytest.raises(ExportError, match=r"s.jsonl has no record .*\(--dataset NAME\)"):
        export(tmp_path / "s.jsonl", tmp_path / "out")
    export(tmp_path / "s.jsonl", tmp_path / "out", dataset="hellaswag", split="validation")
    got = exported_table(tmp_path / "out", "default", "validation")
    assert got.num_rows == len(samples)


def test_a_flag_that_disagrees_with_the_record_is_refused(tmp_path: Path) -> None:
    write_parquet(load("hellaswag", bundled=True), tmp_path / "s.parquet")
    with pytest.raises(ExportError, match=r"its record says dataset 'hellaswag', but 'mmlu'"):
        export(tmp_path / "s.parquet", tmp_path / "out", dataset="mmlu")
    with pytest.raises(ExportError, match=r"record says split 'validation', but 'test'"):
        export(tmp_path / "s.parquet", tmp_path / "out", split="test")


def test_mixed_datasets_and_two_files_for_one_split_are_refused(tmp_path: Path) -> None:
    write_parquet(load("hellaswag", bundled=True), tmp_path / "h.parquet")
    write_parquet(load("hellaswag", bundled=True), tmp_path / "h2.parquet")
    write_parquet(load("mmlu", bundled=True), tmp_path / "m.parquet")
    with pytest.raises(ExportError, match=r"different datasets \(hellaswag, mmlu\)"):
        export([tmp_path / "h.parquet", tmp_path / "m.parquet"], tmp_path / "out")
    with pytest.raises(ExportError, match=r"are both default/validation"):
        export([tmp_path / "h.parquet", tmp_path / "h2.parquet"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_existing_folder_is_refused_unless_an_earlier_export_with_overwrite(
    tmp_path: Path,
) -> None:
    write_parquet(load("hellaswag", bundled=True), tmp_path / "h.parquet")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ExportError, match=r"mine exists and is not an earlier export"):
        export(tmp_path / "h.parquet", tmp_path / "mine", overwrite=True)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    export(tmp_path / "h.parquet", tmp_path / "out")
    with pytest.raises(ExportError, match=r"holds an earlier export; replace it with --overwrite"):
        export(tmp_path / "h.parquet", tmp_path / "out")
    export(tmp_path / "h.parquet", tmp_path / "out", policy="original", overwrite=True)
    manifest = json.loads((tmp_path / "out" / "sdvm_hf-export.json").read_text())
    assert manifest["policy"] == "original"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_an_output_folder_holding_an_input_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    write_parquet(load("hellaswag", bundled=True), tmp_path / "out" / "h.parquet")
    with pytest.raises(ExportError, match=r"h.parquet is inside the output folder"):
        export(tmp_path / "out" / "h.parquet", tmp_path / "out", overwrite=True)


def test_an_error_mid_export_leaves_nothing_behind(tmp_path: Path) -> None:
    write_parquet(load("hellaswag", bundled=True), tmp_path / "h.parquet")
    with pytest.raises(ExportError, match=r"no sample file"):
        export([], tmp_path / "out")
    with pytest.raises(ExportError, match=r"unknown hellaswag layout 'cais'"):
        export(tmp_path / "h.parquet", tmp_path / "out", layout="cais")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.parquet"]


@pytest.mark.parametrize("subject", ["../../escaped", "", "two words", "a/b", ".hidden", "all"])
def test_a_subject_that_cannot_name_a_configuration_folder_is_refused(
    subject: str, tmp_path: Path
) -> None:
    table = pq.read_table(CAIS_TEST)
    subjects = table.column("subject").to_pylist()
    subjects[0] = subject
    table = table.set_column(table.column_names.index("subject"), "subject", pa.array(subjects))
    pq.write_table(table, tmp_path / "odd.parquet")
    samples = convert("mmlu", tmp_path / "odd.parquet", "test", tmp_path / "s.parquet")
    out = tmp_path / "deep" / "er" / "out"
    with pytest.raises(
        ExportError, match=rf"the subject {subject!r} cannot name a configuration of the export"
    ):
        export(samples, out)
    assert sorted(p.name for p in tmp_path.rglob("*") if "hf-cache" not in p.parts) == sorted(
        ["odd.parquet", "s.parquet", "deep", "er"]
    )


def test_two_files_giving_one_configurations_split_are_refused(tmp_path: Path) -> None:
    every = convert("mmlu", CAIS_TEST, "test", tmp_path / "all.parquet")  # its astronomy rows too
    astronomy = tmp_path / "astronomy.parquet"
    write_parquet(load("mmlu", "astronomy", "test", bundled=True), astronomy)
    with pytest.raises(
        ExportError, match=rf"^{every} and {astronomy} both give astronomy/test .*separately$"
    ):
        export([every, astronomy], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_subject_whose_rows_were_all_dropped_is_named(tmp_path: Path) -> None:
    source = convert("mmlu", CAIS_TEST, "test", tmp_path / "s.parquet")
    subjects = [sample.extra["subject"] for sample in read_samples(source)]
    failing = {row: subject != "astronomy" for row, subject in enumerate(subjects)}
    fixed = refined(source, tmp_path / "r.parquet", {}, verdicts=failing)
    result = export(fixed, tmp_path / "out", policy="drop")
    assert result.not_written == ["astronomy/test"]
    assert result.configs == {"all": ["test"], "virology": ["test"]}
    assert (
        "Not written, no row being left: astronomy/test" in (tmp_path / "out/README.md").read_text()
    )
    assert datasets.load_dataset(str(tmp_path / "out"), "virology")["test"].num_rows == 6
    with pytest.raises(
        ExportError, match=r"no row is left to publish in all/test, astronomy/test, "
    ):
        gone = refined(source, tmp_path / "g.parquet", {}, dict.fromkeys(range(12), False))
        export(gone, tmp_path / "none", policy="drop")


def test_annotate_refuses_a_layout_that_has_its_columns_already(tmp_path: Path) -> None:
    from sdvm_hf import MultipleChoiceMapping

    source = tmp_path / "quiz.jsonl"
    rows = [{"q": "Two and two?", "original_q": "2+2?", "a": "4", "b": "5", "label": 0}] * 2
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    mapping = MultipleChoiceMapping(dataset="quiz", context="q", choices=("a", "b"), answer="label")
    write_parquet(load(mapping, data_files=str(source)), tmp_path / "s.parquet")
    fixed = refined(tmp_path / "s.parquet", tmp_path / "r.parquet", {0: {"context": "2 + 2?"}})
    with pytest.raises(
        ExportError,
        match=r"r.parquet: --annotate would add the column 'original_q', which the quiz layout "
        r"already has; export without --annotate",
    ):
        export(fixed, tmp_path / "out", annotate=True)
    export(fixed, tmp_path / "out")
    assert exported_table(tmp_path / "out", "quiz", "train").column("q")[0].as_py() == "2 + 2?"


def test_the_generic_mapping_exports_its_columns_as_they_were_named(tmp_path: Path) -> None:
    from sdvm_hf import MultipleChoiceMapping

    source = tmp_path / "piqa.jsonl"
    rows = [
        {"goal": "Open a jar.", "sol1": "Twist the lid.", "sol2": "Eat it.", "label": 0, "id": 7},
        {"goal": "Dry hair.", "sol1": "Use a fan.", "sol2": "Use water.", "label": 0, "id": 8},
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    mapping = MultipleChoiceMapping(
        dataset="mine", context="goal", choices=("sol1", "sol2"), answer="label"
    )
    write_parquet(load(mapping, data_files=str(source)), tmp_path / "s.parquet")
    export(tmp_path / "s.parquet", tmp_path / "out")
    # a mapping of one's own names its configuration (a harness asks for it by that name)
    assert exported_table(tmp_path / "out", "mine", "train").to_pylist() == rows

    # a file written before the mapping's label was named `dataset` keeps it as `name`
    from sdvm_hf.record import read_record, with_record

    record = read_record(tmp_path / "s.parquet")
    assert record is not None and record.mapping is not None
    described = dict(record.mapping)
    described["name"] = described.pop("dataset")
    old = replace(record, mapping=described)
    table = pq.read_table(tmp_path / "s.parquet")
    pq.write_table(
        table.replace_schema_metadata(None).cast(with_record(table.schema, old)),
        tmp_path / "old.parquet",
    )
    assert read_record(tmp_path / "old.parquet").mapping["name"] == "mine"  # type: ignore[union-attr,index]
    export(tmp_path / "old.parquet", tmp_path / "out-old")
    assert exported_table(tmp_path / "out-old", "mine", "train").to_pylist() == rows


@pytest.mark.parametrize(("name", "file", "split"), LAYOUTS, ids=str)
def test_the_table_form_of_the_inverse_half_gives_what_the_row_form_gives(
    name: str, file: str, split: str
) -> None:
    from sdvm_hf.convert.inverse import published_table

    samples = load(name, None, split, data_files=str(FIXTURES / file))
    schema = pq.read_schema(FIXTURES / file).remove_metadata()
    mapping = PRESETS[name].mapping(schema.names)
    by_table = published_table(mapping, samples.table, schema)
    assert by_table is not None
    by_row = [mapping.encode(sample) for sample in samples]
    typed = pa.Table.from_pylist(by_row).select(schema.names).cast(schema)
    assert by_table.to_pylist() == typed.to_pylist()


@pytest.mark.parametrize(
    "value", ["../escaped", "/tmp/abs", "README.md", "a b", ".hidden", "x" * 201]
)
def test_a_name_that_is_not_plain_never_becomes_a_path(tmp_path: Path, value: str) -> None:
    samples = load("hellaswag", split="validation[:3]", bundled=True)
    write_jsonl(samples, tmp_path / "s.jsonl")  # no record: the names come from the options
    with pytest.raises(
        ExportError, match=rf"s\.jsonl: the configuration '{re.escape(value)}' cannot"
    ):
        export(tmp_path / "s.jsonl", tmp_path / "out", dataset="hellaswag", config=value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # nothing written anywhere


def test_the_manifest_names_its_inputs_by_file_name_only(tmp_path: Path) -> None:
    write_parquet(load("hellaswag", split="validation[:3]", bundled=True), tmp_path / "s.parquet")
    export(tmp_path / "s.parquet", tmp_path / "out")
    for file in (tmp_path / "out").rglob("*"):
        if file.is_file() and file.suffix in (".json", ".md", ".jsonl"):
            assert str(tmp_path) not in file.read_text(encoding="utf-8"), file.name


def test_a_forged_records_configuration_never_becomes_a_path(tmp_path: Path) -> None:
    from dataclasses import replace

    from sdvm_hf.record import read_record, with_record

    write_parquet(load("hellaswag", split="validation[:3]", bundled=True), tmp_path / "s.parquet")
    record = read_record(tmp_path / "s.parquet")
    assert record is not None
    table = pq.read_table(tmp_path / "s.parquet")
    forged = with_record(table.schema, replace(record, config="../../victim"))
    pq.write_table(table.replace_schema_metadata(forged.metadata), tmp_path / "f.parquet")
    with pytest.raises(
        ExportError, match=r"f\.parquet: the configuration '\.\./\.\./victim' cannot"
    ):
        export(tmp_path / "f.parquet", tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "victim").exists()


PRO = FIXTURES / "mmlu" / "mmlu_pro.parquet"


@pytest.mark.parametrize(("policy", "published"), [("replace", 8), ("original", 8), ("drop", 7)])
def test_rows_rejected_at_conversion_are_source_rows_accounted_for(
    tmp_path: Path, policy: str, published: int, capsys: pytest.CaptureFixture[str]
) -> None:
    source = pq.read_table(PRO)  # row 6 has one option: not a sample, rejected at conversion
    assert main(["convert", "mmlu", "--data-files", str(PRO), "--split", "test",
                 "--on-error", "skip", "-o", str(tmp_path / "pro.parquet")]) == 0  # fmt: skip
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(["export", str(tmp_path / "pro.parquet"), "-o", str(out), "--policy", policy]) == 0
    line = capsys.readouterr().out
    fate = "left out" if policy == "drop" else "published as they were"
    assert f"8 rows in; kept 7, replaced 0, dropped 0, rejected at conversion 1 ({fate})" in line
    table = pq.read_table(next(out.glob("default/test-*.parquet")))  # MMLU-Pro's configuration
    rows = source.to_pylist()
    want = rows if published == 8 else rows[:6] + rows[7:]
    assert table.num_rows == published and table.to_pylist() == want  # in place, as they were
    totals = json.loads((out / "sdvm_hf-export.json").read_text())
    assert (totals["rows_in"], totals["rejected"]) == (8, 1)
    assert "rejected at conversion 1" in (out / "README.md").read_text()


@pytest.mark.parametrize("slice_rows", [65_536, 6, 1])  # read whole, or a few rows at a time
@pytest.mark.parametrize("policy", ["replace", "original", "drop"])
def test_the_export_record_numbers_rows_as_published_and_has_a_line_for_each_rejected_row(
    tmp_path: Path, policy: str, slice_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sdvm_hf.exporter._rows.SLICE_ROWS", slice_rows)
    assert main(["convert", "mmlu", "--data-files", str(PRO), "--split", "test",
                 "--on-error", "skip", "-o", str(tmp_path / "pro.parquet")]) == 0  # fmt: skip
    export(tmp_path / "pro.parquet", tmp_path / "out", policy=policy)
    text = (tmp_path / "out" / "export-record.jsonl").read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["row"] for line in lines] == list(range(8))  # row 6 rejected, in its place
    rejected = lines[6]
    assert rejected["status"] == ("dropped" if policy == "drop" else "rejected")
    assert rejected["sdvm_status"] == "rejected"
    assert rejected["reason"].startswith("rejected at conversion: too_few_choices in 'options'")
    assert all(line["status"] == "kept" for line in lines if line["row"] != 6)
    if policy != "drop":  # each line's row is the published row
        table = pq.read_table(next((tmp_path / "out").glob("default/test-*.parquet")))
        assert table.num_rows == len(lines) and len(table["options"][6]) == 1


def test_rejected_rows_whose_file_is_gone_are_refused_not_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["convert", "mmlu", "--data-files", str(PRO), "--split", "test",
                 "--on-error", "skip", "-o", str(tmp_path / "pro.parquet")]) == 0  # fmt: skip
    (tmp_path / "pro.rejects.jsonl").unlink()
    with pytest.raises(ExportError, match=r"pro\.parquet: its conversion rejected 1 source rows"):
        export(tmp_path / "pro.parquet", tmp_path / "out")


@pytest.mark.parametrize(
    ("fixture", "hub", "licence", "config"),
    [
        ("mmlu/mmlu_pro.parquet", "TIGER-Lab/MMLU-Pro", "mit", "default"),
        ("mmlu/cais_test.parquet", "cais/mmlu", "mit", "all"),
        ("arc/ARC-Challenge-test.parquet", "allenai/ai2_arc", "cc-by-sa-4.0", "ARC-Challenge"),
    ],
)
def test_the_card_names_each_layouts_own_source_licence_and_configuration(
    tmp_path: Path, fixture: str, hub: str, licence: str, config: str
) -> None:
    name = fixture.split("/")[0]
    dataset = "mmlu" if name == "mmlu" else name
    samples = load(dataset, config if name == "arc" else None, "test",
                   data_files=str(FIXTURES / fixture), on_error="skip")  # fmt: skip
    write_parquet(samples, tmp_path / "s.parquet")
    export(tmp_path / "s.parquet", tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text()
    assert f"license: {licence}\n" in card and f"source_datasets:\n- {hub}\n" in card
    assert (tmp_path / "out" / config).is_dir()
    assert datasets.load_dataset(str(tmp_path / "out"), config, split="test").num_rows > 0


def test_a_hellaswag_fix_of_both_context_parts_keeps_the_original_and_says_why(
    tmp_path: Path,
) -> None:
    bundled = Path(sdvm_hf.__file__).parent / "data" / "hellaswag_validation.parquet"
    source = convert("hellaswag", bundled, "validation", tmp_path / "s.parquet")
    samples = read_samples(source)
    rows = pq.read_table(bundled).to_pylist()
    both = next(i for i, r in enumerate(rows) if r["ctx_b"])  # an ActivityNet row: two parts
    one = next(i for i, r in enumerate(rows) if not r["ctx_b"])  # a WikiHow row: ctx_a alone
    changes = {
        both: {"context": "Meanwhile, " + samples[both].context.upper()},
        one: {"context": "Meanwhile, " + samples[one].context},
    }
    fixed = refined(source, tmp_path / "r.parquet", changes)
    result = export(fixed, tmp_path / "out")
    out = exported_table(tmp_path / "out", "default", "validation").to_pylist()
    assert out[both] == rows[both]  # kept as it was: no split of the new text is exact
    assert out[one]["ctx_a"] == out[one]["ctx"] == changes[one]["context"]
    assert out[one]["ctx_b"] == ""
    lines = (tmp_path / "out" / "export-record.jsonl").read_text().splitlines()
    reason = json.loads(lines[both])["reason"]
    assert "changed both ctx_a's and ctx_b's parts" in reason
    assert result.total.refused == 1 and result.total.replaced == 1


@pytest.mark.parametrize("streamed", [False, True])
def test_a_shuffled_file_exports_its_letters_following_and_its_record_names_the_seed(
    tmp_path: Path, streamed: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    from sdvm_hf import shuffle_choices, stream

    source = pq.read_table(PRO).to_pylist()
    opened = (stream if streamed else load)("mmlu", None, "test", data_files=str(PRO),
                                             on_error="skip")  # fmt: skip
    write_parquet(shuffle_choices(opened, 11), tmp_path / "s.parquet")
    record = read_record(tmp_path / "s.parquet")
    assert record is not None and record.shuffle == {"seed": 11}
    export(tmp_path / "s.parquet", tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "choices of `default/test` (seed 11) were shuffled at conversion: they are " in card
    assert "published in the shuffled order" in card
    rows = exported_table(tmp_path / "out", "default", "test").to_pylist()
    assert all(r["answer"] == "ABCDEFGHIJ"[r["answer_index"]] for r in rows)  # letters follow
    by_id = {r["question_id"]: r for r in source}
    moved = 0
    for row in rows:
        then = by_id[row["question_id"]]
        assert sorted(row["options"]) == sorted(then["options"])
        assert row["options"][row["answer_index"]] == then["options"][then["answer_index"]]
        moved += row["options"] != then["options"]
    assert moved > 0
    export(tmp_path / "s.parquet", tmp_path / "orig", policy="original")
    originals = exported_table(tmp_path / "orig", "default", "test").to_pylist()
    assert originals == source[:6] + source[7:]  # the source's own order, row 6 never converted
    card = (tmp_path / "orig" / "README.md").read_text(encoding="utf-8")
    assert "(seed 11) were shuffled at conversion: they are published in the source's" in card
    unshuffled = (tmp_path / "u.parquet", tmp_path / "u-out")
    write_parquet(load("mmlu", None, "test", data_files=str(PRO), on_error="skip"), unshuffled[0])
    export(*unshuffled)
    assert "shuffled" not in (unshuffled[1] / "README.md").read_text(encoding="utf-8")


def test_one_export_at_a_time_into_a_folder_the_second_names_the_first(tmp_path: Path) -> None:
    from sdvm_hf._lock import output_lock

    write_parquet(load("hellaswag", split="validation[:3]", bundled=True), tmp_path / "s.parquet")
    with (
        output_lock(tmp_path / "out", ExportError),
        pytest.raises(
            ExportError,
            match=rf"^{tmp_path}/out is being written by another run \(PID {os.getpid()}",
        ),
    ):
        export(tmp_path / "s.parquet", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    export(tmp_path / "s.parquet", tmp_path / "out")  # the lock is let go: the next one runs
    assert not (tmp_path / "out.lock").exists()


def test_staging_folders_a_killed_export_left_are_cleaned_on_the_next_run(tmp_path: Path) -> None:
    write_parquet(load("hellaswag", split="validation[:3]", bundled=True), tmp_path / "s.parquet")
    left = tmp_path / ".out.sdvm_hf-staging-x1y2"
    (left / "default").mkdir(parents=True)
    other = tmp_path / ".out.v2.sdvm_hf-staging-z"  # another folder's (out.v2): not ours
    other.mkdir()
    export(tmp_path / "s.parquet", tmp_path / "out")
    assert not left.exists() and other.exists()
    assert not [p for p in tmp_path.iterdir() if "sdvm_hf-staging" in p.name and p != other]


def test_overwrite_keeps_git_and_what_the_export_did_not_write(tmp_path: Path) -> None:
    write_parquet(load("hellaswag", split="validation[:3]", bundled=True), tmp_path / "s.parquet")
    out = tmp_path / "out"
    export(tmp_path / "s.parquet", out)
    (out / ".git" / "objects").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (out / ".gitattributes").write_text("*.parquet filter=lfs\n")
    (out / "NOTES.md").write_text("my notes\n")
    (out / "default" / "notes.txt").write_text("beside the data\n")
    export(tmp_path / "s.parquet", out, overwrite=True)
    assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (out / ".gitattributes").is_file() and (out / "NOTES.md").read_text() == "my notes\n"
    assert (out / "default" / "notes.txt").is_file()
    manifest = json.loads((out / "sdvm_hf-export.json").read_text())
    assert "NOTES.md" not in manifest["files"] and "README.md" in manifest["files"]
    # a file of the user's at a path the export writes is refused, and nothing is lost
    manifest["files"].remove("README.md")
    (out / "sdvm_hf-export.json").write_text(json.dumps(manifest))
    with pytest.raises(ExportError, match=r"would replace README\.md, which the earlier export"):
        export(tmp_path / "s.parquet", out, overwrite=True)
    assert (out / "NOTES.md").is_file() and (out / ".git" / "HEAD").is_file()
    assert (out / "README.md").is_file()


def test_layout_into_a_layout_whose_columns_the_rows_lack_is_refused(tmp_path: Path) -> None:
    source = convert("mmlu", CAIS_TEST, "test", tmp_path / "s.parquet")
    with pytest.raises(
        ExportError, match=r"cannot be published in the mmlu_pro layout: they lack question_id"
    ):
        export(source, tmp_path / "out", layout="mmlu_pro")
    assert not (tmp_path / "out").exists()
    # every column they lack, and what they have: the layout's, not only its signature's
    with pytest.raises(ExportError) as raised:
        export(source, tmp_path / "out", layout="mmlu_pro")
    said = str(raised.value)
    assert "they lack question_id, answer, cot_content, category, src (its columns are " in said
    assert "the rows, read in the cais layout, have subject, question, options, answer_index" in (
        said
    )


def test_an_original_made_again_since_the_stages_is_refused_never_published(
    tmp_path: Path,
) -> None:
    from sdvm_hf.record import content_hash

    source = convert("hellaswag", HELLASWAG, "validation", tmp_path / "s.parquet")
    samples = read_samples(source)
    fixed = [s.model_copy(update={"context": s.context + " now"}) if i == 0 else s
             for i, s in enumerate(samples)]  # fmt: skip
    write_parquet(fixed, tmp_path / "r.parquet")
    record = read_record(source)
    assert record is not None
    staged = record.with_stage("fix", source, len(samples), input_hash=content_hash(samples.table))
    table = pq.read_table(tmp_path / "r.parquet")
    pq.write_table(table.replace_schema_metadata(staged.metadata()), tmp_path / "r.parquet")
    export(tmp_path / "r.parquet", tmp_path / "ok", policy="original")  # the original matches
    convert("hellaswag", HELLASWAG, "validation[2:]", source)  # made again at the same path
    for options in ({"policy": "original"}, {"annotate": True}):
        with pytest.raises(
            ExportError, match=r"s\.parquet is not the file the stages of .*r\.parquet"
        ):
            export(tmp_path / "r.parquet", tmp_path / "out", **options)
    result = export(tmp_path / "r.parquet", tmp_path / "out")  # replace: the fixed rows as they are
    assert result.total.rows_in == len(samples)
    assert result.notes and "the rows its stages changed are not known" in result.notes[0]
    assert "Note: default/validation: the rows its stages changed" in (
        (tmp_path / "out" / "README.md").read_text()
    )


def test_a_record_without_a_content_hash_is_trusted_and_said_to_be(tmp_path: Path) -> None:
    from sdvm_hf.record import content_hash

    source = convert("hellaswag", HELLASWAG, "validation", tmp_path / "s.parquet")
    older = refined(source, tmp_path / "r.parquet", {0: {"context": "A new stem"}})
    assert read_record(older).stages[1].input_hash is None  # type: ignore[union-attr]
    for policy in ("original", "replace"):
        result = export(older, tmp_path / policy, policy=policy)
        said = "default/validation: its record (from an older sdvm_hf) holds no content hash"
        assert [note for note in result.notes if said in note]
        assert f"Note: {said}" in (tmp_path / policy / "README.md").read_text(encoding="utf-8")
    record = read_record(older)
    assert record is not None
    checked = replace(
        record, stages=(record.stages[0], replace(record.stages[1], input_hash=content_hash(
            read_samples(source).table)))
    )  # fmt: skip
    table = pq.read_table(older)
    pq.write_table(table.replace_schema_metadata(checked.metadata()), tmp_path / "c.parquet")
    assert export(tmp_path / "c.parquet", tmp_path / "checked", policy="original").notes == []


def hand_edited(path: Path, row: int, column: str, value: Any) -> Path:
    """The sample file with one cell changed by hand (pyarrow), its record kept."""
    table = pq.read_table(path)
    values = table.column(column).to_pylist()
    values[row] = value
    index = table.schema.get_field_index(column)
    table = table.set_column(
        index, table.schema.field(column), pa.array(values, table.column(column).type)
    )
    pq.write_table(table, path)
    return path


def test_rows_edited_by_hand_in_a_convert_output_go_through_the_follow_rule(
    tmp_path: Path,
) -> None:
    source = convert("hellaswag", HELLASWAG, "validation", tmp_path / "h.parquet")
    first = read_samples(source)[0]
    hand_edited(source, 0, "context", first.context + " then")
    export(source, tmp_path / "h-out")
    row = exported_table(tmp_path / "h-out", "default", "validation").to_pylist()[0]
    assert row["ctx"] == first.context + " then"
    assert row["ctx"] == f"{row['ctx_a']} {row['ctx_b']}"  # what lm-eval reads follows
    pro = tmp_path / "pro.parquet"
    write_parquet(load("mmlu", split="test", data_files=PRO, on_error="skip"), pro)
    moved = (read_samples(pro)[0].answer_index + 1) % 4
    hand_edited(pro, 0, "answer_index", moved)
    export(pro, tmp_path / "p-out")
    row = exported_table(tmp_path / "p-out", "default", "test").to_pylist()[0]
    assert (row["answer_index"], row["answer"]) == (moved, "ABCDEFGHIJ"[moved])


def test_a_rejects_file_edited_or_with_a_row_twice_is_refused_never_published(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["convert", "mmlu", "--data-files", str(PRO), "--split", "test", "--on-error", "skip"]
    assert main([*argv, "-o", str(tmp_path / "pro.parquet")]) == 0
    rejects = tmp_path / "pro.rejects.jsonl"
    line = json.loads(rejects.read_text())
    assert read_record(tmp_path / "pro.parquet").rejects_sha256  # type: ignore[union-attr]
    rejects.write_text(
        json.dumps({**line, "original": {**line["original"], "question": "EDITED"}}) + "\n"
    )
    with pytest.raises(
        ExportError, match=r"pro\.rejects\.jsonl is not the rejects file the conversion"
    ):
        export(tmp_path / "pro.parquet", tmp_path / "out", policy="original")
    assert not (tmp_path / "out").exists()


def test_the_card_of_a_mixed_export_names_every_source(tmp_path: Path) -> None:
    write_parquet(
        load("mmlu", split="test", data_files=PRO, on_error="skip"), tmp_path / "p.parquet"
    )
    write_parquet(load("mmlu", "astronomy", "test", data_files=CAIS_TEST), tmp_path / "c.parquet")
    export([tmp_path / "p.parquet", tmp_path / "c.parquet"], tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "source_datasets:\n- TIGER-Lab/MMLU-Pro\n- cais/mmlu\n" in card
    assert "license: mit\n" in card and "`mmlu_pro` and `cais` layout" in card
