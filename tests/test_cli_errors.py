"""The command fails cleanly: one line, a non-zero exit, nothing half-written."""

import json
import os
import stat
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sdvm_hf import PRESETS, load_mmlu, read_parquet
from sdvm_hf.cli import main
from sdvm_hf.jobs import rejects_path

FIXTURES = Path(__file__).parent / "fixtures"
PRO = FIXTURES / "mmlu" / "mmlu_pro.parquet"
HELLASWAG_TEST = FIXTURES / "hellaswag" / "test.parquet"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("hs.v1.parquet", "hs.v1.rejects.jsonl"),
        ("hs.v2.parquet", "hs.v2.rejects.jsonl"),
        ("mmlu.jsonl", "mmlu.rejects.jsonl"),
        ("mmlu.jsonl.gz", "mmlu.rejects.jsonl"),
        ("x.rejects.jsonl", "x.rejects.rejects.jsonl"),
    ],
)
def test_the_rejects_file_is_named_from_the_whole_output_name(name: str, want: str) -> None:
    assert rejects_path(Path("out") / name) == Path("out") / want


def test_two_outputs_keep_their_own_rejects_and_a_clean_rerun_removes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for version in ("v1", "v2"):
        argv = ["convert", "mmlu", "--data-files", str(PRO), "--on-error", "skip"]
        assert run([*argv, "-o", str(tmp_path / f"pro.{version}.parquet")], capsys)[0] == 0
    assert sorted(p.name for p in tmp_path.glob("*.rejects.jsonl")) == [
        "pro.v1.rejects.jsonl",
        "pro.v2.rejects.jsonl",
    ]
    clean = FIXTURES / "mmlu" / "cais_test.parquet"
    argv = ["convert", "mmlu", "--data-files", str(clean), "-o", str(tmp_path / "pro.v1.parquet")]
    assert run(argv, capsys)[0] == 0
    assert not (tmp_path / "pro.v1.rejects.jsonl").exists()
    assert (tmp_path / "pro.v2.rejects.jsonl").exists()


def test_rejects_are_strict_json_and_say_how_a_nan_is_written(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(PRO)
    scores = pa.array([float("nan")] + [0.5] * (table.num_rows - 1))
    path = tmp_path / "pro.parquet"
    pq.write_table(table.append_column("score", scores), path)
    samples = load_mmlu(data_files=path, on_error="skip")
    from sdvm_hf.jobs import convert_to_files

    convert_to_files(samples, tmp_path / "o.parquet")
    lines = (tmp_path / "o.rejects.jsonl").read_text().splitlines()
    records = [json.loads(line, parse_constant=lambda t: pytest.fail(t)) for line in lines]
    assert [r["original"]["score"] for r in records] == ["NaN", 0.5]  # rows 0 and 6
    assert records[0]["column"] == "score" and records[0]["path"] == ["score"]


def test_an_output_that_is_an_input_is_refused_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.parquet"
    source.write_bytes(PRO.read_bytes())
    status, _, err = run(
        ["convert", "mmlu", "--data-files", str(source), "-o", str(source)], capsys
    )
    assert status == 2 and "is also an input; write the output to another file" in err
    assert source.read_bytes() == PRO.read_bytes()


@pytest.mark.parametrize("name", ["out.csv", "out.json", "out.parquet.tmp"])
def test_an_unknown_output_extension_is_refused_before_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    status, _, err = run(["convert", "hellaswag", "--bundled", "-o", str(tmp_path / name)], capsys)
    assert status == 2 and "cannot tell the sample file format; name it .parquet" in err
    assert list(tmp_path.iterdir()) == []


def test_every_row_rejected_exits_non_zero_and_writes_no_sample_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "test.parquet"
    argv = ["convert", "hellaswag", "--split", "test", "--data-files", str(HELLASWAG_TEST)]
    status, out_text, err = run([*argv, "--on-error", "skip", "-o", str(out)], capsys)
    assert status == 1 and "every one of the 2 rows was rejected" in err
    assert not out.exists() and (tmp_path / "test.rejects.jsonl").exists()
    assert "label: label_withheld (no answer at all" in out_text


def test_a_typo_in_an_answer_column_names_the_missing_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["convert", "generic", "--data-files", str(PRO), "--context", "question"]
    argv += ["--choices", "options", "--answer", "answr", "-o", str(tmp_path / "o.parquet")]
    status, _, err = run(argv, capsys)
    assert status == 2 and "column 'answr' is missing; columns seen: question_id" in err


@pytest.mark.parametrize("command", ["inspect", "validate"])
def test_a_missing_input_says_no_such_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    status, _, err = run([command, str(tmp_path / "nope.parquet")], capsys)
    assert status == 2 and f"no such file: {tmp_path / 'nope.parquet'}" in err


def test_an_unwritable_destination_is_named_not_its_temporary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if os.geteuid() == 0:
        target = Path("/proc/sdvm-hf-cannot-write/out.parquet")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = locked / "out.parquet"
    status, _, err = run(["convert", "hellaswag", "--bundled", "-o", str(target)], capsys)
    assert status == 2 and f"cannot write {target}" in err and ".tmp" not in err


def test_new_files_get_the_usual_permissions(tmp_path: Path) -> None:
    out = tmp_path / "hs.parquet"
    old = os.umask(0o022)
    try:
        assert main(["convert", "hellaswag", "--bundled", "-o", str(out)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert len(read_parquet(out)) == 296


def test_ctrl_c_prints_one_line_and_leaves_no_partial_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupt(file: str) -> dict[str, str]:
        raise KeyboardInterrupt  # as if the user pressed Ctrl-C while the files were read

    mmlu = PRESETS["mmlu"]
    monkeypatch.setitem(PRESETS, "slow", replace(mmlu, name="slow", file_columns=interrupt))
    source = FIXTURES / "mmlu" / "hendrycks" / "abstract_algebra_dev.csv"
    out = tmp_path / "out.parquet"
    argv = ["convert", "slow", "--data-files", str(source), "--split", "test", "-o", str(out)]
    status, _, err = run(argv, capsys)
    assert status == 130
    assert err == "sdvm-hf convert: interrupted; no partial file was left\n"
    assert list(tmp_path.iterdir()) == []


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import sdvm_hf

    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == f"sdvm-hf {sdvm_hf.__version__}\n"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="says what to do on Python < 3.12")
def test_on_python_3_11_the_round_trip_says_the_sdk_extra_installed_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDVM_API_KEY", "sk-test")
    source = tmp_path / "in.parquet"
    assert main(["convert", "hellaswag", "--bundled", "-o", str(source)]) == 0
    status, _, err = run(["audit", str(source), "-o", str(tmp_path / "a.parquet")], capsys)
    assert status == 2
    assert "needs Python >= 3.12; this is Python 3.11" in err
    assert "where the 'sdvm' extra installs nothing" in err
    assert "python3.12 -m venv .venv312 && .venv312/bin/pip install" in err


def test_a_service_stage_refuses_an_output_it_would_not_write_as_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.parquet"
    assert main(["convert", "hellaswag", "--bundled", "-o", str(source)]) == 0
    status, _, err = run(["audit", str(source), "-o", str(tmp_path / "a.jsonl")], capsys)
    assert status == 2 and "a.jsonl: the output is Parquet; name it .parquet" in err


def test_convert_says_which_split_it_took_and_where_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "arc.parquet"
    source = FIXTURES / "arc" / "ARC-Challenge-test.parquet"
    status, _, err = run(["convert", "arc", "--data-files", str(source), "-o", str(out)], capsys)
    assert status == 0
    assert err.splitlines() == [
        "sdvm-hf convert: no --split given: taking arc's 'test' split",
        f"sdvm-hf convert: wrote {out}",
    ]


def test_convert_refuses_a_fifo_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "rows.parquet"
    os.mkfifo(fifo)
    argv = ["convert", "hellaswag", "--data-files", str(fifo), "-o", str(tmp_path / "o.parquet")]
    status, _, err = run(argv, capsys)
    assert status == 2
    assert (
        err
        == f"sdvm-hf convert: {fifo} is a FIFO (named pipe), not a regular file; give a source file\n"
    )


def test_an_unreachable_hub_says_what_works_offline(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    def offline(path: str, **kwargs: object) -> None:  # what datasets raises with no network
        raise ConnectionError(f"Couldn't reach '{path}' on the Hub (OfflineModeIsEnabled)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    status, _, err = run(["convert", "arc", "--split", "test", "-o", "never.parquet"], capsys)
    assert status == 2
    assert "Couldn't reach 'allenai/ai2_arc'" in err
    assert err.rstrip().endswith(
        "offline, give the split's files (data_files=..., --data-files) or a folder of Hub "
        "copies in $SDVM_HF_HUB_MIRROR (allenai/ai2_arc under it)"
    )


def test_an_interrupt_before_a_writer_is_bound_leaves_no_temporary_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sdvm_hf.jobs
    from sdvm_hf.files import SampleWriter

    class Interrupted(SampleWriter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)  # its temporary file exists now
            raise KeyboardInterrupt  # as a signal landing before the caller binds it

    monkeypatch.setattr(sdvm_hf.jobs, "SampleWriter", Interrupted)
    out = tmp_path / "out" / "h.parquet"
    status, _, err = run(["convert", "hellaswag", "--bundled", "-o", str(out)], capsys)
    assert status == 130
    assert err.endswith("interrupted; no partial file was left\n")
    assert list(out.parent.iterdir()) == []


def test_only_our_errors_are_one_line_messages_a_bug_shows_its_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa

    import sdvm_hf.jobs
    from sdvm_hf.errors import InputError

    source = FIXTURES / "hellaswag" / "validation.parquet"
    argv = ["inspect", str(source)]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise pa.ArrowInvalid("an internal bug")

    monkeypatch.setattr(sdvm_hf.jobs, "inspect_file", broken)
    with pytest.raises(pa.ArrowInvalid, match="an internal bug"):  # not 'exit 2, one line'
        main(argv)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise InputError("this input cannot be taken")

    monkeypatch.setattr(sdvm_hf.jobs, "inspect_file", refused)
    status, _, err = run(argv, capsys)
    assert (status, err) == (2, "sdvm-hf inspect: this input cannot be taken\n")


def test_every_error_class_of_ours_sits_under_one_base() -> None:
    import sdvm_hf.errors
    from sdvm_hf.convert.inverse import EncodeError
    from sdvm_hf.errors import SdvmHfError
    from sdvm_hf.exporter import ExportError
    from sdvm_hf.record import RecordError
    from sdvm_hf.service import ServiceError

    ours = [
        value
        for value in vars(sdvm_hf.errors).values()
        if isinstance(value, type) and issubclass(value, Exception)
    ]
    ours += [EncodeError, ExportError, RecordError, ServiceError]
    assert len(ours) >= 9 and all(issubclass(kind, SdvmHfError) for kind in ours)
