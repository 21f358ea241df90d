"""Issue #27, points 5 to 7: hostile stand-ins on 127.0.0.1 (a trickle, a huge answer, an
error page, a key echoed, a redirect, escape sequences, rows traded) and what reaches the
screen."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sdvm_hf import SampleSequence, load_hellaswag, load_mmlu, write_parquet
from sdvm_hf.cli import main
from sdvm_hf.errors import printable
from sdvm_hf.service import Retry, ServiceError, run_stage

if sys.version_info < (3, 12):
    pytest.skip("the sdvm SDK needs Python >= 3.12", allow_module_level=True)
pytest.importorskip("sdvm", reason="install the 'sdvm' extra: pip install -e '.[sdvm]'")

from service_stub import StubService

KEY = "sk-test-secret-key-123"
ONCE = Retry(rate_limited=1, transient=1, backoff=0.01)


def run(stub: StubService, samples: SampleSequence, out: Path, **kw: Any) -> SampleSequence:
    options: dict[str, Any] = {"retry": ONCE, "conventions": "", "stage": "audit", **kw}
    stage = options.pop("stage")
    return run_stage(samples, stage, out, api_key=KEY, base_url=stub.url, **options)


@pytest.fixture
def samples() -> SampleSequence:
    return load_hellaswag(bundled=True)[:3]


# -- 5. bounded in time and bytes ------------------------------------------------------------


def test_a_trickled_answer_meets_a_deadline_for_the_whole_request(
    samples: SampleSequence, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # every read is quick (a byte each 0.2 s), the whole answer would take minutes
    with StubService(faults=["trickle"], trickle=0.2) as stub:
        start = time.monotonic()
        result = run(stub, samples, tmp_path / "o.parquet", timeout=1.0)
        took = time.monotonic() - start
    assert took < 6, took
    assert len(stub.requests) == 2 and all(s.audit is not None for s in result)
    assert "no complete answer from http://127.0.0.1:" in caplog.text
    assert "within 1s; retrying" in caplog.text


def test_an_answer_larger_than_the_cap_is_refused_before_it_is_read(
    samples: SampleSequence, tmp_path: Path
) -> None:
    with (
        StubService(faults=["huge"], huge=3_000_000) as stub,
        pytest.raises(ServiceError, match=r"bytes, more than 1,000,000; finished batches"),
    ):
        run(stub, samples, tmp_path / "o.parquet", max_answer=1_000_000)
    assert len(stub.requests) == 1  # not retried: the same answer would come again


def test_an_error_page_is_one_short_line_on_every_retry(
    samples: SampleSequence, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        StubService(faults=["big-error", "big-error"]) as stub,
        pytest.raises(ServiceError) as stopped,
    ):
        run(stub, samples, tmp_path / "o.parquet")
    message = str(stopped.value)
    assert "the service answered HTTP 502: Bad gateway Bad gateway" in message
    assert "characters), 2 times; finished batches are kept" in message
    assert len(message) < 600 and "<p>" not in message
    (retry,) = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retry) < 600 and "\n" not in retry


# -- 6. nothing secret or hostile on screen --------------------------------------------------


def test_a_server_echoing_the_key_never_puts_it_on_screen(
    samples: SampleSequence, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        StubService(faults=["echo-key", "echo-key"]) as stub,
        pytest.raises(ServiceError) as stopped,
    ):
        run(stub, samples, tmp_path / "o.parquet")
    assert "with Authorization: Bearer ***" in str(stopped.value)
    assert KEY not in str(stopped.value) and KEY not in caplog.text
    assert "Bearer ***" in caplog.text


def test_credentials_in_the_address_appear_in_no_message(
    samples: SampleSequence, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    address = "http://someone:pa55word-xyz@127.0.0.1:9"  # nothing listens on port 9
    with pytest.raises(ServiceError) as stopped:
        run_stage(
            samples, "audit", tmp_path / "o.parquet", api_key=KEY, base_url=address, retry=ONCE
        )
    said = str(stopped.value) + caplog.text
    assert "cannot connect to http://***@127.0.0.1:9" in said
    assert "pa55word" not in said and "someone" not in said


def test_a_redirect_is_named_with_its_target_and_not_followed(
    samples: SampleSequence, tmp_path: Path
) -> None:
    with (
        StubService(faults=["redirect"]) as stub,
        pytest.raises(
            ServiceError,
            match=r"answered HTTP 307, a redirect to http://elsewhere.invalid/audit, which is "
            r"not followed",
        ),
    ):
        run(stub, samples, tmp_path / "o.parquet")
    assert len(stub.requests) == 1


def test_escape_sequences_in_check_names_and_data_are_shown_not_obeyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = load_hellaswag(bundled=True).table.slice(0, 3)
    contexts = table.column("context").to_pylist()
    contexts[0] = "Bell\x07 and \x1b]0;title\x07 here"
    import pyarrow as pa

    source = tmp_path / "in.parquet"
    write_parquet(SampleSequence(table.set_column(2, "context", pa.array(contexts))), source)
    out = tmp_path / "out.parquet"
    monkeypatch.setenv("SDVM_API_KEY", KEY)
    with StubService(faults=["escape"]) as stub:
        assert main(["audit", str(source), "-o", str(out), "--base-url", stub.url]) == 0
    for command in (["inspect", str(out)], ["diff", str(source), str(out), "--only", "all"]):
        assert main(command) == 0
        shown = capsys.readouterr().out
        assert "\x1b" not in shown and "\x07" not in shown, command
    assert main(["inspect", str(out)]) == 0
    assert "\\x1b[2J\\x1b[31mgrammar" in capsys.readouterr().out
    assert printable("\x1b[2J") == "\\x1b[2J"


# -- 7. rows cannot be traded ----------------------------------------------------------------


@pytest.mark.parametrize("stage", ["fix", "refine"])
def test_an_answer_trading_two_rows_content_is_refused(tmp_path: Path, stage: str) -> None:
    mmlu = load_mmlu(bundled=True)[:10]
    assert mmlu[0].extra == mmlu[1].extra  # one subject: their other keys are equal
    with (
        StubService(faults=["swap"]) as stub,
        pytest.raises(
            ServiceError,
            match=r"row 0 came back with the context sent with row 1, whose own answer",
        ),
    ):
        run(stub, mmlu, tmp_path / "o.parquet", stage=stage)


def test_a_fix_that_changes_a_row_in_place_is_kept(tmp_path: Path) -> None:
    mmlu = load_mmlu(bundled=True)[:10]
    import pyarrow as pa

    contexts = mmlu.table.column("context").to_pylist()
    contexts[0] = contexts[0].replace(" ", "  ", 1)
    doubled = SampleSequence(mmlu.table.set_column(2, "context", pa.array(contexts)))
    with StubService() as stub:
        fixed = run(stub, doubled, tmp_path / "o.parquet", stage="fix")
    assert fixed[0].context == mmlu[0].context


logging.getLogger("httpx").setLevel(logging.WARNING)


def test_a_fix_into_another_rows_unchanged_context_is_not_a_trade(tmp_path: Path) -> None:
    import pyarrow as pa

    mmlu = load_mmlu(bundled=True)[:10]
    contexts = mmlu.table.column("context").to_pylist()
    contexts[0] = contexts[1].replace(" ", "  ", 1)  # a duplicate of row 1, with a typo
    twin = SampleSequence(mmlu.table.set_column(2, "context", pa.array(contexts)))
    with StubService() as stub:
        fixed = run(stub, twin, tmp_path / "o.parquet", stage="fix")
    assert fixed[0].context == fixed[1].context == mmlu[1].context
