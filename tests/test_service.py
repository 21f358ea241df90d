"""The SDVM round trip against a local stand-in, with the real SDK (Python >= 3.12)."""

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import PRESETS, SampleSequence, load_hellaswag, read_parquet, write_parquet
from sdvm_hf.cli import main
from sdvm_hf.service import Retry, ServiceError, roundtrip, run_stage

if sys.version_info < (3, 12):
    pytest.skip(
        "the sdvm SDK needs Python >= 3.12; CI runs these under 3.12", allow_module_level=True
    )
pytest.importorskip("sdvm", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'")

from service_stub import StubService

KEY = "sk-test-secret-key-123"
CONVENTIONS = PRESETS["hellaswag"].conventions
FAST = Retry(rate_limited=3, transient=2, backoff=0.01)
CLI = "from sdvm_hf.cli import main; raise SystemExit(main())"
RESUME = "finished batches are kept; rerun the same command to resume"


@pytest.fixture
def samples() -> SampleSequence:
    return load_hellaswag(bundled=True)


@pytest.fixture
def many(samples: SampleSequence) -> SampleSequence:
    """1,000 samples: ten full requests."""
    return SampleSequence(pa.concat_tables([samples.table] * 4).slice(0, 1000))


def run(
    stub: StubService, samples: SampleSequence, out: Path, stage: Any = "audit", **kw: Any
) -> SampleSequence:
    options: dict[str, Any] = {"retry": FAST, "conventions": CONVENTIONS, **kw}
    return run_stage(samples, stage, out, api_key=KEY, base_url=stub.url, **options)


def first_rows(stub: StubService) -> list[int]:
    """The first row of each request, in the order they arrived."""
    return [r["rows"][0] for r in stub.requests]


def parts_of(out: Path) -> set[int]:
    """The first rows of the batches finished in ``OUT.parts/`` (batches of 100)."""
    folder = out.with_name(out.name + ".parts")
    return {int(p.stem.split("-")[1]) * 100 for p in folder.glob("batch-*.parquet")}


def assert_audited_copy(result: SampleSequence, source: SampleSequence) -> None:
    """``result`` holds ``source``'s rows in order, unchanged, each with an audit block."""
    assert len(result) == len(source)
    for before, after in zip(source, result, strict=True):
        assert type(after) is type(before)
        assert (after.context, after.choices, after.answer_index, after.extra) == (
            before.context,
            before.choices,
            before.answer_index,
            before.extra,
        )
        assert after.audit is not None


# -- the round trip --------------------------------------------------------------------------


def test_audit_round_trip_keeps_order_extra_and_types(
    samples: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "audited.parquet"
    with StubService() as stub:
        result = run(stub, samples, out)
    assert sorted(r["size"] for r in stub.requests) == [96, 100, 100]
    assert all(r["path"] == "/audit" and r["conventions"] == CONVENTIONS for r in stub.requests)
    assert sorted(stub.answered_rows) == list(range(296))
    audited = read_parquet(out)
    assert_audited_copy(audited, samples)
    assert len(result) == 296
    for after in audited:
        assert after.audit is not None and set(after.audit) == {
            "grammar",
            "complete",
            "answer_in_range",
        }
        assert after.fix is None and after.reaudit is None
    assert pq.read_schema(out).field("extra").type == samples.table.schema.field("extra").type
    assert pq.read_schema(out).field("extra").type.field("ind").type == pa.int32()
    kept = dict(pq.read_schema(out).metadata or {})
    assert set(json.loads(kept.pop(b"sdvm_hf.stage"))) == {
        "stage",
        "rows",
        "input",
        "conventions",
        "output",
    }
    assert kept == (samples.table.schema.metadata or {})
    assert not (tmp_path / "audited.parquet.parts").exists()


def test_fix_and_refine_write_their_blocks(samples: SampleSequence, tmp_path: Path) -> None:
    doubled = SampleSequence(
        samples.table.set_column(
            2,
            "context",
            pa.array(
                [c.replace(" ", "  ", 1) for c in samples.table.column("context").to_pylist()]
            ),
        )
    )
    with StubService() as stub:
        fixed = run(stub, doubled, tmp_path / "fixed.parquet", "fix")
        refined = run(stub, doubled, tmp_path / "refined.parquet", "refine")
    assert {r["path"] for r in stub.requests} == {"/fix", "/refine"}
    assert [s.context for s in fixed] == [
        " ".join(p for p in c.split(" ") if p) for c in doubled.table.column("context").to_pylist()
    ]
    assert all(s.fix is not None and s.fix["changes"] == ["collapsed spaces"] for s in fixed)
    assert all(s.audit is not None and s.fix is not None and s.reaudit is not None for s in refined)
    assert all(
        s.audit is not None
        and s.audit["grammar"] is False
        and s.reaudit is not None
        and s.reaudit["grammar"] is True
        for s in refined
    )


# -- retries and stops -----------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["429", "500", "drop"])
def test_transient_faults_are_retried(samples: SampleSequence, tmp_path: Path, fault: str) -> None:
    with StubService(batch_faults={100: [fault]}) as stub:
        result = run(stub, samples, tmp_path / "out.parquet")
    assert sorted(first_rows(stub)) == [0, 100, 100, 200]
    assert_audited_copy(result, samples)
    assert sorted(stub.answered_rows) == list(range(296))


def test_rate_limits_back_off_exponentially(samples: SampleSequence, tmp_path: Path) -> None:
    waits: list[float] = []
    retry = Retry(rate_limited=3, transient=2, backoff=0.01, sleep=waits.append)
    with StubService(faults=["429", "429", "429"]) as stub:
        run(stub, samples[:10], tmp_path / "out.parquet", retry=retry)
    assert waits == [0.01, 0.02, 0.04]


def test_a_429_storm_holds_every_worker_until_the_backoff_ends(
    many: SampleSequence, tmp_path: Path
) -> None:
    waits: list[tuple[float, int, int]] = []

    with StubService(faults=["429"] * 4, delay=0.05) as stub:

        async def sleep(seconds: float) -> None:
            arrived = len(stub.requests)
            await asyncio.sleep(0.1)
            waits.append((seconds, arrived, len(stub.requests)))

        result = run(
            stub,
            many,
            tmp_path / "out.parquet",
            concurrency=4,
            retry=Retry(backoff=0.01, sleep=sleep),
        )
    assert waits and all(before == after for _, before, after in waits), waits
    assert waits[0][0] == 0.01
    assert sorted(first_rows(stub)) == sorted([*range(0, 1000, 100), 0, 100, 200, 300])
    assert sorted(stub.answered_rows) == list(range(1000))
    assert_audited_copy(result, many)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            "401",
            r"batch 0 \(rows 0..99\): the service refused the API key \(HTTP 401\); check SDVM_API_KEY",
        ),
        ("402", r"the account has no credits left \(HTTP 402\)"),
    ],
)
def test_refused_key_and_no_credits_stop_at_once(
    samples: SampleSequence, tmp_path: Path, fault: str, message: str
) -> None:
    with (
        StubService(faults=[fault]) as stub,
        pytest.raises(ServiceError, match=message + f"; {RESUME}"),
    ):
        run(stub, samples, tmp_path / "out.parquet", concurrency=1)
    assert len(stub.requests) == 1
    assert not (tmp_path / "out.parquet").exists()
    assert not (tmp_path / "out.parquet.parts").exists()


def test_a_refusal_of_every_concurrent_request_leaves_no_parts_folder(
    samples: SampleSequence, tmp_path: Path
) -> None:
    with (
        StubService(faults=["401"] * 3) as stub,
        pytest.raises(ServiceError, match=r"\(HTTP 401\)"),
    ):
        run(stub, samples, tmp_path / "out.parquet", concurrency=4)
    assert stub.answered_rows == []
    assert not (tmp_path / "out.parquet.parts").exists()
    assert not any(p.name.startswith((".out", "out")) for p in tmp_path.iterdir())


def test_retries_run_out_with_a_message_naming_the_batch(
    samples: SampleSequence, tmp_path: Path
) -> None:
    with (
        StubService(batch_faults={100: ["500"] * 3}) as stub,
        pytest.raises(
            ServiceError,
            match=rf"batch 1 \(rows 100..199\): the service answered HTTP 500: internal error, 3 times; {RESUME}",
        ),
    ):
        run(stub, samples, tmp_path / "out.parquet")


# -- malformed answers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("malformed", r"malformed response \(KeyError: 'audited_data'\)"),
        ("short", r"malformed response: sent 100 samples, got 99"),
        ("duplicate", r"malformed response: a sample without a row id of its own \(100\)"),
        (
            "extra-changed",
            r"malformed response: row 100 came back with a top-level key that was not sent "
            r"\('stub_added'; only the audit, fix and reaudit blocks may be added\)",
        ),
        (
            "no-block",
            r"malformed response: row 100 came back without its audit block \(every audit "
            r"answer carries one\)",
        ),
        (
            "bad-block",
            r"malformed response: row 100: [\s\S]*audit must be a dict, got str 'passed'[\s\S]*",
        ),
    ],
)
def test_a_malformed_answer_names_the_batch_and_says_how_to_resume(
    samples: SampleSequence, tmp_path: Path, fault: str, message: str
) -> None:
    out = tmp_path / "out.parquet"
    with (
        StubService(batch_faults={100: [fault]}) as stub,
        pytest.raises(ServiceError, match=rf"batch 1 \(rows 100..199\): {message}; {RESUME}"),
    ):
        run(stub, samples, out, concurrency=1)
    kept = parts_of(out)  # batch 2 may have been answered while batch 1 was being joined
    assert {0} <= kept <= {0, 200}
    with StubService() as again:
        result = run(again, samples, out)
    assert sorted(first_rows(again)) == sorted({100, 200} - kept)
    assert_audited_copy(result, samples)
    assert_audited_copy(read_parquet(out), samples)


@pytest.mark.parametrize("stage", ["fix", "refine"])
def test_an_answer_without_its_fix_block_is_not_a_finished_row(
    samples: SampleSequence, tmp_path: Path, stage: str
) -> None:
    with (
        StubService(batch_faults={100: ["no-block"]}) as stub,
        pytest.raises(ServiceError, match=r"row 100 came back without its fix block"),
    ):
        run(stub, samples, tmp_path / "out.parquet", stage, concurrency=1)
    assert 100 not in parts_of(tmp_path / "out.parquet")


# -- resume: only the same work ----------------------------------------------------------------


def interrupted(samples: SampleSequence, out: Path, stage: Any = "audit", **kw: Any) -> None:
    """Run until batches 0 and 1 are finished, then stop at batch 2 (a refused key)."""
    with StubService(batch_faults={200: ["401"]}) as stub, pytest.raises(ServiceError):
        run(stub, samples, out, stage, concurrency=1, **kw)
    assert parts_of(out) == {0, 100}


def edited(samples: SampleSequence, column: str, row: int, value: Any) -> SampleSequence:
    values = samples.table.column(column).to_pylist()
    values[row] = value
    table = samples.table
    index = table.schema.get_field_index(column)
    return SampleSequence(
        table.set_column(index, table.field(index), pa.array(values, table.field(index).type))
    )


def test_a_rerun_of_the_same_rows_sends_only_the_unfinished_batch(
    samples: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "out.parquet"
    interrupted(samples, out)
    with StubService() as again:
        result = run(again, samples, out)
    assert first_rows(again) == [200]
    assert_audited_copy(result, samples)


def test_an_equal_standalone_table_reuses_the_parts_of_a_slice(
    samples: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "out.parquet"
    sliced = samples[:250]
    interrupted(sliced, out)
    standalone = SampleSequence(
        pa.Table.from_pylist(sliced.table.to_pylist(), schema=samples.table.schema)
    )
    with StubService() as again:
        result = run(again, standalone, out)
    assert first_rows(again) == [200]
    assert_audited_copy(result, standalone)


def test_a_resumed_run_writes_the_same_file_as_an_uninterrupted_one(
    samples: SampleSequence, tmp_path: Path
) -> None:
    whole = tmp_path / "whole.parquet"
    with StubService() as stub:
        run(stub, samples, whole)
    out = tmp_path / "out.parquet"
    interrupted(samples, out)  # batches 0 and 1 are read back, batch 2 is made in this run
    with StubService() as again:
        result = run(again, samples, out)
    expected = pq.read_table(whole)
    assert pq.read_table(out).equals(expected, check_metadata=True)
    assert result.table.equals(expected, check_metadata=True)


@pytest.mark.parametrize(
    ("change", "resent"),
    [
        ("choices", [0, 200]),
        ("extra", [100, 200]),
        ("context", [100, 200]),
        ("answer_index", [0, 200]),
    ],
)
def test_a_batch_whose_input_rows_changed_is_sent_again(
    samples: SampleSequence, tmp_path: Path, change: str, resent: list[int]
) -> None:
    out = tmp_path / "out.parquet"
    interrupted(samples, out)
    row = resent[0] + 5
    value = {
        "choices": ["one", "two", "three", "four"],
        "extra": {**samples[row].extra, "activity_label": "Edited"},
        "context": "An edited context.",
        "answer_index": (samples[row].answer_index + 1) % 4,
    }[change]
    changed = edited(samples, change, row, value)
    with StubService() as again:
        result = run(again, changed, out)
    assert sorted(first_rows(again)) == resent
    assert_audited_copy(result, changed)
    assert result.table.column(change)[row].as_py() == value


def test_a_different_slice_of_the_same_table_is_sent_again(
    samples: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "out.parquet"
    interrupted(samples, out)
    other = samples[50:]
    with StubService() as again:
        result = run(again, other, out)
    assert sorted(first_rows(again)) == [0, 100, 200]
    assert_audited_copy(result, other)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"stage": "fix"}, r"stage 'audit', not 'fix'"),
        ({"batch_size": 50}, r"batch_size 100, not 50"),
        (
            {"conventions": "Lowercase by design."},
            r"conventions '[0-9a-f]{16}', not '[0-9a-f]{16}'",
        ),
    ],
)
def test_parts_of_another_stage_batch_size_or_conventions_are_refused(
    samples: SampleSequence, tmp_path: Path, option: dict[str, Any], message: str
) -> None:
    out = tmp_path / "out.parquet"
    interrupted(samples, out)
    stage = option.pop("stage", "audit")
    with (
        StubService() as again,
        pytest.raises(
            ServiceError,
            match=rf"out.parquet.parts holds the parts of another run \({message}\); "
            "rerun with the same options, or remove it to start over",
        ),
    ):
        run(again, samples, out, stage, **option)
    assert again.requests == []
    assert parts_of(out) == {0, 100}


# -- concurrency -----------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [2, 4, 8])
def test_requests_in_flight_never_exceed_the_concurrency(
    many: SampleSequence, tmp_path: Path, concurrency: int
) -> None:
    with StubService(delay=0.05) as stub:
        result = run(stub, many, tmp_path / "out.parquet", concurrency=concurrency)
    assert 2 <= stub.most_in_flight <= concurrency
    assert sorted(first_rows(stub)) == list(range(0, 1000, 100))
    assert_audited_copy(result, many)


def test_one_at_a_time_sends_the_batches_in_order(many: SampleSequence, tmp_path: Path) -> None:
    with StubService(delay=0.01) as stub:
        run(stub, many, tmp_path / "out.parquet", concurrency=1)
    assert stub.most_in_flight == 1
    assert first_rows(stub) == list(range(0, 1000, 100))


def test_no_credits_midway_keeps_finished_parts_and_a_rerun_sends_only_the_rest(
    many: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "out.parquet"
    with (
        StubService(batch_faults={500: ["402"]}, delay=0.05) as stub,
        pytest.raises(ServiceError, match=rf"batch 5 \(rows 500..599\): .*HTTP 402\); {RESUME}"),
    ):
        run(stub, many, out, concurrency=4)
    kept = parts_of(out)
    sent = set(first_rows(stub))
    assert kept and 500 not in kept and kept <= sent
    with StubService() as again:
        result = run(again, many, out, concurrency=4)
    resent = first_rows(again)
    assert sorted(resent) == sorted(set(range(0, 1000, 100)) - kept)
    assert set(resent) & sent <= sent - kept  # only the ones in flight at the stop, and batch 5
    assert_audited_copy(result, many)


def test_an_interrupt_keeps_finished_parts_and_a_rerun_sends_only_the_rest(
    many: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "out.parquet"
    finished: list[int] = []

    def interrupt(number: int) -> None:
        finished.append(number)
        if len(finished) == 3:
            raise KeyboardInterrupt

    with StubService(delay=0.05) as stub, pytest.raises(KeyboardInterrupt):
        run(stub, many, out, concurrency=4, on_batch=interrupt)
    kept = parts_of(out)
    assert {n * 100 for n in finished} <= kept
    assert not out.exists()
    with StubService() as again:
        result = run(again, many, out, concurrency=4)
    assert sorted(first_rows(again)) == sorted(set(range(0, 1000, 100)) - kept)
    assert set(first_rows(again)) & set(first_rows(stub)) <= set(first_rows(stub)) - kept
    assert_audited_copy(result, many)


@pytest.fixture
def slow_finishing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each answered batch waits half a second before it is joined: still finishing at a stop."""

    async def slow_quiet(turns: int = 50) -> int:
        await asyncio.sleep(0.5)
        return 1

    monkeypatch.setattr(roundtrip, "_quiet", slow_quiet)


@pytest.mark.usefixtures("slow_finishing")
def test_a_batch_answered_when_the_run_stops_is_still_written(
    samples: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "out.parquet"
    two = samples[:200]
    with (
        StubService(batch_faults={100: ["late-402"]}) as stub,
        pytest.raises(ServiceError, match=rf"batch 1 \(rows 100..199\): .*HTTP 402\); {RESUME}"),
    ):
        run(stub, two, out, concurrency=2)
    assert sorted(first_rows(stub)) == [0, 100]
    assert parts_of(out) == {0}
    with StubService() as again:
        result = run(again, two, out)
    assert first_rows(again) == [100]
    assert_audited_copy(result, two)


@pytest.mark.usefixtures("slow_finishing")
def test_an_answered_batch_that_cannot_be_kept_as_the_run_stops_is_logged(
    samples: SampleSequence, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "out.parquet"
    with (
        StubService(batch_faults={0: ["bad-block"], 100: ["late-402"]}) as stub,
        caplog.at_level(logging.WARNING, logger="sdvm_hf.service.roundtrip"),
        pytest.raises(ServiceError, match=r"batch 1 \(rows 100..199\): .*HTTP 402\)"),
    ):
        run(stub, samples[:200], out, concurrency=2)
    assert sorted(first_rows(stub)) == [0, 100]
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(
        "an answered batch was not kept: batch 0 (rows 0..99): malformed response: row 0: "
    )
    assert not out.with_name(out.name + ".parts").exists()


def test_finishing_waits_for_quiet_turns_of_the_event_loop_but_not_for_ever() -> None:
    async def quiet_while(busy_turns: int, most: int) -> int:
        async def busy() -> None:  # each of its turns keeps the loop busy for a millisecond
            for _ in range(busy_turns):
                end = time.thread_time() + 0.001
                while time.thread_time() < end:
                    pass
                await asyncio.sleep(0)

        task = asyncio.create_task(busy())
        waited = await roundtrip._quiet(most)
        await task
        return waited

    assert asyncio.run(quiet_while(0, 50)) == 2  # an idle loop: the first two turns are quiet
    assert asyncio.run(quiet_while(3, 50)) == 5  # three busy turns, then two quiet ones
    assert asyncio.run(quiet_while(100, 5)) == 5  # never quiet: gives up after five


def test_concurrency_must_be_positive(samples: SampleSequence, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="concurrency must be at least 1, got 0"):
        run_stage(samples, "audit", tmp_path / "x.parquet", api_key=KEY, concurrency=0)


def test_batch_size_is_capped_at_the_service_limit(samples: SampleSequence, tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"batch_size must be 1..100 \(the service's limit\), got 101"
    ):
        run_stage(samples, "audit", tmp_path / "x.parquet", api_key=KEY, batch_size=101)


# -- the command -----------------------------------------------------------------------------


def test_the_command_never_shows_or_writes_the_key(
    samples: SampleSequence,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    source = tmp_path / "in.parquet"
    write_parquet(samples[:120], source)
    monkeypatch.setenv("SDVM_API_KEY", KEY)
    with StubService(faults=["ok", "429"]) as stub:
        assert (
            main(
                [
                    "audit",
                    str(source),
                    "-o",
                    str(tmp_path / "out.parquet"),
                    "--base-url",
                    stub.url,
                    "--dataset",
                    "hellaswag",
                ],
                retry=FAST,
            )
            == 0
        )
        assert stub.requests[0]["conventions"] == CONVENTIONS
    with StubService(faults=["401"]) as stub:
        assert (
            main(
                [
                    "refine",
                    str(source),
                    "-o",
                    str(tmp_path / "refused.parquet"),
                    "--base-url",
                    stub.url,
                ],
                retry=FAST,
            )
            == 2
        )
    captured = capsys.readouterr()
    assert "HTTP 401" in captured.err
    seen = captured.out + captured.err + caplog.text
    seen += "".join(p.read_bytes().decode("latin-1") for p in tmp_path.rglob("*") if p.is_file())
    assert KEY not in seen
    assert len(read_parquet(tmp_path / "out.parquet")) == 120


def test_the_command_passes_its_concurrency(
    many: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_parquet(many, tmp_path / "in.parquet")
    monkeypatch.setenv("SDVM_API_KEY", KEY)
    with StubService(delay=0.05) as stub:
        args = ["audit", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "out.parquet")]
        assert main([*args, "--base-url", stub.url, "--concurrency", "3"]) == 0
    assert 2 <= stub.most_in_flight <= 3


def test_without_a_key_the_command_says_so(
    samples: SampleSequence,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("SDVM_API_KEY", raising=False)
    write_parquet(samples[:3], tmp_path / "in.parquet")
    assert main(["audit", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "o.parquet")]) == 2
    assert "no API key: set SDVM_API_KEY" in capsys.readouterr().err


def test_ctrl_c_prints_one_line_exits_130_and_a_rerun_resumes(
    samples: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    write_parquet(samples, source)
    command = ["audit", str(source), "-o", str(out), "--concurrency", "1"]
    env = {**os.environ, "SDVM_API_KEY": KEY}
    with StubService(delay=0.3) as stub:
        child = subprocess.Popen(
            [sys.executable, "-c", CLI, *command, "--base-url", stub.url],
            env=env,
            stderr=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not parts_of(out) and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.02)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    *said, last = stderr.splitlines()
    assert last == (
        f"sdvm-hf audit: interrupted; finished batches are kept in {out}.parts, "
        "rerun the same command to resume"
    )
    assert [line.split(": ", 2)[1:] for line in said] == [  # the plan, before any request
        [
            "audit",
            "conventions: hellaswag's defaults (the file's record names hellaswag; 314 characters)",
        ],
        ["audit", "3 request(s) (296 samples) to send"],
    ]
    assert stdout == ""
    kept = parts_of(out)
    assert 0 in kept and 200 not in kept
    monkeypatch.setenv("SDVM_API_KEY", KEY)
    with StubService() as again:
        assert main([*command, "--base-url", again.url], retry=FAST) == 0
    assert sorted(first_rows(again)) == sorted({0, 100, 200} - kept)
    assert_audited_copy(read_parquet(out), samples)


def test_the_service_address_can_come_from_the_environment(
    samples: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubService() as stub:
        monkeypatch.setenv("SDVM_BASE_URL", stub.url)
        result = run_stage(samples[:5], "audit", tmp_path / "o.parquet", api_key=KEY, retry=FAST)
    assert len(stub.requests) == 1 and all(s.audit is not None for s in result)
