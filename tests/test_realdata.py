"""Integration checks on the real splits in ../shared/realdata, when a checkout has them.

The project's own tests never need these files; CI has them beside the clone.
"""

import csv as csv_module
import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sdvm_hf import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    load_hellaswag,
    load_mmlu,
)
from sdvm_hf.cli import main

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"
pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason="../shared/realdata is not beside this checkout"
)


def test_hellaswag_validation_from_the_hub_parquet_and_the_original_jsonl(tmp_path: Path) -> None:
    hub_file = REAL / "hellaswag" / "hub_validation.parquet"
    samples = load_hellaswag(data_files=hub_file)
    source = pq.read_table(hub_file)
    assert len(samples) == 10_042
    assert all(type(s) is MultipleChoiceCompletionSample for s in samples)
    assert [s.context for s in samples] == source.column("ctx").to_pylist()
    assert [str(s.answer_index) for s in samples] == source.column("label").to_pylist()
    plain = tmp_path / "rowanz_val.jsonl"
    with gzip.open(REAL / "hellaswag" / "rowanz_val.jsonl.gz", "rt", encoding="utf-8") as packed:
        plain.write_text(packed.read(), encoding="utf-8")
    assert list(load_hellaswag(data_files=plain)) == list(samples)
    assert list(load_hellaswag(data_files=REAL / "hellaswag" / "rowanz_val.jsonl.gz")) == list(
        samples
    )


def test_hellaswag_ind_is_not_unique_so_the_round_trip_carries_its_own_row_id() -> None:
    inds = pq.read_table(REAL / "hellaswag" / "hub_validation.parquet").column("ind").to_pylist()
    assert len(inds) - len(set(inds)) == 433


def test_mmlu_test_and_the_original_csv_files_agree() -> None:
    hub = load_mmlu(data_files=REAL / "mmlu" / "hub_all_test.parquet")
    assert len(hub) == 14_042
    assert all(
        type(s) is MultipleChoiceQuestionAnswerSample and list(s.extra) == ["subject"] for s in hub
    )
    assert len({s.extra["subject"] for s in hub}) == 57
    csv = load_mmlu(data_files=str(REAL / "mmlu" / "hendrycks_csv" / "test" / "*.csv"))
    assert [(s.context, s.choices, s.answer_index, s.extra) for s in csv] == [
        (s.context, s.choices, s.answer_index, s.extra) for s in hub
    ]


def test_mmlu_pro_gives_12027_samples_and_5_rejects() -> None:
    samples = load_mmlu(data_files=REAL / "mmlu_pro" / "test.parquet", on_error="skip")
    assert (len(samples), len(samples.rejects)) == (12_027, 5)
    assert {r.column for r in samples.rejects} == {"options"}
    assert all(len(r.original["options"]) == 1 for r in samples.rejects)


def test_convert_validate_inspect_on_the_mmlu_test_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mmlu.parquet"
    assert (
        main(
            [
                "convert",
                "mmlu",
                "--data-files",
                str(REAL / "mmlu" / "hub_all_test.parquet"),
                "-o",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["validate", str(out)]) == 0
    assert "14,042 valid samples" in capsys.readouterr().out
    assert main(["inspect", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["samples"] == 14_042 and summary["extra"] == {"subject": "string (57 distinct)"}


def csv_records(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as text:
        return sum(1 for _ in csv_module.reader(text))


HENDRYCKS = REAL / "mmlu" / "hendrycks_csv"
CSV_FILES = sorted(HENDRYCKS.glob("*/*.csv")) if REAL.is_dir() else []


@pytest.mark.parametrize("path", CSV_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_original_mmlu_csv_file_loads_alone_with_its_record_count(path: Path) -> None:
    samples = load_mmlu(data_files=path, split=path.parent.name)
    assert len(samples) == csv_records(path) and not samples.rejects
    subject = path.name.rsplit("_", 1)[0]
    assert {s.extra["subject"] for s in samples} == {subject}


@pytest.mark.parametrize("folder", ["dev", "val", "test"])
def test_every_original_mmlu_csv_folder_loads_whole(folder: str) -> None:
    files = sorted((HENDRYCKS / folder).glob("*.csv"))
    samples = load_mmlu(data_files=HENDRYCKS / folder, split=folder)
    assert len(files) == 57
    assert len(samples) == sum(map(csv_records, files)) and not samples.rejects
