"""Issue #27, point 9: the messages of the last bullet, each fixed (the service's own are in
tests/test_service.py and tests/test_service_hostile.py: a redirect's target, a key added)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sdvm_hf import load_hellaswag, load_mmlu, write_parquet
from sdvm_hf.cli import main
from sdvm_hf.diff import diff_samples
from sdvm_hf.record import Record
from sdvm_hf.report import build_report, report_html


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.parquet"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["audit", "{fifo}", "-o", "{out}"],
        ["refine", "{fifo}", "-o", "{out}", "--dry-run"],
        ["diff", "{fifo}", "{fifo}"],
        ["export", "{fifo}", "-o", "{out}"],
    ],
    ids=lambda c: c[0],
)
def test_a_fifo_is_named_as_one_not_as_a_missing_file(
    fifo: Path, tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = [a.format(fifo=fifo, out=tmp_path / "o.parquet") for a in command]
    assert main(args) == 2  # at once: opening a FIFO would wait for a writer
    assert f"{fifo} is a FIFO (named pipe), not a regular file" in capsys.readouterr().err


def test_diff_of_two_unrelated_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_parquet(load_mmlu(bundled=True)[:20], tmp_path / "a.parquet")
    write_parquet(load_mmlu(bundled=True)[100:120], tmp_path / "b.parquet")
    assert main(["diff", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]) == 2
    said = capsys.readouterr().err
    assert "are not one file before and after a stage: row 0's extra differs" in said


def test_an_answer_whose_text_alone_changed_is_not_said_to_move(tmp_path: Path) -> None:
    before = load_hellaswag(bundled=True)[0]
    choices = list(before.choices)
    choices[before.answer_index] += " (fixed)"
    after = before.model_copy(update={"choices": choices, "fix": {"changes": ["answer"]}})
    found = diff_samples(before, after)
    assert found.answer_moved and not found.answer_position_moved
    assert found.lines()[-1].endswith("(the same position, its text changed)")
    source, out = tmp_path / "before.parquet", tmp_path / "after.parquet"
    write_parquet([before], source)
    write_parquet([after], out)
    record = (Record.read(out) or Record()).with_stage("fix", source, 1)
    table = pq.read_table(out)
    pq.write_table(table.replace_schema_metadata(record.metadata()), out)
    html = report_html(build_report(out, examples=5))
    letter = "ABCD"[before.answer_index]
    assert f"The answer stays {letter}; its text changed" in html
    assert "The answer moved" not in html


def test_a_parquet_source_with_a_duplicate_column_name_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa

    names = ["question", "question", "choices", "answer"]
    arrays = [pa.array(["a?"]), pa.array(["b"]), pa.array([["x", "y"]]), pa.array([0])]
    pq.write_table(pa.Table.from_arrays(arrays, names=names), tmp_path / "dup.parquet")
    args = ["convert", "mmlu", "--data-files", str(tmp_path / "dup.parquet")]
    assert main([*args, "-o", str(tmp_path / "o.parquet")]) == 2
    assert "the source has more than one column named 'question'" in capsys.readouterr().err


def test_the_report_does_not_trust_the_records_rejects(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "mmlu.parquet"
    write_parquet(load_mmlu(bundled=True)[:10], out)
    secret = tmp_path / "secret.txt"
    secret.write_text('{"row": 1, "reason": "not a reject"}\n', encoding="utf-8")
    table = pq.read_table(out)

    def forge(rejects: dict[str, object]) -> None:
        record = Record(dataset="mmlu", rejects=rejects).converted(10, 0, None)
        record = Record(dataset="mmlu", stages=record.stages, rejects=rejects)
        pq.write_table(table.replace_schema_metadata(record.metadata()), out)

    forge({"path": str(secret), "count": 999})
    report = build_report(out)
    assert "not a JSON Lines file: not read" in caplog.text
    assert report.rejects_from is None and report.summary.rejects == {}
    beside = tmp_path / "mmlu.rejects.jsonl"
    beside.write_text("", encoding="utf-8")
    forge({"path": str(beside), "count": 999})
    caplog.clear()
    report = build_report(out)
    assert "its record counts 999 rejects" in caplog.text and "holds 0" in caplog.text
    assert report.summary.rows_in == 10


def test_a_json_lines_answer_change_that_cannot_be_typed_names_file_column_and_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    source = Path(__file__).parent / "fixtures" / "social_i_qa" / "default-validation.parquet"
    lines = tmp_path / "siqa.jsonl"
    args = ["convert", "social_i_qa", "--data-files", str(source), "-o", str(lines)]
    assert main(args) == 0
    rows = [json.loads(line) for line in lines.read_text(encoding="utf-8").splitlines()]
    rows[0]["answer_index"] = (rows[0]["answer_index"] + 1) % len(rows[0]["choices"])
    lines.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    capsys.readouterr()
    export = ["export", str(lines), "-o", str(tmp_path / "out"), "--dataset", "social_i_qa"]
    assert main(export) == 2
    said = capsys.readouterr().err
    assert f"sdvm-hf export: {lines}: column 'label' would hold" in said
    assert "(exported rows 0 and 1)" in said and "Could not convert" not in said


def test_a_subject_named_like_an_export_file_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa

    source = tmp_path / "mmlu.parquet"
    write_parquet(load_mmlu(bundled=True), source)
    table = pq.read_table(source)
    extras = table.column("extra").to_pylist()
    for extra in extras[:5]:
        extra["subject"] = "README.md"
    column = pa.array(extras, table.schema.field("extra").type)
    edited = table.set_column(table.schema.get_field_index("extra"), "extra", column)
    pq.write_table(edited.replace_schema_metadata(table.schema.metadata), source)
    assert main(["export", str(source), "-o", str(tmp_path / "out")]) == 2
    said = capsys.readouterr().err
    assert "the subject 'README.md' cannot name a configuration of the export" in said
    assert ".tmp" not in said and "Is a directory" not in said
