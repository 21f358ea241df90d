"""The record: one typed form, read and written in pairs, asked by name, refused when forged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from sdvm_hf import export, load, write_parquet
from sdvm_hf.cli import main
from sdvm_hf.exporter import ExportError
from sdvm_hf.record import RECORD_FORMAT, RECORD_KEY, Record, RecordError, Stage, read_record


@pytest.fixture
def converted(tmp_path: Path) -> Path:
    path = tmp_path / "hellaswag.parquet"
    write_parquet(load("hellaswag", split="validation[:5]", bundled=True), path)
    return path


def forged(source: Path, out: Path, record: Any) -> Path:
    table = pq.read_table(source)
    pq.write_table(table.replace_schema_metadata({RECORD_KEY: json.dumps(record)}), out)
    return out


def test_a_convert_output_keeps_a_record_that_reads_back_equal(converted: Path) -> None:
    record = read_record(converted)
    assert record is not None
    assert (record.dataset, record.layout, record.split) == (
        "hellaswag",
        "hellaswag",
        "validation[:5]",
    )
    assert record.stages == (Stage("convert", 5),)
    assert record.rejects == {"path": None, "count": 0}
    assert Record.from_json(json.loads(record.metadata()[RECORD_KEY])) == record
    assert record.to_json()["format"] == RECORD_FORMAT
    assert record.published_features("hellaswag") is not None
    assert record.published_features("another layout") is None
    assert record.provenance().startswith("`hellaswag_validation.parquet` (sha256 `")


def test_the_two_originals_have_two_names(converted: Path, tmp_path: Path) -> None:
    record = read_record(converted)
    assert record is not None
    audited = forged(
        converted, tmp_path / "a.parquet", record.with_stage("audit", converted, 5).to_json()
    )
    audited_record = read_record(audited)
    assert audited_record is not None
    fixed_record = audited_record.with_stage("fix", audited, 5)
    fixed = forged(converted, tmp_path / "f.parquet", fixed_record.to_json())
    assert fixed_record.stage_input(fixed) == audited  # the stage's input
    assert fixed_record.convert_output(fixed) == converted  # where the stages started
    assert fixed_record.steps() == ["convert", "audit", "fix"]
    assert record.convert_output(converted) == converted
    audited.unlink()
    assert fixed_record.convert_output(fixed) is None  # the trail is broken: nothing to trust


def test_a_record_from_a_newer_sdvm_hf_is_refused(converted: Path, tmp_path: Path) -> None:
    record = read_record(converted)
    assert record is not None
    newer = forged(converted, tmp_path / "n.parquet", {**record.to_json(), "format": 99})
    with pytest.raises(RecordError, match=r"n\.parquet: its record is format 99, newer than"):
        read_record(newer)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"stages": [7]}, r"a stage is not an object with a 'stage' name: 7"),
        ({"stages": "convert"}, r"its record's stages are not a list"),
        ({"config": ["x"]}, r"its record's config is not text"),
        ({"mapping": "mine"}, r"its record's mapping is not an object"),
        ({"stages": [{"stage": "fix", "input": {"path": 3}}]}, r"stage 'fix' has a bad input"),
    ],
)
def test_a_forged_record_is_one_line_naming_the_file(
    converted: Path,
    tmp_path: Path,
    change: dict[str, Any],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = read_record(converted)
    assert record is not None
    bad = forged(converted, tmp_path / "bad.parquet", {**record.to_json(), **change})
    with pytest.raises(ExportError, match=message):
        export(bad, tmp_path / "out")
    assert main(["export", str(bad), "-o", str(tmp_path / "out2")]) == 2
    err = capsys.readouterr().err
    assert "bad.parquet" in err and "Traceback" not in err


def test_a_record_that_is_not_json_is_named(converted: Path, tmp_path: Path) -> None:
    table = pq.read_table(converted)
    bad = tmp_path / "bad.parquet"
    pq.write_table(table.replace_schema_metadata({RECORD_KEY: b"{not json"}), bad)
    with pytest.raises(
        RecordError, match=r"bad\.parquet: its sdvm_hf\.record metadata is not JSON"
    ):
        read_record(bad)
