"""``convert_to_files`` and ``sdvm-hf convert`` stream: samples, rejects and summary per batch.

The source here is the HellaSwag fixture repeated to 40,000 rows (three streaming batches),
with bad rows planted in the first and the last batch.
"""

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import (
    ConversionError,
    SampleTableError,
    load,
    load_hellaswag,
    read_parquet,
    stream,
    summarize,
)
from sdvm_hf.cli import main
from sdvm_hf.jobs import convert_to_files, inspect_file, read_rejects, validate_file
from sdvm_hf.sources.streaming import STREAM_ROWS

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


@pytest.mark.slow  # the one-minute loop leaves it to the full run
@pytest.mark.parametrize("suffix", ["parquet", "jsonl", "jsonl.gz"])
def test_a_streamed_conversion_writes_what_the_eager_one_writes(
    tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch = ROWS // 3 - 7  # three batches at least, and a short last one
    monkeypatch.setattr("sdvm_hf.sources.loaders.STREAM_ROWS", batch)
    assert batch < STREAM_ROWS and 2 * batch < ROWS
    path = source(tmp_path)
    eager = convert_to_files(
        load_hellaswag(data_files=str(path), on_error="skip"), tmp_path / f"eager.{suffix}"
    )
    streamed = convert_to_files(
        stream("hellaswag", data_files=str(path), on_error="skip"),
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
        convert_to_files(stream("hellaswag", data_files=str(path)), output)
    late = source(tmp_path, bad=(BAD[1],))
    with pytest.raises(ConversionError, match=rf"row {BAD[1]}\b.*label"):
        convert_to_files(stream("hellaswag", data_files=str(late)), output)
    assert output.read_text() == "an earlier run"
    assert rejects.read_text() == "an earlier run's rejects"
    assert leftovers(tmp_path) == []


def test_a_clean_rerun_removes_the_rejects_of_an_earlier_run(tmp_path: Path) -> None:
    output = tmp_path / "out.parquet"
    convert_to_files(stream("hellaswag", data_files=str(source(tmp_path)), on_error="skip"), output)
    assert (tmp_path / "out.rejects.jsonl").is_file()
    clean = stream("hellaswag", data_files=str(source(tmp_path, bad=())))
    converted = convert_to_files(clean, output)
    assert (converted.output, converted.rejects) == (output, None)
    assert not (tmp_path / "out.rejects.jsonl").exists()
    assert pq.read_metadata(output).num_rows == ROWS


@pytest.mark.slow  # the one-minute loop leaves it to the full run
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


# -- what the command met in real files ---------------------------------------------------

JSONL = FIXTURE.with_suffix(".jsonl")


def big_jsonl(folder: Path, last: dict[str, object], lines: int = 30_000) -> Path:
    """The JSON Lines fixture repeated past three 8 MB blocks, its last line changed."""
    rows = [json.loads(line) for line in JSONL.read_text(encoding="utf-8").splitlines()]
    path = folder / "hellaswag.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for number in range(lines):
            row = {**rows[number % len(rows)], "ind": number}
            if number == lines - 1:
                row.update(last)
            out.write(json.dumps(row) + "\n")
    assert path.stat().st_size > 2 * (8 << 20)  # three blocks
    return path


@pytest.mark.parametrize(
    "last",
    [{"note": "a key first seen here"}, {"ind": 2.5}, {"source_id": None, "ctx_b": None}],
    ids=["new-key", "int-turns-float", "nulls"],
)
def test_a_json_lines_stream_has_the_types_of_the_whole_file(
    tmp_path: Path, last: dict[str, object]
) -> None:
    path = big_jsonl(tmp_path, last)
    eager = convert_to_files(
        load_hellaswag(data_files=str(path), on_error="skip"), tmp_path / "eager.parquet"
    )
    streamed = main(
        [
            *("convert", "hellaswag", "--data-files", str(path), "--on-error", "skip"),
            *("-o", str(tmp_path / "streamed.parquet"), "--quiet"),
        ]
    )
    assert streamed == 0 and eager.output is not None
    assert pq.read_table(tmp_path / "streamed.parquet").equals(pq.read_table(eager.output))


def test_a_json_lines_file_that_is_not_json_is_named_by_its_line(tmp_path: Path) -> None:
    path = big_jsonl(tmp_path, {})
    with path.open("a", encoding="utf-8") as out:
        out.write('{"ind": 1, "label": \n')
    for streaming in (True, False):
        with pytest.raises(ValueError, match=r"hellaswag\.jsonl: line 30001 is not JSON"):
            list((stream if streaming else load)("hellaswag", data_files=str(path)))


def test_text_that_is_not_utf8_stops_the_conversion_naming_row_and_column(
    tmp_path: Path,
) -> None:
    lines = JSONL.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"ctx_a": "', b'"ctx_a": "\xff', 1)
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"".join(lines))
    for streaming in (True, False):
        with pytest.raises(
            ConversionError,
            match=r"hellaswag validation row 3, column 'ctx_a': expected UTF-8 text, "
            r"got bytes that are not UTF-8",
        ):
            list(
                (stream if streaming else load)("hellaswag", data_files=str(path), on_error="skip")
            )


def test_a_sample_file_with_text_that_is_not_utf8_is_refused_and_validated(
    tmp_path: Path,
) -> None:
    samples = load_hellaswag(bundled=True).table
    contexts = samples.column("context").to_pylist()
    raw = [text.encode() for text in contexts]
    raw[7] = b"\xfe" + raw[7]
    binary = pa.array(raw, pa.binary())
    broken = samples.set_column(
        samples.schema.get_field_index("context"),
        "context",
        pa.Array.from_buffers(pa.string(), len(binary), binary.buffers()),
    )
    path = tmp_path / "broken.parquet"
    pq.write_table(broken, path)
    with pytest.raises(SampleTableError, match=r"row 7, column 'context': expected UTF-8 text"):
        read_parquet(path)
    problems = validate_file(path).problems
    assert [str(problem) for problem in problems] == [
        "row 7, column 'context': expected UTF-8 text, got bytes that are not UTF-8"
    ]


def test_damaged_sources_are_named_by_file(tmp_path: Path) -> None:
    gz = tmp_path / "truncated.jsonl.gz"
    gz.write_bytes(gzip.compress(JSONL.read_bytes())[:-30])
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.parquet").write_bytes(FIXTURE.read_bytes())
    (shards / "b.parquet").write_bytes(FIXTURE.read_bytes()[:-100])
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for source, message in [
        (gz, r"truncated\.jsonl\.gz: .*(end-of-stream|[Tt]runcated)"),
        (shards, r"b\.parquet: .*(magic|footer)"),
        (empty, r"empty\.jsonl: Empty JSON file"),
    ]:
        for streaming in (True, False):
            with pytest.raises(ValueError, match=message):
                list((stream if streaming else load)("hellaswag", data_files=str(source)))


def test_an_empty_source_gives_the_eager_schema_and_says_zero_rows_in(tmp_path: Path) -> None:
    empty = tmp_path / "empty.parquet"
    pq.write_table(pq.read_table(FIXTURE).slice(0, 0), empty)
    eager = convert_to_files(load_hellaswag(data_files=str(empty)), tmp_path / "eager.parquet")
    streamed = convert_to_files(
        stream("hellaswag", data_files=str(empty)), tmp_path / "streamed.parquet"
    )
    assert streamed.summary.as_dict() == eager.summary.as_dict()
    assert (streamed.summary.rows_in, streamed.summary.group_by) == (0, "activity_label")
    assert pq.read_schema(tmp_path / "streamed.parquet") == pq.read_schema(
        tmp_path / "eager.parquet"
    )
    inspected = inspect_file(tmp_path / "streamed.parquet")  # a 0-row file has its extra keys
    assert (
        inspected.as_dict()
        == summarize(read_parquet(tmp_path / "streamed.parquet").table).as_dict()
    )
    assert "ind" in inspected.extra


def test_the_rejects_file_is_never_an_input_nor_written_before_the_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rejects = tmp_path / "out.rejects.jsonl"
    rejects.write_text("an input that happens to sit where the rejects would go")
    code = main(
        ["convert", "hellaswag", "--data-files", str(rejects), "-o", str(tmp_path / "out.jsonl")]
    )
    assert code == 2
    assert f"{rejects} is also an input" in capsys.readouterr().err
    folder = tmp_path / "taken.parquet"
    folder.mkdir()
    assert main(["convert", "hellaswag", "--bundled", "-o", str(folder)]) == 2
    assert "taken.parquet is a folder" in capsys.readouterr().err
    path = source(tmp_path)  # with rejects: the sample file cannot be moved into place
    with pytest.raises(OSError):
        convert_to_files(load_hellaswag(data_files=str(path), on_error="skip"), folder)
    assert not (tmp_path / "taken.rejects.jsonl").exists()
    assert leftovers(tmp_path) == []


def test_many_small_files_make_few_row_groups(tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    shards.mkdir()
    table = pq.read_table(FIXTURE)
    for number in range(40):
        pq.write_table(table, shards / f"part-{number:02}.parquet")
    output = tmp_path / "out.parquet"
    assert main(["convert", "hellaswag", "--data-files", str(shards), "-o", str(output)]) == 0
    metadata = pq.read_metadata(output)
    assert (metadata.num_rows, metadata.num_row_groups) == (40 * table.num_rows, 1)


def test_sigterm_leaves_no_partial_file(tmp_path: Path) -> None:
    path = source(tmp_path)
    big = tmp_path / "big.parquet"
    pq.write_table(pa.concat_tables([pq.read_table(path)] * 10), big, row_group_size=16_384)
    output = tmp_path / "out" / "big.samples.parquet"
    output.parent.mkdir()
    command = [sys.executable, "-m", "sdvm_hf", "convert", "hellaswag", "--data-files", str(big)]
    process = subprocess.Popen(
        [*command, "-o", str(output)], stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    deadline = time.monotonic() + 60
    while not leftovers(output.parent) and time.monotonic() < deadline:  # it has started
        time.sleep(0.01)
    assert leftovers(output.parent), "the conversion never started"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "sdvm-hf convert: terminated; no partial file was left" in err
    assert os.listdir(output.parent) == []


def not_utf8(strings: pa.Array, index: int) -> pa.Array:
    """``strings`` with the value at ``index`` prefixed by a byte that is never UTF-8."""
    raw = [value.encode() for value in strings.to_pylist()]
    raw[index] = b"\xff" + raw[index]
    binary = pa.array(raw, pa.binary())
    return pa.Array.from_buffers(pa.string(), len(binary), binary.buffers())


def test_bad_utf8_in_a_list_column_names_its_own_row_and_a_slice_without_it_converts(
    tmp_path: Path,
) -> None:
    table = pq.read_table(source(tmp_path, bad=())).combine_chunks()
    endings = table.column("endings").chunk(0)
    first = endings.offsets[1234].as_py()
    broken = pa.ListArray.from_arrays(endings.offsets, not_utf8(endings.values, first + 2))
    table = table.set_column(table.schema.get_field_index("endings"), "endings", broken)
    path = tmp_path / "endings.parquet"
    pq.write_table(table, path)
    for streaming in (True, False):
        with pytest.raises(
            ConversionError, match=r"row 1234, column 'endings': expected UTF-8 text"
        ):
            list((stream if streaming else load)("hellaswag", data_files=str(path)))
        clean = (stream if streaming else load)(
            "hellaswag", data_files=str(path), split="validation[:1000]"
        )
        assert sum(1 for _ in clean) == 1000


def test_a_sample_file_with_one_bad_choice_has_one_problem(tmp_path: Path) -> None:
    samples = load_hellaswag(bundled=True).table.combine_chunks()
    choices = samples.column("choices").chunk(0)
    first = choices.offsets[5].as_py()
    broken = pa.ListArray.from_arrays(choices.offsets, not_utf8(choices.values, first))
    path = tmp_path / "choices.parquet"
    pq.write_table(
        samples.set_column(samples.schema.get_field_index("choices"), "choices", broken), path
    )
    assert [str(p) for p in validate_file(path).problems] == [
        "row 5, column 'choices': expected UTF-8 text, got bytes that are not UTF-8"
    ]
    with pytest.raises(SampleTableError, match=r"row 5, column 'choices'"):
        read_parquet(path)


@pytest.mark.parametrize(
    ("early", "late"),
    [("2020-01-01", "unknown"), ("2020-01-01", "2020-01-01T00:00:00.123456789")],
    ids=["timestamp-then-text", "seconds-then-nanoseconds"],
)
def test_dates_that_turn_into_text_late_are_text_in_both_paths(
    tmp_path: Path, early: str, late: str
) -> None:
    path = big_jsonl(tmp_path, {"when": late})
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(
        "".join(line[:-1] + f', "when": "{early}"}}\n' for line in lines[:-1]) + lines[-1] + "\n",
        encoding="utf-8",
    )
    eager = load_hellaswag(data_files=str(path)).table
    streamed = pa.concat_tables(stream("hellaswag", data_files=str(path)).tables())
    assert streamed.equals(eager)
    assert eager.schema.field("extra").type.field("when").type == pa.string()


def test_a_json_column_null_until_it_holds_objects_is_read_alike_in_both_paths(
    tmp_path: Path,
) -> None:
    """pyarrow's whole-file reader cannot turn a column it read as null into a struct; read
    a block at a time in the file's types (issue #28), both paths read it, as one table."""
    path = big_jsonl(tmp_path, {"meta": {"a": [1, 2]}})
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(
        "".join(line[:-1] + ', "meta": null}\n' for line in lines[:-1]) + lines[-1] + "\n",
        encoding="utf-8",
    )
    eager = load_hellaswag(data_files=str(path)).table
    streamed = pa.concat_tables(stream("hellaswag", data_files=str(path)).tables())
    assert streamed.equals(eager)
    assert eager.num_rows == 30_000
    meta = eager.column("extra").combine_chunks().field("meta")
    assert meta.type == pa.struct([("a", pa.list_(pa.int64()))])
    assert meta.null_count == 29_999 and meta[-1].as_py() == {"a": [1, 2]}


def test_batches_in_source_order_are_refused_after_shuffle_or_take() -> None:
    streamed = stream("hellaswag", bundled=True)
    assert sum(table.num_rows for table, _ in streamed.batches()) == 296
    for cut in (streamed.shuffle(seed=1), streamed.take(5)):
        with pytest.raises(ValueError, match=r"call it before shuffle\(\) or take\(\)"):
            cut.batches()
