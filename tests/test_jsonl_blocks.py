"""JSON Lines read a block at a time, several blocks at once (issue #28): the same table as
pyarrow's reader of the whole file, every line in order, a bad line named by its number."""

import gzip
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.json as paj
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdvm_hf.sources import _jsonl
from sdvm_hf.sources._jsonl import jsonl_blocks, line_blocks, read_jsonl

VALUES = st.one_of(
    st.none(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=30),
    st.lists(st.integers(0, 9), max_size=3),
)
ROWS = st.lists(
    st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), VALUES, min_size=1),
    min_size=1,
    max_size=60,
)


def _write(path: Path, rows: list[dict[str, object]], end: str) -> bytes:
    text = "\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + end
    data = text.encode()
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return data


def _whole(data: bytes) -> pa.Table | None:
    """pyarrow's reader of the whole file, or None where it refuses the file."""
    try:
        return paj.read_json(pa.BufferReader(data), read_options=_jsonl.read_options())
    except pa.ArrowInvalid:
        return None


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    rows=ROWS,
    block=st.integers(8, 400),
    end=st.sampled_from(["\n", ""]),
    gz=st.booleans(),
)
def test_blocks_give_the_whole_files_table(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rows: list[dict[str, object]],
    block: int,
    end: str,
    gz: bool,
) -> None:
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", block)  # many blocks, lines longer than one
    path = tmp_path / ("rows.jsonl.gz" if gz else "rows.jsonl")
    data = _write(path, rows, end)
    pieces = list(line_blocks(str(path)))
    assert b"".join(bytes(lines) for _, lines in pieces) == data  # every byte, in order
    assert [offset for offset, _ in pieces] == [
        sum(len(bytes(lines)) for _, lines in pieces[:n]) for n in range(len(pieces))
    ]
    assert all(bytes(lines).endswith(b"\n") for _, lines in pieces[:-1])  # whole lines
    whole = _whole(data)
    try:
        eager = read_jsonl(str(path))
    except ValueError as error:  # types no block-wise unification can join: named
        assert str(error).startswith(f"{path}: lines ")
        return
    streamed = pa.concat_tables(jsonl_blocks(str(path)))
    assert streamed.equals(eager)
    assert eager.num_rows == len(rows)
    if whole is not None:  # where pyarrow reads the file whole, the same table
        assert eager.equals(whole)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("bad", [0, 17, 199])
def test_a_line_that_is_not_json_is_named_by_its_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gz: bool, bad: int
) -> None:
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", 256)
    lines = [json.dumps({"a": n, "b": "x" * (n % 7)}) for n in range(200)]
    lines[bad] = '{"a": 1, "b": '  # cut short
    path = tmp_path / ("rows.jsonl.gz" if gz else "rows.jsonl")
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    message = rf"^{re.escape(str(path))}: line {bad + 1} is not JSON"
    with pytest.raises(ValueError, match=message):
        read_jsonl(str(path))
    with pytest.raises(ValueError, match=message):
        list(jsonl_blocks(str(path)))


def test_an_empty_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: Empty JSON file"):
        read_jsonl(str(path))


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("where", ["first line", "after blank lines", "a later block"])
def test_a_block_that_starts_with_null_is_named_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gz: bool, where: str
) -> None:
    """pyarrow 26 kills the process on a block whose first value is ``null``: refused first."""
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", 256)
    lines = [json.dumps({"a": n, "b": "x" * (n % 7)}) for n in range(60)]
    path = tmp_path / ("rows.jsonl.gz" if gz else "rows.jsonl")

    def write(text: list[str]) -> None:
        data = ("\n".join(text) + "\n").encode()
        path.write_bytes(gzip.compress(data) if gz else data)

    write(lines)
    if where == "first line":
        lines[0], bad = "null", 1
    elif where == "after blank lines":
        lines[:0], bad = ["", "  ", "null"], 3
    else:
        starts = [offset for offset, _ in line_blocks(str(path))]
        text = ("\n".join(lines) + "\n").encode()
        bad = text[: starts[2]].count(b"\n") + 1  # the line the third block starts with
        lines[bad - 1] = "null".ljust(len(lines[bad - 1]))  # the blocks' ends stay put
    write(lines)
    message = rf"^{re.escape(str(path))}: line {bad} is null, not a JSON object"
    with pytest.raises(ValueError, match=message):
        read_jsonl(str(path))
    with pytest.raises(ValueError, match=message):
        list(jsonl_blocks(str(path)))


def test_the_command_names_a_null_first_line_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command exited with the reader's crash (rc 139) and left its temporary files."""
    from sdvm_hf.cli import main

    path = tmp_path / "rows.jsonl"
    path.write_text('null\n{"ind": 1}\n')
    out = tmp_path / "out.parquet"
    assert main(["convert", "hellaswag", "--data-files", str(path), "-o", str(out)]) == 2
    assert "line 1 is null, not a JSON object" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]
