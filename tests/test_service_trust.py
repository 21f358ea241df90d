"""Issue #18: no paid answer lost, no part file trusted blindly, no secret echoed.

Against the local stand-in on 127.0.0.1, with the real SDK (Python >= 3.12).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.files import read_parquet, read_samples, write_parquet
from sdvm_hf.presets.hellaswag import load_hellaswag
from sdvm_hf.service.roundtrip import Retry, ServiceError, run_stage

if sys.version_info < (3, 12):
    pytest.skip(
        "the sdvm SDK needs Python >= 3.12; CI runs these under 3.12", allow_module_level=True
    )
pytest.importorskip("sdvm", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'")

from service_stub import StubService
from test_service import CLI, CONVENTIONS, FAST, KEY, RESUME  # one set of stand-in settings

from sdvm_hf.cli import main

LOGGER = "sdvm_hf.service.roundtrip"


@pytest.fixture(scope="module")
def samples() -> SampleSequence:
    return load_hellaswag(bundled=True)


@pytest.fixture(scope="module")
def many(samples: SampleSequence) -> SampleSequence:
    """1,000 samples: ten full requests."""
    return SampleSequence(pa.concat_tables([samples.table] * 4).slice(0, 1000))


def run(
    stub: StubService, samples: SampleSequence, out: Path, stage: Any = "audit", **kw: Any
) -> SampleSequence:
    options: dict[str, Any] = {"retry": FAST, "conventions": CONVENTIONS, **kw}
    return run_stage(samples, stage, out, api_key=KEY, base_url=stub.url, **options)


def first_rows(stub: StubService) -> list[int]:
    return [r["rows"][0] for r in stub.requests]


def parts_folder(out: Path) -> Path:
    return out.with_name(out.name + ".parts")


def parts_of(out: Path, size: int = 100) -> set[int]:
    """The first rows of the batches finished in ``OUT.parts/``."""
    return {int(p.stem.split("-")[1]) * size for p in parts_folder(out).glob("batch-*.parquet")}


def answered_batches(stub: StubService, size: int = 100) -> set[int]:
    """The first rows of the batches the stand-in answered well."""
    return {row - row % size for row in stub.answered_rows}


def interrupted(samples: SampleSequence, out: Path, **kw: Any) -> None:
    """Run until batches 0 and 1 are finished, then stop at batch 2 (a refused key)."""
    with StubService(batch_faults={200: ["401"]}) as stub, pytest.raises(ServiceError):
        run(stub, samples, out, concurrency=1, **kw)
    assert parts_of(out) == {0, 100}


def rewrite(part: Path, change: Any) -> None:
    """Rewrite a part through ``change(table) -> table``, keeping its key-value metadata."""
    table = pq.read_table(part)
    pq.write_table(change(table).replace_schema_metadata(table.schema.metadata), part)


def with_value(table: pa.Table, column: str, row: int, value: Any) -> pa.Table:
    values = table.column(column).to_pylist()
    values[row] = value
    index = table.schema.get_field_index(column)
    return table.set_column(index, table.field(index), pa.array(values, table.field(index).type))


# -- 1. a part is reused only when it holds exactly its batch --------------------------------


DAMAGE = {
    "a row dropped": lambda t: t.slice(1),
    "the last row dropped": lambda t: t.slice(0, t.num_rows - 1),
    "an answer edited": lambda t: with_value(
        t, "answer_index", 3, (t.column("answer_index")[3].as_py() + 1) % 4
    ),
    "a verdict edited": lambda t: with_value(t, "audit", 7, '{"grammar": false}'),
    "a context edited": lambda t: with_value(t, "context", 0, "Edited."),
    "two rows swapped": lambda t: t.take([1, 0, *range(2, t.num_rows)]),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_part_that_no_longer_holds_its_batch_is_named_and_sent_again(
    samples: SampleSequence, tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    whole = tmp_path / "whole.parquet"
    with StubService() as stub:
        run(stub, samples, whole)
    out = tmp_path / "out.parquet"
    interrupted(samples, out)
    part = parts_folder(out) / "batch-000001.parquet"
    rewrite(part, DAMAGE[damage])
    with StubService() as again, caplog.at_level(logging.WARNING, logger=LOGGER):
        run(again, samples, out)
    assert sorted(first_rows(again)) == [100, 200]
    assert pq.read_table(out).equals(pq.read_table(whole), check_metadata=True)
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(str(part)) and warning.endswith(
        "; sending batch 1 again (the part is replaced)"
    )


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda raw: b"", "cannot be read"),
        (lambda raw: raw[: len(raw) // 2], "cannot be read"),
        (lambda raw: raw[:-9], "cannot be read"),
        (lambda raw: b"PAR1" + b"\0" * 100 + b"PAR1", "cannot be read"),
    ],
    ids=["zero bytes", "half", "footer cut", "garbage"],
)
def test_a_part_that_cannot_be_read_is_named_and_replaced(
    samples: SampleSequence,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    damage: Any,
    why: str,
) -> None:
    out = tmp_path / "out.parquet"
    interrupted(samples, out)
    part = parts_folder(out) / "batch-000000.parquet"
    part.write_bytes(damage(part.read_bytes()))
    with StubService() as again, caplog.at_level(logging.WARNING, logger=LOGGER):
        result = run(again, samples, out)
    assert sorted(first_rows(again)) == [0, 200]
    assert len(result) == len(samples)
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(f"{part} {why} (")
    assert warning.endswith("; sending batch 0 again (the part is replaced)")


# -- the property: any damage to any part, and the resumed output is exact --------------------

SIZE = 10
"""Rows per batch in the property test: three batches of 30 rows keep each example quick."""


@pytest.fixture(scope="module")
def finished_parts(
    samples: SampleSequence, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[StubService, SampleSequence, Path, pa.Table]]:
    """A stand-in, 30 samples, their three finished parts, and the output of a whole run."""
    small = samples[:30]
    folder = tmp_path_factory.mktemp("property")
    with StubService() as stub:
        run(stub, small, folder / "whole.parquet", batch_size=SIZE)
        expected = pq.read_table(folder / "whole.parquet")

        def stop_at_the_end(number: int) -> None:
            if number == 2:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            run(stub, small, folder / "out.parquet", batch_size=SIZE, on_batch=stop_at_the_end)
        assert parts_of(folder / "out.parquet", SIZE) == {0, 10, 20}
        yield stub, small, parts_folder(folder / "out.parquet"), expected


def _damaged(kind: str, raw: bytes, table: pa.Table, row: int, cut: int) -> bytes | None:
    """The part's new bytes (``None``: removed), for one kind of damage."""
    row = row % table.num_rows
    if kind == "zero bytes":
        return b""
    if kind == "truncated":
        return raw[: cut % len(raw)]
    if kind == "removed":
        return None
    if kind == "row dropped":
        changed = table.take([i for i in range(table.num_rows) if i != row])
    elif kind == "row duplicated":
        changed = table.take([*range(table.num_rows), row])
    elif kind == "answer edited":
        answer = table.column("answer_index")[row].as_py()
        changed = with_value(table, "answer_index", row, (answer + 1) % 4)
    elif kind == "context edited":
        changed = with_value(table, "context", row, table.column("context")[row].as_py() + "!")
    elif kind == "verdict removed":
        changed = with_value(table, "audit", row, None)
    else:  # "extra edited"
        extra = table.column("extra")[row].as_py()
        changed = with_value(table, "extra", row, {**extra, "activity_label": "Edited"})
    sink = pa.BufferOutputStream()
    pq.write_table(changed.replace_schema_metadata(table.schema.metadata), sink)
    written: bytes = sink.getvalue().to_pybytes()
    return written


KINDS = [
    "zero bytes",
    "truncated",
    "removed",
    "row dropped",
    "row duplicated",
    "answer edited",
    "context edited",
    "verdict removed",
    "extra edited",
]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    damage=st.dictionaries(
        st.integers(0, 2),
        st.tuples(st.sampled_from(KINDS), st.integers(0, 9), st.integers(0, 10**6)),
    )
)
def test_a_resume_from_randomly_damaged_parts_writes_the_exact_output(
    finished_parts: tuple[StubService, SampleSequence, Path, pa.Table],
    tmp_path_factory: pytest.TempPathFactory,
    damage: dict[int, tuple[str, int, int]],
) -> None:
    stub, small, template, expected = finished_parts
    out = tmp_path_factory.mktemp("resume") / "out.parquet"
    shutil.copytree(template, parts_folder(out))
    for number, (kind, row, cut) in damage.items():
        part = parts_folder(out) / f"batch-{number:06d}.parquet"
        raw = part.read_bytes()
        new = _damaged(kind, raw, pq.read_table(part), row, cut)
        if new is None:
            part.unlink()
        else:
            part.write_bytes(new)
    before = len(stub.requests)
    result = run(stub, small, out, batch_size=SIZE)
    assert pq.read_table(out).equals(expected, check_metadata=True)
    # in memory, a list's item is named as the input names it (a file names it "element")
    assert result.table.cast(expected.schema).equals(expected)
    assert result.table.schema.metadata == expected.schema.metadata
    assert sorted(first_rows(stub)[before:]) == sorted(n * SIZE for n in damage)
    assert not parts_folder(out).exists()


# -- 2. an audit may not change what it rates --------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "field"), [("context-changed", "context"), ("answer-changed", "answer_index")]
)
def test_an_audit_answer_with_a_core_field_changed_is_malformed(
    samples: SampleSequence, tmp_path: Path, fault: str, field: str
) -> None:
    out = tmp_path / "out.parquet"
    with (
        StubService(batch_faults={100: [fault]}) as stub,
        pytest.raises(
            ServiceError,
            match=rf"^batch 1 \(rows 100..199\): malformed response: row 100 came back with "
            rf"its {field} changed \(an audit only rates; fix or refine change samples\); "
            rf"{RESUME}$",
        ),
    ):
        run(stub, samples, out, concurrency=1)
    assert 100 not in parts_of(out)
    with StubService() as again:
        result = run(again, samples, out)
    assert 100 in first_rows(again)
    assert result.table.column(field).equals(samples.table.column(field))


def test_fix_may_change_the_core_fields(samples: SampleSequence, tmp_path: Path) -> None:
    with StubService(batch_faults={0: ["context-changed"]}) as stub:
        result = run(stub, samples[:5], tmp_path / "out.parquet", "fix")
    assert result[0].context.endswith(" Edited.")


# -- 3. a stop drains: the answers already paid for are kept ---------------------------------


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("short", r"malformed response: sent 100 samples, got 99"),
        ("truncated", r"malformed response \(JSONDecodeError: "),
        ("duplicate", r"malformed response: a sample without a row id of its own"),
        ("402", r"the account has no credits left \(HTTP 402\)"),
        ("401", r"the service refused the API key \(HTTP 401\)"),
    ],
)
def test_a_stop_sends_nothing_new_and_keeps_the_answers_in_flight(
    many: SampleSequence, tmp_path: Path, fault: str, message: str
) -> None:
    out = tmp_path / "out.parquet"
    late = {row: ["late-ok"] for row in (100, 200, 300)}
    with (
        StubService(batch_faults={0: [fault], **late}) as stub,
        pytest.raises(ServiceError, match=rf"^batch 0 \(rows 0..99\): {message}"),
    ):
        run(stub, many, out, concurrency=4)
    assert sorted(first_rows(stub)) == [0, 100, 200, 300]  # nothing sent after the stop
    assert parts_of(out) == {100, 200, 300} == answered_batches(stub)
    with StubService() as again:
        result = run(again, many, out, concurrency=4)
    assert sorted(first_rows(again)) == [0, *range(400, 1000, 100)]  # exactly the unanswered
    assert result.table.column("context").equals(many.table.column("context"))
    assert all(sample.audit is not None for sample in result)


def test_an_on_batch_that_stops_the_run_drains_too(many: SampleSequence, tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"

    def stop(number: int) -> None:
        if number == 0:
            raise KeyboardInterrupt

    late = {row: ["late-ok"] for row in (100, 200, 300)}
    with StubService(batch_faults=late) as stub, pytest.raises(KeyboardInterrupt):
        run(stub, many, out, concurrency=4, on_batch=stop)
    # requests sent while batch 0 was being written were in flight at the stop: all kept
    assert parts_of(out) == answered_batches(stub) == set(first_rows(stub))
    assert {0, 100, 200, 300} <= parts_of(out)


def _audit_child(source: Path, out: Path, url: str, *extra: str) -> subprocess.Popen[str]:
    command = ["audit", str(source), "-o", str(out), "--base-url", url, *extra]
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *command],
        env={**os.environ, "SDVM_API_KEY": KEY},
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _wait_for(condition: Any, child: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not condition() and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.01)
    assert condition(), "the condition never held"


def test_a_first_ctrl_c_waits_for_the_answers_in_flight_and_keeps_them(
    samples: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    write_parquet(samples, source)
    with StubService(delay=0.5) as stub:
        child = _audit_child(source, out, stub.url, "--concurrency", "2")
        _wait_for(lambda: stub.in_flight == 2, child)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert sorted(first_rows(stub)) == [0, 100]  # batch 2 was never sent
    assert parts_of(out) == {0, 100} == answered_batches(stub)
    monkeypatch.setenv("SDVM_API_KEY", KEY)
    with StubService() as again:
        assert main(["audit", str(source), "-o", str(out), "--base-url", again.url]) == 0
    assert first_rows(again) == [200]


def test_a_second_ctrl_c_stops_at_once(samples: SampleSequence, tmp_path: Path) -> None:
    source, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    write_parquet(samples, source)
    with StubService(delay=120) as stub:  # the answers would come only after the test's end
        child = _audit_child(source, out, stub.url, "--concurrency", "2")
        _wait_for(lambda: stub.in_flight == 2, child)
        child.send_signal(signal.SIGINT)
        time.sleep(0.5)  # the first is being handled: the run is waiting for the answers
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert parts_of(out) == set()
    assert not parts_folder(out).exists()
    assert stderr.splitlines()[-1] == "sdvm-hf audit: interrupted; rerun the same command to resume"


def test_sigterm_exits_143(samples: SampleSequence, tmp_path: Path) -> None:
    source, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    write_parquet(samples, source)
    with StubService(delay=120) as stub:
        child = _audit_child(source, out, stub.url)
        _wait_for(lambda: stub.in_flight >= 1, child)
        child.send_signal(signal.SIGTERM)
        _, stderr = child.communicate(timeout=60)
    assert child.returncode == 143, stderr
    assert stderr.splitlines()[-1] == "sdvm-hf audit: terminated; rerun the same command to resume"


# -- 4. the key and the address, checked before any request ------------------------------------


@pytest.mark.parametrize(
    ("key", "what"),
    [
        (KEY + "\r", r"a control character or space \('\\r'\) at position 23 of 23"),
        (KEY + "\n", r"a control character or space \('\\n'\) at position 23 of 23"),
        (" " + KEY, r"a control character or space \(' '\) at position 1 of 23"),
        (
            "sk-tést",
            r"a non-ASCII character \(LATIN SMALL LETTER E WITH ACUTE\) at position 5 of 7",
        ),
        ("sk-\u00a0x", r"a non-ASCII character \(NO-BREAK SPACE\) at position 4 of 5"),
    ],
)
def test_a_key_no_header_can_carry_is_refused_before_any_request_and_not_echoed(
    samples: SampleSequence, tmp_path: Path, key: str, what: str
) -> None:
    with StubService() as stub, pytest.raises(ServiceError, match=what) as caught:
        run_stage(samples[:5], "audit", tmp_path / "o.parquet", api_key=key, base_url=stub.url)
    assert stub.requests == []
    assert key.strip() not in str(caught.value) and "sk-" not in str(caught.value)
    assert not (tmp_path / "o.parquet.lock").exists()


def test_the_command_never_echoes_a_key_with_a_line_ending(
    samples: SampleSequence,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    write_parquet(samples[:5], tmp_path / "in.parquet")
    monkeypatch.setenv("SDVM_API_KEY", KEY + "\r")
    with StubService() as stub:
        args = ["audit", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "o.parquet")]
        assert main([*args, "--base-url", stub.url], retry=FAST) == 2
    captured = capsys.readouterr()
    assert stub.requests == []
    assert KEY not in captured.out + captured.err + caplog.text
    assert len(captured.err.splitlines()) == 1


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://[::1", r"the service address 'http://\[::1' \(from --base-url\) is malformed"),
        ("ftp://example.org", r"the service address 'ftp://example.org' \(from --base-url\): "),
        ("notaurl", r"the service address 'notaurl' \(from --base-url\): expected http://"),
        ("http://localhost:port", r"'http://localhost:port' \(from --base-url\) is malformed"),
    ],
)
def test_a_malformed_address_is_one_line_and_never_retried(
    samples: SampleSequence,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
    message: str,
) -> None:
    waits: list[float] = []
    write_parquet(samples[:5], tmp_path / "in.parquet")
    monkeypatch.setenv("SDVM_API_KEY", KEY)
    args = ["audit", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "o.parquet")]
    retry = Retry(backoff=0.01, sleep=waits.append)
    assert main([*args, "--base-url", url], retry=retry) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("sdvm-hf audit: ")
    with pytest.raises(ServiceError, match=message.replace("--base-url", "base_url")):
        run_stage(samples[:5], "audit", tmp_path / "o.parquet", api_key=KEY, base_url=url)
    assert waits == []


def test_an_address_from_the_environment_is_named_as_such(
    samples: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDVM_BASE_URL", "notaurl")
    with pytest.raises(ServiceError, match=r"'notaurl' \(from SDVM_BASE_URL\)"):
        run_stage(samples[:5], "audit", tmp_path / "o.parquet", api_key=KEY)


def test_a_refused_connection_names_the_address(samples: SampleSequence, tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(
        ServiceError,
        match=rf"^batch 0 \(rows 0..4\): cannot connect to {url} \(.*\), 3 times; {RESUME}$",
    ):
        run_stage(
            samples[:5], "audit", tmp_path / "o.parquet", api_key=KEY, base_url=url, retry=FAST
        )


def test_an_answer_that_cannot_change_on_retry_stops_at_once(
    samples: SampleSequence, tmp_path: Path
) -> None:
    with (
        StubService(faults=["404"]) as stub,
        pytest.raises(ServiceError, match=r"the service answered HTTP 404: Not Found; "),
    ):
        run(stub, samples[:5], tmp_path / "o.parquet")
    assert len(stub.requests) == 1


# -- 5. one run per output -------------------------------------------------------------------


def test_a_second_run_on_the_same_output_stops_at_once_naming_the_first(
    samples: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "out.parquet"
    outcome: list[Any] = []
    with StubService(delay=0.5) as stub:
        first = threading.Thread(target=lambda: outcome.append(run(stub, samples, out)))
        first.start()
        deadline = time.monotonic() + 60
        while not stub.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        with StubService() as second:
            with pytest.raises(
                ServiceError,
                match=rf"^{out} is being written by another run \(PID {os.getpid()}, started "
                rf"\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC; lock {out}.lock\); wait for it to "
                "finish or stop it, then rerun$",
            ):
                run(second, samples, out)
            assert second.requests == []
        first.join(60)
    assert len(outcome) == 1 and len(outcome[0]) == len(samples)
    assert sorted(first_rows(stub)) == [0, 100, 200]
    assert not out.with_name("out.parquet.lock").exists()
    assert not parts_folder(out).exists()


def test_a_stale_lock_of_a_dead_process_is_taken_over(
    samples: SampleSequence, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "out.parquet"
    lock = tmp_path / "out.parquet.lock"
    lock.write_text(f'{{"pid": {dead.pid}, "started": 0}}')
    with StubService() as stub, caplog.at_level(logging.WARNING, logger=LOGGER):
        result = run(stub, samples[:10], out)
    assert len(result) == 10
    assert not lock.exists()
    assert [r.getMessage() for r in caplog.records] == [
        f"taking over the stale lock {lock} (PID {dead.pid}, started 1970-01-01 00:00:00 UTC, "
        "no longer running)"
    ]


# -- 7. what comes through: metadata, a source's own sdvm_hf_row -------------------------------


def test_the_input_files_key_value_metadata_comes_through_unchanged(
    samples: SampleSequence, tmp_path: Path
) -> None:
    table = samples.table.slice(0, 150)
    record = {**(table.schema.metadata or {}), b"sdvm_hf.record": b'{"dataset": "hellaswag"}'}
    pq.write_table(table.replace_schema_metadata(record), tmp_path / "in.parquet")
    source = read_samples(tmp_path / "in.parquet")
    out = tmp_path / "out.parquet"
    interrupted_once = {100: ["401"]}  # a resumed run: one part read back, one made
    with StubService(batch_faults=interrupted_once) as stub, pytest.raises(ServiceError):
        run(stub, source, out, concurrency=1)
    with StubService() as again:
        run(again, source, out)
    written = dict(pq.read_schema(out).metadata or {})
    carried = json.loads(written.pop(b"sdvm_hf.record"))
    assert json.loads(written.pop(b"sdvm_hf.stage"))["rows"] == 150  # the output's own account
    assert written == {k: v for k, v in record.items() if k != b"sdvm_hf.record"}
    (stage,) = carried.pop("stages")  # the record gains the stage, naming its input
    assert carried["dataset"] == "hellaswag"
    assert stage["input"] == {"path": str((tmp_path / "in.parquet").resolve()), "rows": 150}
    assert stage["conventions"] == {"from": "hellaswag", "text": CONVENTIONS}


def test_a_source_column_named_like_the_row_id_comes_back_untouched(
    samples: SampleSequence, tmp_path: Path
) -> None:
    table = samples.table.slice(0, 120)
    extra = table.column("extra").combine_chunks()
    own = pa.array([f"source-{i}" for i in range(len(extra))])
    fields = [*extra.type, pa.field("sdvm_hf_row", pa.string())]
    with_row = pa.StructArray.from_arrays([*extra.flatten(), own], fields=fields)
    table = table.set_column(table.schema.get_field_index("extra"), "extra", with_row)
    write_parquet(table, tmp_path / "in.parquet")
    source = read_parquet(tmp_path / "in.parquet")
    with StubService() as stub:
        result = run(stub, source, tmp_path / "out.parquet")
    assert [s.extra["sdvm_hf_row"] for s in result] == own.to_pylist()
    assert all(s.audit is not None for s in result)
    assert sorted(r["size"] for r in stub.requests) == [20, 100]
