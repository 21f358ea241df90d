"""The cold path's second round (issue #19): the same output, fewer passes and copies.

- the UTF-8 check looks at a batch's own rows only (a slice of a row group used to validate
  the group's whole shared child array once per batch): the same problems as the whole-array
  check it replaces, on random, damaged and sliced tables (the check is ``_rules.py``'s);
- the vectorised pass reads a one-chunk column as it is instead of combining (copying) it:
  the same samples and rejects as with the copies, on random damaged tables;
- the source files are hashed in a thread beside the conversion: the same digests;
- local streams read their next batch in a thread: the same batches, errors where they were.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdvm_hf
from sdvm_hf.arrow._rules import utf8_problems
from sdvm_hf.convert import _table
from sdvm_hf.errors import Problem
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.record import file_entries_in_background, file_entry, read_record
from sdvm_hf.sources._ahead import read_ahead

FIXTURES = Path(__file__).parent / "fixtures"
HELLASWAG = pq.read_table(FIXTURES / "hellaswag" / "validation.parquet")
MMLU_PRO = pq.read_table(FIXTURES / "mmlu" / "mmlu_pro.parquet")  # row 6 is a bad row


# -- the UTF-8 check ----------------------------------------------------------------------


def _old_utf8_problems(table: pa.Table) -> list[Problem]:
    """The check before: the whole table validated, then a failing column row by row."""
    try:
        table.validate(full=True)
        return []
    except pa.ArrowInvalid:
        pass
    problems = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        try:
            column.validate(full=True)
            continue
        except pa.ArrowInvalid:
            pass
        for row in range(len(column)):
            try:
                column.slice(row, 1).to_pylist()
            except UnicodeDecodeError:
                problems.append(
                    Problem(row, (name,), "UTF-8 text", "bytes that are not UTF-8", kind="not_utf8")
                )
    return sorted(problems, key=lambda problem: problem.row)


_TEXT = st.one_of(
    st.none(),
    st.text(max_size=6).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"\xff", b"ok\xfe", b"\xc3", b"caf\xc3\xa9"]),
)


@st.composite
def _tables(draw: st.DrawFn) -> pa.Table:
    """Text, a list of text and a struct of text, some bytes not UTF-8, in a few chunks."""
    n = draw(st.integers(1, 12))
    flat = draw(st.lists(_TEXT, min_size=n, max_size=n))
    lists = draw(
        st.lists(st.one_of(st.none(), st.lists(_TEXT, max_size=3)), min_size=n, max_size=n)
    )
    inner = draw(st.lists(_TEXT, min_size=n, max_size=n))
    text = pa.array(flat, pa.binary()).view(pa.string())
    values = [value for row in lists for value in (row or [])]
    offsets, at = [0], 0
    for row in lists:
        at += len(row or [])
        offsets.append(at)
    listed = pa.ListArray.from_arrays(
        pa.array(offsets, pa.int32()),
        pa.array(values, pa.binary()).view(pa.string()),
        mask=pa.array([row is None for row in lists]),
    )
    struct = pa.StructArray.from_arrays(
        [pa.array(inner, pa.binary()).view(pa.string()), pa.array(range(n), pa.int64())],
        names=["a", "b"],
    )
    whole = pa.table({"text": text, "listed": listed, "struct": struct})
    # chunks that are slices of the same arrays, as the Parquet reader gives them
    cuts = sorted(set(draw(st.lists(st.integers(1, n), max_size=3))) | {n})
    batches, start = [], 0
    for cut in cuts:
        batches += whole.slice(start, cut - start).to_batches()
        start = cut
    table = pa.Table.from_batches(batches, schema=whole.schema)
    first = draw(st.integers(0, n - 1))
    return table.slice(first, draw(st.integers(0, n - first)))


@given(table=_tables())
@settings(max_examples=300)
def test_the_utf8_check_finds_what_the_whole_array_check_found(table: pa.Table) -> None:
    assert utf8_problems(table) == _old_utf8_problems(table)


def test_a_batch_of_a_row_group_is_checked_by_its_own_rows() -> None:
    """A slice of a list column holds the whole child array: bad bytes outside it are not its."""
    values = pa.array([b"fine", b"\xff", b"also fine"], pa.binary()).view(pa.string())
    lists = pa.ListArray.from_arrays(pa.array([0, 1, 2, 3], pa.int32()), values)
    batch = pa.table({"endings": lists}).slice(2)
    assert utf8_problems(batch) == []
    assert [p.row for p in utf8_problems(pa.table({"endings": lists}))] == [1]


# -- the pass reads one-chunk columns as they are -------------------------------------------


@st.composite
def _damaged(draw: st.DrawFn) -> tuple[str, pa.Table]:
    source = draw(st.sampled_from(["hellaswag", "mmlu"]))
    raw = HELLASWAG if source == "hellaswag" else MMLU_PRO
    rows = raw.to_pylist()
    for row in draw(st.lists(st.integers(0, len(rows) - 1), max_size=6)):
        kind = draw(st.integers(0, 3))
        record = rows[row]
        if source == "hellaswag":
            if kind == 0:
                record["label"] = draw(st.sampled_from(["9", "", "x", "-1"]))
            elif kind == 1:
                record["ctx"] = draw(st.sampled_from(["", "   ", None]))
            elif kind == 2:
                record["endings"] = [record["endings"][0], None, "b", "c"]
            else:
                record["endings"] = ["only one"]
        elif kind == 0:
            record["answer"] = draw(st.sampled_from([None, "Z", "7"]))
            record["answer_index"] = draw(st.sampled_from([None, -1, 99]))
        elif kind == 1:
            record["question"] = draw(st.sampled_from(["", " ", None]))
        else:
            record["options"] = draw(st.sampled_from([["a"], [None, "b"], []]))
    table = pa.Table.from_pylist(rows, schema=raw.schema)
    copies = draw(st.integers(1, 3))
    chunk = draw(st.integers(3, 40))
    whole = pa.concat_tables([table] * copies).combine_chunks()
    batches = [
        b for s in range(0, whole.num_rows, chunk) for b in whole.slice(s, chunk).to_batches()
    ]
    return source, pa.Table.from_batches(batches, schema=whole.schema)


@given(case=_damaged(), start=st.integers(0, 5), batch=st.sampled_from([7, 16, 65_536]))
@settings(max_examples=60, deadline=None)
def test_reading_columns_as_they_are_gives_the_copies_output(
    case: tuple[str, pa.Table], start: int, batch: int
) -> None:
    from sdvm_hf.sources import _convert

    preset, table = case
    table = table.slice(start)
    mapping = PRESETS[preset].mapping(table.column_names)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_convert, "BATCH_ROWS", batch)
        ours = _convert.convert_handed([table], mapping, "test", "skip", first_row=start)
        patch.setattr(_table, "one_array", lambda column: column.combine_chunks())
        before = _convert.convert_handed([table], mapping, "test", "skip", first_row=start)
    assert ours.table.schema == before.table.schema
    assert ours.table.equals(before.table)
    assert list(ours.rejects) == list(before.rejects)


def test_a_batch_of_a_row_group_is_converted_without_copying_its_columns() -> None:
    table = pa.concat_tables([HELLASWAG] * 4).combine_chunks()
    part = table.slice(10, 50)
    mapping = PRESETS["hellaswag"].mapping(table.column_names)
    samples, _ = _table.sample_rows(mapping, part)
    choices = samples.column("choices").chunk(0)
    assert (
        choices.values.buffers()[2].address
        == table.column("endings").chunk(0).values.buffers()[2].address
    )
    ctx_a = samples.column("extra").chunk(0).field("ctx_a")
    assert ctx_a.buffers()[2].address == table.column("ctx_a").chunk(0).buffers()[2].address


# -- the hash in a thread -------------------------------------------------------------------


def test_the_hash_in_a_thread_is_hashlibs(tmp_path: Path) -> None:
    files = []
    for n, size in enumerate([0, 1, (1 << 20) + 7, 3 << 20]):
        path = tmp_path / f"f{n}.bin"
        path.write_bytes(bytes((i * 31 + n) % 251 for i in range(size)))
        files.append(path)
    entries = file_entries_in_background(files)()
    assert entries == [file_entry(path) for path in files]
    for entry, path in zip(entries, files, strict=True):
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert entry["bytes"] == path.stat().st_size


def test_a_file_gone_before_it_is_hashed_is_an_error_to_the_waiting_caller(tmp_path: Path) -> None:
    wait = file_entries_in_background([tmp_path / "missing.parquet"])
    with pytest.raises(FileNotFoundError):
        wait()


def test_a_written_load_records_the_hash_of_its_source(tmp_path: Path) -> None:
    source = FIXTURES / "hellaswag" / "validation.parquet"
    want = hashlib.sha256(source.read_bytes()).hexdigest()
    for streaming in (False, True):
        out = tmp_path / f"out-{streaming}.parquet"
        load = sdvm_hf.stream if streaming else sdvm_hf.load
        sdvm_hf.write_parquet(load("hellaswag", data_files=source), out)
        record = read_record(out)
        assert record is not None
        assert record.source["files"] == [
            {"path": str(source.resolve()), "bytes": source.stat().st_size, "sha256": want}
        ]


def test_an_eager_load_hashes_its_files_once_the_read_is_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The read keeps every core busy; the hash waits for it, and runs beside the conversion."""
    import sdvm_hf.sources._origin as origin
    import sdvm_hf.sources.loaders as loaders

    events: list[str] = []
    real_read = getattr(loaders, "load_table")  # noqa: B009 (patched where the loader looks)
    real_hash = getattr(origin, "file_entries_in_background")  # noqa: B009

    def reading(*args: Any, **kwargs: Any) -> Any:
        events.append("read begins")
        loaded = real_read(*args, **kwargs)
        events.append("read ends")
        return loaded

    def hashing(paths: Any) -> Any:
        events.append("hash begins")
        return real_hash(paths)

    monkeypatch.setattr(loaders, "load_table", reading)
    monkeypatch.setattr(origin, "file_entries_in_background", hashing)
    source = FIXTURES / "mmlu" / "cais_test.parquet"
    samples = sdvm_hf.load("mmlu", data_files=source)
    assert events == ["read begins", "read ends", "hash begins"]
    assert samples.provenance is not None
    assert samples.provenance().source["files"][0]["bytes"] == source.stat().st_size


# -- reading ahead ----------------------------------------------------------------------------


def test_read_ahead_gives_every_item_in_order() -> None:
    assert list(read_ahead(iter(range(100)))) == list(range(100))
    assert list(read_ahead(iter([]))) == []


def test_an_error_while_reading_ahead_comes_where_its_item_would_have() -> None:
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("row group 3 is damaged")

    got = []
    with pytest.raises(ValueError, match="row group 3"):
        for item in read_ahead(items()):
            got.append(item)
    assert got == [1, 2]


def test_closing_a_read_ahead_early_stops_its_thread() -> None:
    closed = threading.Event()

    def items() -> Iterator[int]:
        try:
            n = 0
            while True:
                yield n
                n += 1
        finally:
            closed.set()

    stream = read_ahead(items())
    assert [next(stream) for _ in range(3)] == [0, 1, 2]
    stream.close()
    assert closed.wait(5)
    time.sleep(0.1)
    assert not any(t.name == "sdvm_hf-read-ahead" and t.is_alive() for t in threading.enumerate())


def test_a_stream_taken_early_reads_no_further() -> None:
    source = FIXTURES / "hellaswag" / "validation.parquet"
    taken = list(sdvm_hf.stream("hellaswag", data_files=source).take(3))
    assert [s.to_dict() for s in taken] == [
        s.to_dict() for s in sdvm_hf.load_hellaswag(data_files=source)[:3]
    ]


def test_the_worker_threads_leave_ctrl_c_and_sigterm_to_the_main_thread(tmp_path: Path) -> None:
    """A signal delivered to a worker would be handled inside the main thread's held block."""
    import signal

    masks: list[set[int | signal.Signals]] = []

    def items() -> Iterator[int]:
        masks.append(signal.pthread_sigmask(signal.SIG_BLOCK, []))
        yield 1

    assert list(read_ahead(items())) == [1]
    assert {signal.SIGINT, signal.SIGTERM} <= masks[0]
    assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    path = tmp_path / "f.bin"
    path.write_bytes(b"x")
    import sdvm_hf.record as record

    seen: list[set[int | signal.Signals]] = []
    real = record.file_entry

    def spying(file: str | Path) -> dict[str, object]:
        seen.append(signal.pthread_sigmask(signal.SIG_BLOCK, []))
        return real(file)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(record, "file_entry", spying)
        file_entries_in_background([path])()
    assert {signal.SIGINT, signal.SIGTERM} <= seen[0]
