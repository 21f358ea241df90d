"""``convert_to_files`` and ``sdvm-hf convert`` stream: samples, rejects and summary per batch.

The source here is the HellaSwag fixture repeated to 40,000 rows (three streaming batches),
with bad rows planted in the first and the last batch.
"""

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import ConversionError, convert_to_files, load_hellaswag
from sdvm_hf.cli import main
from sdvm_hf.jobs import read_rejects
from sdvm_hf.load.streaming import STREAM_ROWS

FIXTURE = Path(__file__).parent / "fixtures" / "hellaswag" / "validation.parquet"
ROWS = 40_000
BAD = (5, ROWS - 7)  # rows whose label is out of range


def source(folder: Path, bad: tuple[int, ...] = BAD, label: str | None = None) -> Path:
    """The fixture repeated to ``ROWS`` rows, ``ind`` numbering them, ``bad`` labels broken."""
    table = pq.read_table(FIXTURE)
    table = pa.concat_tables([table] * (ROWS // table.num_rows + 1)).slice(0, ROWS)
    labels = table.column("label").to_pylist()
    for row in bad:
        labels[row] = "9"
    if label is not None:
        labels = [label] * ROWS
    table = table.set_column(0, "ind", pa.array(range(ROWS), pa.int32()))
    table = table.set_column(table.schema.get_field_index("label"), "label", pa.array(labels))
    path = folder / "hellaswag.parquet"
    pq.write_table(table, path, row_group_size=10_000)
    return path


def leftovers(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".tmp"))


@pytest.mark.parametrize("suffix", ["parquet", "jsonl", "jsonl.gz"])
def test_a_streamed_conversion_writes_what_the_eager_one_writes(
    tmp_path: Path, suffix: str
) -> None:
    assert ROWS > 2 * STREAM_ROWS  # three batches at least
    path = source(tmp_path)
    eager = convert_to_files(
        load_hellaswag(data_files=str(path), on_error="skip"), tmp_path / f"eager.{suffix}"
    )
    streamed = convert_to_files(
        load_hellaswag(data_files=str(path), on_error="skip", streaming=True),
        tmp_path / f"streamed.{suffix}",
    )
    assert streamed.summary.as_dict() == eager.summary.as_dict()
    assert (streamed.summary.rows_in, streamed.summary.samples) == (ROWS, ROWS - len(BAD))
    assert streamed.summary.extra["ind"] == f"int32 ({ROWS - len(BAD):,} distinct)"
    assert eager.output is not None and streamed.output is not None
    if suffix == "parquet":
        assert pq.read_table(streamed.output).equals(pq.read_table(eager.output))
        assert pq.read_schema(streamed.output) == pq.read_schema(eager.output)
    else:
        import gzip

        def text(path: Path) -> str:
            opener = gzip.open if suffix.endswith("gz") else open
            with opener(path, "rt", encoding="utf-8") as lines:
                return lines.read()

        assert text(streamed.output) == text(eager.output)
    assert streamed.rejects is not None and eager.rejects is not None
    assert [r.row for r in read_rejects(streamed.rejects)] == list(BAD)
    assert streamed.rejects.read_text() == eager.rejects.read_text().replace("eager", "streamed")
    assert leftovers(tmp_path) == []


def test_a_bad_row_in_the_last_batch_leaves_the_earlier_files_as_they_were(
    tmp_path: Path,
) -> None:
    path = source(tmp_path)
    output, rejects = tmp_path / "out.parquet", tmp_path / "out.rejects.jsonl"
    output.write_text("an earlier run")
    rejects.write_text("an earlier run's rejects")
    with pytest.raises(ConversionError, match=rf"row {BAD[0]}\b.*label"):
        convert_to_files(load_hellaswag(data_files=str(path), streaming=True), output)
    late = source(tmp_path, bad=(BAD[1],))
    with pytest.raises(ConversionError, match=rf"row {BAD[1]}\b.*label"):
        convert_to_files(load_hellaswag(data_files=str(late), streaming=True), output)
    assert output.read_text() == "an earlier run"
    assert rejects.read_text() == "an earlier run's rejects"
    assert leftovers(tmp_path) == []


def test_a_clean_rerun_removes_the_rejects_of_an_earlier_run(tmp_path: Path) -> None:
    output = tmp_path / "out.parquet"
    convert_to_files(
        load_hellaswag(data_files=str(source(tmp_path)), on_error="skip", streaming=True), output
    )
    assert (tmp_path / "out.rejects.jsonl").is_file()
    clean = load_hellaswag(data_files=str(source(tmp_path, bad=())), streaming=True)
    converted = convert_to_files(clean, output)
    assert (converted.output, converted.rejects) == (output, None)
    assert not (tmp_path / "out.rejects.jsonl").exists()
    assert pq.read_metadata(output).num_rows == ROWS


def test_when_every_row_is_rejected_no_sample_file_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = source(tmp_path, label="7")
    output = tmp_path / "out.parquet"
    output.write_text("an earlier run")
    code = main(
        ["convert", "hellaswag", "--data-files", str(path), "--on-error", "skip", "-o", str(output)]
    )
    assert code == 1
    captured = capsys.readouterr()
    assert f"every one of the {ROWS:,} rows was rejected" in captured.err
    assert f"{output} was not written" in captured.err
    assert output.read_text() == "an earlier run"
    assert len(read_rejects(tmp_path / "out.rejects.jsonl")) == ROWS
    assert leftovers(tmp_path) == []


def test_the_command_summary_counts_every_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = source(tmp_path)
    output = tmp_path / "out.jsonl"
    code = main(
        [
            *("convert", "hellaswag", "--data-files", str(path), "--on-error", "skip"),
            *("-o", str(output), "--json", "--quiet"),
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows_in"], summary["samples"]) == (ROWS, ROWS - len(BAD))
    assert sum(summary["choices"].values()) == ROWS - len(BAD)
    assert sum(group["samples"] for group in summary["groups"].values()) == ROWS - len(BAD)
    assert len(output.read_text().splitlines()) == ROWS - len(BAD)
