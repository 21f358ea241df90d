"""Issue #27, messages: every command's error about a bad input file names that file.

Each command is given a file that is missing, a folder, a FIFO, empty, truncated Parquet or
JSON Lines with a broken line; it exits with an error whose one line names the file (and a
folder is called a folder, not "no such file").
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sdvm_hf import load_hellaswag, read_parquet
from sdvm_hf.cli import main
from sdvm_hf.files import jsonl_records, write_jsonl, write_parquet

FIXTURE = Path(__file__).parent / "fixtures" / "hellaswag" / "validation.parquet"


def _missing(path: Path) -> None:
    pass


def _folder(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _truncated(path: Path) -> None:
    path.write_bytes(FIXTURE.read_bytes()[:3000])


def _broken_line(path: Path) -> None:
    write_jsonl(list(load_hellaswag(data_files=str(FIXTURE)))[:4], path)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:40]  # cut mid-string: not JSON
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


BAD: dict[str, tuple[str, Callable[[Path], None]]] = {
    "missing": ("parquet", _missing),
    "folder": ("parquet", _folder),
    "fifo": ("parquet", _fifo),
    "empty": ("parquet", _empty),
    "truncated": ("parquet", _truncated),
    "broken line": ("jsonl", _broken_line),
}


def _argv(command: str, bad: Path, good: Path, out: Path) -> list[str]:
    return {
        "convert": ["convert", "hellaswag", "--data-files", str(bad), "-o", str(out / "o.parquet")],
        "audit --dry-run": ["audit", str(bad), "-o", str(out / "a.parquet"), "--dry-run"],
        "export": ["export", str(bad), "-o", str(out / "export")],
        "report": ["report", str(bad), "-o", str(out / "r.html")],
        "diff before": ["diff", str(bad), str(good)],
        "diff after": ["diff", str(good), str(bad)],
        "inspect": ["inspect", str(bad)],
        "render": ["render", str(bad), "-o", str(out / "render"), "--formulation", "olmes-rc"],
        "validate": ["validate", str(bad)],
        "report --original": [
            "report",
            str(good),
            "-o",
            str(out / "r.html"),
            "--original",
            str(bad),
        ],
        "render --shots-from": [
            *("render", str(good), "-o", str(out / "render"), "--formulation", "olmes-rc"),
            *("--shots", "2", "--shots-from", str(bad)),
        ],
    }[command]


COMMANDS = [
    "convert",
    "audit --dry-run",
    "export",
    "report",
    "diff before",
    "diff after",
    "inspect",
    "render",
    "validate",
    "report --original",
    "render --shots-from",
]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("good") / "good.parquet"
    write_parquet(load_hellaswag(data_files=str(FIXTURE)), path)
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("command", COMMANDS)
def test_an_error_about_a_bad_input_names_the_file(
    command: str, kind: str, good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extension, make = BAD[kind]
    bad = tmp_path / f"input.{extension}"  # a name that says nothing of what it is
    make(bad)
    out = tmp_path / "out"
    status = main(_argv(command, bad, good, out))
    shutil.rmtree(out, ignore_errors=True)
    out_text, err = capsys.readouterr()
    if command == "validate" and status == 1:  # found problems: its report, on stdout
        err = out_text
    assert status in (1, 2), err
    assert str(bad) in err, err
    if kind == "folder":
        assert "no such file" not in err and ("folder" in err or "holds no file" in err), err
    if kind == "fifo":
        assert f"{bad} is a FIFO (named pipe), not a regular file" in err, err


def test_the_readers_call_a_folder_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "samples.parquet"
    folder.mkdir()
    with pytest.raises(FileNotFoundError, match=f"^{folder} is a folder with no .parquet file"):
        read_parquet(folder)
    with pytest.raises(IsADirectoryError, match=f"^{folder} is a folder, not a file"):
        list(jsonl_records(folder))
    with pytest.raises(FileNotFoundError, match=f"^no such file: {tmp_path / 'none.jsonl'}$"):
        list(jsonl_records(tmp_path / "none.jsonl"))
