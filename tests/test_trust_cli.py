"""Issue #18, the command's edges: outputs over inputs, non-regular files, full disks, messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.cli import main
from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.errors import ConversionError
from sdvm_hf.files import read_parquet, read_samples, write_parquet, write_samples
from sdvm_hf.jobs import convert_to_files, rejects_path, validate_file
from sdvm_hf.presets.hellaswag import load_hellaswag

FIXTURES = Path(__file__).parent / "fixtures"
CLI = "from sdvm_hf.cli import main; raise SystemExit(main())"


@pytest.fixture(scope="module")
def samples() -> SampleSequence:
    return load_hellaswag(bundled=True)[:40]


# -- 6. report never writes over what it reads -------------------------------------------------


@pytest.mark.parametrize("which", ["input", "rejects"])
@pytest.mark.parametrize("fmt", ["html", "json"])
def test_report_refuses_to_write_over_its_input_or_the_rejects_file(
    samples: SampleSequence,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    which: str,
    fmt: str,
) -> None:
    source = tmp_path / "hs.parquet"
    write_parquet(samples, source)
    rejects = rejects_path(source)
    rejects.write_text('{"row": 0}\n')
    target = source if which == "input" else rejects
    before = target.read_bytes()
    assert main(["report", str(source), "-o", str(target), "--format", fmt]) == 2
    what = "sample file reported on" if which == "input" else "rejects file"
    assert capsys.readouterr().err == (
        f"sdvm-hf report: {target} is the {what}; writing there would replace it: "
        "name another output\n"
    )
    assert target.read_bytes() == before


# -- 6. non-regular files are refused by name, never opened ----------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("command", ["validate", "inspect", "report"])
@pytest.mark.parametrize("name", ["pipe.parquet", "pipe.jsonl"])
def test_a_fifo_is_refused_by_name_and_nothing_hangs(
    tmp_path: Path, command: str, name: str
) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-c", CLI, command, str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,  # today's code waits for a writer for ever
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"sdvm-hf {command}: {fifo} is a FIFO (named pipe), not a regular file; "
        "give a sample file\n"
    )


def test_a_device_named_like_a_sample_file_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    device = tmp_path / "zero.jsonl"
    device.symlink_to("/dev/zero")  # read, it never ends
    assert main(["validate", str(device)]) == 2
    assert capsys.readouterr().err == (
        f"sdvm-hf validate: {device} is a character device, not a regular file; "
        "give a sample file\n"
    )


def test_a_missing_file_still_says_no_such_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path / "nope.jsonl")]) == 2
    assert capsys.readouterr().err == f"sdvm-hf validate: no such file: {tmp_path / 'nope.jsonl'}\n"


# -- 7. messages ----------------------------------------------------------------------------


def test_validate_on_a_source_file_says_to_convert_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = FIXTURES / "mmlu" / "cais_test.parquet"
    assert main(["validate", str(source)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(
        f"({source} has neither task_type nor style, which every sample file has: if it is a "
        "dataset's source file, convert it first: sdvm-hf convert generic --data-files "
        f"{source} --context COLUMN --choices COLUMN --answer COLUMN -o OUT)\n"
    )


def test_duplicate_labels_say_so_rather_than_list_the_answer_as_missing() -> None:
    table = pa.table(
        {
            "question": ["Which?"],
            "choices": [{"text": ["a", "b", "c", "d"], "label": ["A", "A", "B", "C"]}],
            "answerKey": ["A"],
        }
    )
    mapping = MultipleChoiceMapping(
        dataset="arc",
        context="question",
        choices="choices.text",
        answer="answerKey",
        answer_format="label",
        labels="choices.label",
    )
    with pytest.raises(
        ConversionError,
        match=r"row 0, column 'answerKey': expected one of the row's labels, each label once, "
        r"but 'A' is there 2 times in \['A', 'A', 'B', 'C'\], got 'A'",
    ):
        mapping.table(table)


# -- 7. every disk-full error names the file ------------------------------------------------

FULL = "IOError: [errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device"


def test_a_full_disk_names_the_parquet_file(
    samples: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(FULL)

    monkeypatch.setattr(pq, "write_table", full)
    out = tmp_path / "out.parquet"
    with pytest.raises(OSError, match=rf"^cannot write {out}: .*No space left on device$"):
        write_parquet(samples, out)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_names_the_jsonl_file(
    samples: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.jsonl"
    real_open = Path.open

    def full_open(self: Path, *args: object, **kwargs: object) -> object:
        handle = real_open(self, *args, **kwargs)  # type: ignore[call-overload]
        if "w" in str(args[:1]):

            def write(text: str) -> int:
                raise OSError(28, "No space left on device")

            handle.write = write
        return handle

    monkeypatch.setattr(Path, "open", full_open)
    with pytest.raises(OSError, match=rf"^\[Errno 28\] cannot write {out}: No space left"):
        write_samples(samples, out)


def test_a_full_disk_during_a_conversion_names_the_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(self: object, *args: object, **kwargs: object) -> None:
        raise OSError(FULL)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    out = tmp_path / "hs.parquet"
    with pytest.raises(OSError, match=rf"^cannot write {out}: .*No space left on device$"):
        convert_to_files(load_hellaswag(bundled=True), out)
    assert not out.exists()


# -- 7. types: dictionary-encoded text, the file's key-value metadata -----------------------


def test_a_dictionary_encoded_context_reads_as_text(
    samples: SampleSequence, tmp_path: Path
) -> None:
    table = samples.table
    for name in ("context", "style", "task_type"):
        index = table.schema.get_field_index(name)
        table = table.set_column(index, name, table.column(name).dictionary_encode())
    path = tmp_path / "dict.parquet"
    pq.write_table(table, path)
    assert pa.types.is_dictionary(pq.read_table(path).schema.field("context").type)
    back = read_parquet(path)
    assert back.table.schema.field("context").type == pa.string()
    assert [s.context for s in back] == [s.context for s in samples]
    assert validate_file(path).problems == []


def test_a_files_key_value_metadata_survives_a_cast_on_reading(
    samples: SampleSequence, tmp_path: Path
) -> None:
    table = samples.table
    index = table.schema.get_field_index("context")
    table = table.set_column(index, "context", table.column("context").cast(pa.large_string()))
    record = {b"sdvm_hf.record": b'{"preset": "hellaswag"}'}
    pq.write_table(table.replace_schema_metadata(record), tmp_path / "large.parquet")
    assert read_samples(tmp_path / "large.parquet").table.schema.metadata == record


def test_a_converted_file_loads_with_datasets_in_its_own_sample_features(
    tmp_path: Path,
) -> None:
    import datasets

    from sdvm_hf.arrow.schema import sample_features

    path = tmp_path / "hs.parquet"
    convert_to_files(load_hellaswag(bundled=True), path)
    loaded = datasets.load_dataset(
        "parquet",
        data_files=str(path),
        split="train",
        features=sample_features(path),
        cache_dir=str(tmp_path / "cache"),
    )
    assert loaded.features == read_parquet(path).features
    assert loaded[0]["extra"]["ind"] == read_parquet(path)[0].extra["ind"]
    with pytest.raises(
        ValueError, match=r"cais_test.parquet is not a sample file: it has no column 'extra'"
    ):
        sample_features(FIXTURES / "mmlu" / "cais_test.parquet")
