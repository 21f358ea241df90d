"""A stream read once when its reader can start again (issue #28): JSON Lines parsed in their
first block's types, checked on every block, and read again (two passes) when they change."""

import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_jsonl_blocks import VALUES as BLOCK_VALUES

from sdvm_hf import load_hellaswag, stream, write_parquet
from sdvm_hf._restart import StartAgain, at_most_twice, may_restart, restartable
from sdvm_hf.jobs import convert_to_files
from sdvm_hf.record import arrow_schema, read_record
from sdvm_hf.sources import _jsonl
from sdvm_hf.sources._ahead import in_order, read_ahead
from sdvm_hf.sources._jsonl import jsonl_blocks, read_jsonl

JSONL = Path(__file__).parent / "fixtures" / "hellaswag" / "validation.jsonl"

VALUES = st.one_of(  # the block tests' values, and objects that gain a key late
    BLOCK_VALUES,
    st.fixed_dictionaries({"x": st.integers(0, 9)}, optional={"y": st.text(max_size=3)}),
)


def test_at_most_twice_runs_once_inside_and_again_outside_when_asked() -> None:
    seen: list[bool] = []

    def run() -> str:
        seen.append(may_restart())
        if may_restart():
            raise StartAgain("guessed wrong")
        return "done"

    assert not may_restart()
    assert at_most_twice(run) == "done"
    assert seen == [True, False]  # the second run reads the whole file first
    assert at_most_twice(lambda: 7) == 7 and not may_restart()


def test_an_error_of_the_second_run_is_raised() -> None:
    def run() -> None:
        raise StartAgain("again") if may_restart() else ValueError("the file is bad")

    with pytest.raises(ValueError, match="the file is bad"):
        at_most_twice(run)


def test_the_read_ahead_thread_reads_in_the_callers_setting() -> None:
    def items() -> Iterator[bool]:
        yield may_restart()

    with restartable():
        assert list(read_ahead(items())) == [True]
    assert list(read_ahead(items())) == [False]


def _lines(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    first=st.dictionaries(st.sampled_from("abc"), VALUES, min_size=1),
    rows=st.lists(st.dictionaries(st.sampled_from("abcd"), VALUES), min_size=1, max_size=40),
    block=st.integers(16, 300),
)
def test_one_pass_gives_the_two_passes_table_or_asks_to_start_again(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    first: dict[str, object],
    rows: list[dict[str, object]],
    block: int,
) -> None:
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", block)
    path = _lines(tmp_path / "rows.jsonl", [first, *rows])
    try:
        two = pa.concat_tables(jsonl_blocks(str(path)))
    except ValueError:  # types no unification joins: named, as before
        return
    given_before: list[pa.Table] = []
    with restartable():
        try:
            for table in jsonl_blocks(str(path)):
                given_before.append(table)
        except StartAgain as request:
            assert str(request).startswith(f"{path}: ")
            first_types = given_before[0].schema if given_before else None
            assert first_types != two.schema  # only when the first block's types are wrong
            return
    assert pa.concat_tables(given_before).equals(two)
    assert two.equals(read_jsonl(str(path)))


def test_a_file_whose_types_hold_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", 64)
    rows = [{"a": n, "b": f"text {n}", "c": [n]} for n in range(50)]
    rows[20]["b"] = None  # a null in a later block: its own type is null, it fits the first's
    path = _lines(tmp_path / "rows.jsonl", rows)
    parsed: list[bool] = []
    original = _jsonl._parsed

    def counted(file: str, block: _jsonl.Block, schema: pa.Schema | None = None) -> pa.Table:
        parsed.append(schema is None)
        return original(file, block, schema)

    monkeypatch.setattr(_jsonl, "_parsed", counted)
    blocks = len(list(_jsonl.line_blocks(str(path))))
    with restartable():
        once = pa.concat_tables(jsonl_blocks(str(path)))
    assert len(parsed) == blocks + 1  # each block once, the one with the null once more
    parsed.clear()
    twice = pa.concat_tables(jsonl_blocks(str(path)))
    assert len(parsed) == 2 * blocks
    assert once.equals(twice) and once.column("b")[20].as_py() is None


@pytest.mark.parametrize(
    "last",
    [{"note": "a key first seen here"}, {"ind": 2.5}, {"meta": {"a": [1, 2]}}],
    ids=["new-key", "int-turns-float", "new-struct"],
)
def test_a_conversion_starts_again_when_a_late_line_changes_the_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, last: dict[str, object]
) -> None:
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", 1 << 10)  # the fixture in several blocks
    rows = [json.loads(line) for line in JSONL.read_text(encoding="utf-8").splitlines()]
    path = _lines(tmp_path / "hellaswag.jsonl", [*rows[:-1], {**rows[-1], **last}])
    passes: list[bool] = []
    original = _jsonl.jsonl_schema

    def first_pass(file: str) -> pa.Schema:
        passes.append(True)
        return original(file)

    monkeypatch.setattr(_jsonl, "jsonl_schema", first_pass)
    eager = load_hellaswag(data_files=str(path), on_error="skip")
    converted = convert_to_files(
        stream("hellaswag", data_files=str(path), on_error="skip"), tmp_path / "out.parquet"
    )
    assert passes == [True]  # started again once, with the first pass
    assert converted.output is not None
    assert pq.read_table(converted.output).equals(eager.table)
    assert converted.summary.rows_in == len(rows)
    again = stream("hellaswag", data_files=str(path), on_error="skip")
    written = write_parquet(again, tmp_path / "w.parquet")
    assert written == eager.table.num_rows and passes == [True, True]
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_a_file_of_one_type_converts_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", 1 << 10)
    monkeypatch.setattr(_jsonl, "jsonl_schema", lambda file: pytest.fail("a second pass"))
    converted = convert_to_files(stream("hellaswag", data_files=str(JSONL)), tmp_path / "o.jsonl")
    assert converted.output is not None
    assert converted.summary.samples == load_hellaswag(data_files=str(JSONL)).table.num_rows


def test_a_stream_read_where_it_cannot_start_again_reads_the_whole_file_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", 64)
    rows: list[dict[str, object]] = [{"a": n} for n in range(30)]
    path = _lines(tmp_path / "rows.jsonl", [*rows, {"a": 0.5}])
    tables = list(jsonl_blocks(str(path)))  # no restartable(): never StartAgain
    assert all(table.schema.field("a").type == pa.float64() for table in tables)


def test_an_empty_file_is_named_in_one_pass_too(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    message = rf"^{re.escape(str(path))}: Empty JSON file"
    with pytest.raises(ValueError, match=message):
        list(jsonl_blocks(str(path)))
    with restartable(), pytest.raises(ValueError, match=message):
        list(jsonl_blocks(str(path)))


def test_a_block_is_parsed_into_one_chunk(tmp_path: Path) -> None:
    rows = [{"a": n, "text": "x" * 1000} for n in range(6_000)]  # 6 MB: more than 4 MB
    path = _lines(tmp_path / "rows.jsonl", rows)
    (table,) = list(jsonl_blocks(str(path)))
    assert table.num_rows == 6_000
    assert {column.num_chunks for column in table.columns} == {1}


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own priority is Linux's")
def test_threads_that_work_ahead_give_way_to_the_thread_that_waits() -> None:
    def nice(_: int) -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    main = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert set(in_order(nice, range(4), threads=2)) == {min(19, main + 10)}
    assert list(read_ahead(nice(n) for n in range(2))) == [min(19, main + 10)] * 2
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main  # unchanged


def _hellaswag_rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in JSONL.read_text(encoding="utf-8").splitlines()]


def _in_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, object]]
) -> Path:
    """``rows`` as a JSON Lines file that is read in several blocks."""
    monkeypatch.setattr(_jsonl, "BLOCK_BYTES", 1 << 10)
    return _lines(tmp_path / "hellaswag.jsonl", rows)


def _same_as_eager(path: Path, out: Path) -> None:
    """The streamed writers give what the eager load gives: table, rejects, record's schema."""
    eager = load_hellaswag(data_files=str(path), on_error="skip")
    converted = convert_to_files(stream("hellaswag", data_files=str(path), on_error="skip"), out)
    assert converted.output is not None
    assert pq.read_table(out).equals(eager.table)
    assert converted.summary.rows_in == eager.table.num_rows + len(eager.rejects)
    write_parquet(eager, out.with_suffix(".eager.parquet"))
    record, expected = read_record(out), read_record(out.with_suffix(".eager.parquet"))
    assert record is not None and expected is not None
    assert arrow_schema(record.schema or "") == arrow_schema(expected.schema or "")


@pytest.mark.parametrize(
    "first, later",
    [
        ({"label": None}, {}),  # the first block has no label: its rows are rejects, not an error
        ({"when": "2020-01-01 00:00:00"}, {"when": "unknown"}),  # dates, until they are not
        ({"meta": {}}, {"meta": {"a": 1}}),  # a struct with no fields, until it has one
    ],
    ids=["no-label-at-first", "text-like-dates", "empty-struct"],
)
def test_a_guess_that_fails_the_conversion_is_read_again(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    first: dict[str, object],
    later: dict[str, object],
) -> None:
    rows = _hellaswag_rows()
    head = [
        {
            key: value
            for key, value in {**row, **first}.items()
            if value is not None or key != "label"
        }
        for row in rows[:4]
    ]
    path = _in_blocks(tmp_path, monkeypatch, [*head, *({**row, **later} for row in rows[4:])])
    _same_as_eager(path, tmp_path / "out.parquet")


def test_the_record_has_the_types_of_the_pass_that_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _hellaswag_rows()
    scores = [{**row, "score": 1} for row in rows[:6]] + [{**row, "score": 1.5} for row in rows[6:]]
    path = _in_blocks(tmp_path, monkeypatch, scores)
    _same_as_eager(path, tmp_path / "out.parquet")


def test_a_stream_cut_short_has_the_whole_files_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _hellaswag_rows()
    path = _in_blocks(tmp_path, monkeypatch, [*rows[:-1], {**rows[-1], "score": 0.5}])
    write_parquet(stream("hellaswag", data_files=str(path)).take(3), tmp_path / "three.parquet")
    three = pq.read_table(tmp_path / "three.parquet")
    assert three.num_rows == 3
    assert three.schema.field("extra").type.field("score").type == pa.float64()


def test_no_thread_reads_the_source_after_a_conversion_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _hellaswag_rows()
    path = _in_blocks(tmp_path, monkeypatch, [*rows[:-1], {**rows[-1], "label": 9}])
    before = set(threading.enumerate())
    with pytest.raises(ValueError, match=r"row 11, column 'label'"):
        convert_to_files(stream("hellaswag", data_files=str(path)), tmp_path / "out.parquet")
    readers = ("sdvm_hf-parse", "sdvm_hf-read-ahead")  # the hash reads with read(): no map
    left = [t.name for t in set(threading.enumerate()) - before if t.name.startswith(readers)]
    assert left == []
