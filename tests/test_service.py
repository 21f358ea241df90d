"""The SDVM round trip against a local stand-in, with the real SDK (Python >= 3.12)."""

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import (
    PRESETS,
    Retry,
    SampleSequence,
    ServiceError,
    load_hellaswag,
    read_parquet,
    run_stage,
)
from sdvm_hf.service import roundtrip

if sys.version_info < (3, 12):
    pytest.skip(
        "the sdvm SDK needs Python >= 3.12; CI runs these under 3.12", allow_module_level=True
    )
pytest.importorskip("sdvm", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'")

from service_stub import StubService

KEY = "sk-test-secret-key-123"
CONVENTIONS = PRESETS["hellaswag"].conventions
FAST = Retry(rate_limited=3, transient=2, backoff=0.01)


@pytest.fixture
def samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SampleSequence:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    return load_hellaswag(bundled=True)


def run(
    stub: StubService, samples: SampleSequence, out: Path, stage: Any = "audit", **kw: Any
) -> SampleSequence:
    options: dict[str, Any] = {"retry": FAST, **kw}
    return run_stage(
        samples,
        stage,
        out,
        api_key=KEY,
        base_url=stub.url,
        conventions=CONVENTIONS,
        **options,
    )


def test_audit_round_trip_keeps_order_extra_and_types(
    samples: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "audited.parquet"
    with StubService() as stub:
        result = run(stub, samples, out)
    assert [r["size"] for r in stub.requests] == [100, 100, 96]
    assert all(r["path"] == "/audit" and r["conventions"] == CONVENTIONS for r in stub.requests)
    assert sorted(stub.answered_rows) == list(range(296))
    audited = list(read_parquet(out))
    assert len(audited) == len(result) == 296
    for before, after in zip(samples, audited, strict=True):
        assert type(after) is type(before)
        assert (after.context, after.choices, after.answer_index, after.extra) == (
            before.context,
            before.choices,
            before.answer_index,
            before.extra,
        )
        assert after.audit is not None and set(after.audit) == {
            "grammar",
            "complete",
            "answer_in_range",
        }
        assert after.fix is None and after.reaudit is None
    assert pq.read_schema(out).field("extra").type == samples.table.schema.field("extra").type
    assert pq.read_schema(out).field("extra").type.field("ind").type == pa.int32()
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


@pytest.mark.parametrize("fault", ["429", "500", "drop"])
def test_transient_faults_are_retried(samples: SampleSequence, tmp_path: Path, fault: str) -> None:
    with StubService(faults=["ok", fault]) as stub:
        result = run(stub, samples, tmp_path / "out.parquet")
    assert len(stub.requests) == 4
    assert stub.requests[1]["rows"] == stub.requests[2]["rows"]
    assert len(result) == 296 and sorted(stub.answered_rows) == list(range(296))


def test_rate_limits_back_off_exponentially(
    samples: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    retry = Retry(rate_limited=3, transient=2, backoff=0.01, sleep=waits.append)
    with StubService(faults=["429", "429", "429"]) as stub:
        run(stub, samples[:10], tmp_path / "out.parquet", retry=retry)
    assert waits == [0.01, 0.02, 0.04]


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
    with StubService(faults=[fault]) as stub, pytest.raises(ServiceError, match=message):
        run(stub, samples, tmp_path / "out.parquet")
    assert len(stub.requests) == 1
    assert not (tmp_path / "out.parquet").exists()


def test_retries_run_out_with_a_message_naming_the_batch(
    samples: SampleSequence, tmp_path: Path
) -> None:
    with (
        StubService(faults=["ok", "500", "500", "500"]) as stub,
        pytest.raises(
            ServiceError,
            match=r"batch 1 \(rows 100..199\): the service answered HTTP 500: internal error, 3 times; batches before it are kept, rerun to resume",
        ),
    ):
        run(stub, samples, tmp_path / "out.parquet")


def test_a_malformed_response_names_the_batch_and_keeps_what_was_written(
    samples: SampleSequence, tmp_path: Path
) -> None:
    out = tmp_path / "out.parquet"
    with (
        StubService(faults=["ok", "malformed"]) as stub,
        pytest.raises(ServiceError, match=r"batch 1 \(rows 100..199\): malformed response"),
    ):
        run(stub, samples, out)
    assert (tmp_path / "out.parquet.parts" / "batch-000000.parquet").exists()
    with StubService() as again:
        result = run(again, samples, out)
    assert [r["rows"][0] for r in again.requests] == [100, 200]
    assert len(result) == 296 and all(s.audit is not None for s in read_parquet(out))


def test_a_crash_mid_run_resumes_without_sending_a_batch_twice(
    samples: SampleSequence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out.parquet"
    real_join = roundtrip._join
    calls = {"n": 0}

    def crash_on_second(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real_join(*args)

    monkeypatch.setattr(roundtrip, "_join", crash_on_second)
    with StubService() as stub, pytest.raises(KeyboardInterrupt):
        run(stub, samples, out)
    monkeypatch.setattr(roundtrip, "_join", real_join)
    with StubService() as again:
        result = run(again, samples, out)
    sent_first = [r["rows"][0] for r in stub.requests]
    sent_again = [r["rows"][0] for r in again.requests]
    assert sent_first == [0, 100] and sent_again == [100, 200]
    assert [s.context for s in result] == [s.context for s in samples]
    assert all(s.audit is not None for s in result)


def test_parts_of_another_run_are_not_mixed_in(samples: SampleSequence, tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    with StubService(faults=["ok", "401"]) as stub, pytest.raises(ServiceError):
        run(stub, samples, out)
    with StubService() as stub, pytest.raises(ServiceError, match="holds the parts of another run"):
        run(stub, samples[:150], out)


def test_returned_samples_must_join_back(samples: SampleSequence) -> None:
    from sdvm_hf.service.roundtrip import _join, _with_ids

    sent = _with_ids(samples[:2], 0)
    with pytest.raises(ServiceError, match="batch 0: malformed response: sent 2 samples, got 1"):
        _join(sent, sent[:1], "batch 0")
    swapped = [sent[0], sent[0]]
    with pytest.raises(ServiceError, match="a sample without a row id of its own"):
        _join(sent, swapped, "batch 0")
    changed = [sent[0], sent[1].model_copy(update={"extra": {**sent[1].extra, "split": "x"}})]
    with pytest.raises(ServiceError, match="row 1 came back with its extra changed"):
        _join(sent, changed, "batch 0")


def test_batch_size_is_capped_at_the_service_limit(samples: SampleSequence, tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"batch_size must be 1..100 \(the service's limit\), got 101"
    ):
        run_stage(samples, "audit", tmp_path / "x.parquet", api_key=KEY, batch_size=101)


def test_the_command_never_shows_or_writes_the_key(
    samples: SampleSequence,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    from sdvm_hf.cli import main

    caplog.set_level(logging.DEBUG)
    source = tmp_path / "in.parquet"
    from sdvm_hf import write_parquet

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
                ]
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


def test_without_a_key_the_command_says_so(
    samples: SampleSequence,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from sdvm_hf import write_parquet
    from sdvm_hf.cli import main

    monkeypatch.delenv("SDVM_API_KEY", raising=False)
    write_parquet(samples[:3], tmp_path / "in.parquet")
    assert main(["audit", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "o.parquet")]) == 2
    assert "no API key: set SDVM_API_KEY" in capsys.readouterr().err
