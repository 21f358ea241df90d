"""Issue #27, points 1 to 4: conventions from the record, never paying twice, the offline
stand-in, and one clear line on Python 3.11 (these run on both Pythons where they can)."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdvm_hf import PRESETS, SampleSequence, load_hellaswag, write_jsonl, write_parquet
from sdvm_hf.cli import main
from sdvm_hf.record import Record, content_hash
from sdvm_hf.service import Retry, plan_stage

ROOT = Path(__file__).parent.parent
SDK = sys.version_info >= (3, 12) and importlib.util.find_spec("sdvm") is not None
needs_sdk = pytest.mark.skipif(not SDK, reason="the sdvm SDK needs Python >= 3.12")
FAST = Retry(rate_limited=2, transient=2, backoff=0.01)
HELLASWAG = PRESETS["hellaswag"].conventions


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """The bundled HellaSwag slice as a sample file whose record names hellaswag."""
    path = tmp_path / "hellaswag.parquet"
    write_parquet(load_hellaswag(bundled=True), path)
    return path


def cli(args: list[str], stub: Any, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("SDVM_API_KEY", stub.key)
    return main([*args, "--base-url", stub.url], retry=FAST)


# -- content_hash ----------------------------------------------------------------------------


def test_content_hash_ignores_chunks_and_slices_and_sees_every_value() -> None:
    table = load_hellaswag(bundled=True).table
    rebuilt = pa.Table.from_pylist(table.slice(3, 50).to_pylist(), schema=table.schema)
    chunked = pa.concat_tables([table.slice(0, 10), table.slice(10)])
    assert content_hash(chunked) == content_hash(table)
    assert content_hash(table.slice(3, 50)) == content_hash(rebuilt)
    contexts = table.column("context").to_pylist()
    contexts[200] += "."
    edited = table.set_column(2, "context", pa.array(contexts))
    assert content_hash(edited) != content_hash(table)
    extras = table.column("extra").to_pylist()
    extras[5]["ind"] += 1
    moved = table.set_column(5, "extra", pa.array(extras, table.schema.field("extra").type))
    assert content_hash(moved) != content_hash(table)


def test_content_hash_of_a_million_rows_is_fast() -> None:
    table = pa.concat_tables([load_hellaswag(bundled=True).table] * 400)  # 118,400 rows
    start = time.perf_counter()
    content_hash(table)
    assert time.perf_counter() - start < 2.0


def test_a_record_keeps_the_conventions_and_reads_old_records() -> None:
    record = Record(dataset="hellaswag").with_stage(
        "audit", None, 3, conventions="hellaswag", conventions_text="by design", input_hash="ab"
    )
    again = Record.from_json(json.loads(json.dumps(record.to_json())))
    (stage,) = again.stages
    assert (stage.conventions, stage.conventions_text, stage.input_hash) == (
        "hellaswag",
        "by design",
        "ab",
    )
    old = Record.from_json({"stages": [{"stage": "audit", "input": None}]})
    assert old.stages[0].conventions is None


# -- 1. conventions from the record, said before anything is sent -----------------------------


def test_a_dry_run_names_the_records_conventions_and_sends_nothing(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.parquet"
    assert main(["audit", str(source), "-o", str(out), "--dry-run"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[1] == (
        "conventions: hellaswag's defaults (the file's record names hellaswag; "
        f"{len(HELLASWAG or '')} characters)"
    )
    assert said[2:] == [
        "would send 3 request(s) carrying 296 samples (each billed as the service bills a "
        "sample; retries add requests)",
        "dry run: nothing was sent",
    ]
    assert not out.exists()


def test_a_file_without_a_record_says_loudly_that_no_conventions_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = tmp_path / "in.jsonl"
    write_jsonl(load_hellaswag(bundled=True), lines)
    out = tmp_path / "out.parquet"
    assert main(["fix", str(lines), "-o", str(out), "--dry-run"]) == 0
    assert "conventions: NONE are sent" in capsys.readouterr().out
    assert main(["fix", str(lines), "-o", str(out), "--dry-run", "--dataset", "mmlu"]) == 0
    assert "conventions: mmlu's defaults (as given;" in capsys.readouterr().out


@needs_sdk
def test_a_stage_sends_the_conventions_its_record_names_and_keeps_them(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service_stub import StubService

    out = tmp_path / "out.parquet"
    with StubService() as stub:
        assert cli(["refine", str(source), "-o", str(out)], stub, monkeypatch) == 0
    assert {r["conventions"] for r in stub.requests} == {HELLASWAG}
    stage = (Record.read(out) or Record()).stages[-1]
    assert (stage.stage, stage.conventions, stage.conventions_text) == (
        "refine",
        "hellaswag",
        HELLASWAG,
    )
    none = tmp_path / "none.parquet"
    with StubService() as stub:
        args = ["audit", str(source), "-o", str(none), "--conventions", ""]
        assert cli(args, stub, monkeypatch) == 0
    assert {r["conventions"] for r in stub.requests} == {None}
    assert (Record.read(none) or Record()).stages[-1].conventions == "none"


# -- 2. never paying twice --------------------------------------------------------------------


@needs_sdk
def test_a_finished_stage_sends_nothing_again_unless_forced(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from service_stub import StubService

    caplog.set_level(logging.INFO)
    out = tmp_path / "out.parquet"
    command = ["audit", str(source), "-o", str(out)]
    with StubService() as stub:
        assert cli(command, stub, monkeypatch) == 0
        first = pq.read_table(out)
        assert len(stub.requests) == 3
        caplog.clear()
        assert cli(command, stub, monkeypatch) == 0
        assert len(stub.requests) == 3  # nothing sent
        assert "is already done for this input and these conventions: nothing sent" in caplog.text
        assert pq.read_table(out).equals(first)
        assert cli([*command, "--force"], stub, monkeypatch) == 0
        assert len(stub.requests) == 6
        assert cli([*command, "--dataset", "mmlu"], stub, monkeypatch) == 0  # other conventions
        assert len(stub.requests) == 9
    assert main([*command, "--dataset", "mmlu", "--dry-run"]) == 0


@needs_sdk
def test_an_edited_input_or_output_is_sent_again(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service_stub import StubService

    out = tmp_path / "out.parquet"
    command = ["audit", str(source), "-o", str(out)]
    with StubService() as stub:
        assert cli(command, stub, monkeypatch) == 0
        table = pq.read_table(source)
        contexts = table.column("context").to_pylist()
        contexts[0] += " Edited."
        edited = table.set_column(2, "context", pa.array(contexts))
        pq.write_table(edited.replace_schema_metadata(table.schema.metadata), source)
        assert cli(command, stub, monkeypatch) == 0
        assert len(stub.requests) == 6
        written = pq.read_table(out)
        pq.write_table(written.slice(0, 295).replace_schema_metadata(written.schema.metadata), out)
        assert cli(command, stub, monkeypatch) == 0  # an output cut short is not done
        assert len(stub.requests) == 9


@needs_sdk
def test_a_resumed_run_counts_what_it_will_still_send(
    source: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from service_stub import StubService

    caplog.set_level(logging.INFO)
    out = tmp_path / "out.parquet"
    command = ["audit", str(source), "-o", str(out), "--concurrency", "1"]
    with StubService(batch_faults={100: ["402"]}) as stub:
        assert cli(command, stub, monkeypatch) == 2
    capsys.readouterr()
    assert main([*command, "--dry-run"]) == 0
    said = capsys.readouterr().out
    assert "resuming: 1 of 3 batches already done" in said
    assert "would send 2 request(s) carrying 196 samples" in said
    caplog.clear()
    with StubService() as stub:
        assert cli(command, stub, monkeypatch) == 0
    assert "resuming, 1 of 3 batches already done; 2 request(s) (196 samples) to send" in (
        caplog.text
    )
    assert len(stub.requests) == 2


def test_plan_stage_needs_no_key_and_no_sdk(tmp_path: Path) -> None:
    samples = SampleSequence(load_hellaswag(bundled=True).table.slice(0, 250))
    plan = plan_stage(samples, "fix", tmp_path / "o.parquet", conventions="x", batch_size=50)
    assert (plan.requests, plan.to_send, plan.conventions.source) == (5, 250, "given")


# -- 3. the offline stand-in ------------------------------------------------------------------


def serve(tmp_path: Path, *command: str) -> tuple[subprocess.Popen[str], str]:
    url_file = tmp_path / "stub.url"
    child = subprocess.Popen(
        [sys.executable, *command, "--port", "0", "--url-file", str(url_file)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 30
    while not url_file.is_file() or not url_file.read_text().strip():
        assert time.monotonic() < deadline and child.poll() is None, "the stand-in did not start"
        time.sleep(0.05)
    return child, url_file.read_text().strip()


@pytest.mark.parametrize(
    "command",
    [("-m", "sdvm_hf.service.stub"), ("-m", "sdvm_hf", "serve-stub")],
    ids=["python-m", "serve-stub"],
)
def test_the_stand_in_starts_with_one_command_and_answers_like_the_service(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    child, url = serve(tmp_path, *command)
    try:
        sample = load_hellaswag(bundled=True)[0].to_dict()
        body = json.dumps({"data": [{**sample, "context": "Two  spaces."}]}).encode()
        request = urllib.request.Request(
            url + "/refine",
            body,
            {"Authorization": "Bearer sk-anything", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            (refined,) = json.loads(answer.read())["refined_data"]
    finally:
        child.terminate()
        child.communicate(timeout=10)
    assert refined["context"] == "Two spaces."
    assert refined["audit"] == {"grammar": False, "complete": True, "answer_in_range": True}
    assert refined["fix"]["changes"] == ["collapsed spaces"]


@needs_sdk
def test_the_whole_path_runs_offline_against_the_served_stand_in(
    source: Path, tmp_path: Path
) -> None:
    child, url = serve(tmp_path, "-m", "sdvm_hf", "serve-stub")
    env = {**os.environ, "SDVM_BASE_URL": url, "SDVM_API_KEY": "sk-offline"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "sdvm_hf", "refine", str(source), "-o", "r.parquet"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        child.terminate()
        child.communicate(timeout=10)
    assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "r.parquet").column("reaudit").null_count == 0


# -- 4. Python 3.11: one line, never a traceback ---------------------------------------------


@pytest.mark.slow  # the one-minute loop leaves it to the full run
@pytest.mark.skipif(SDK, reason="what a Python without the SDK (3.11) prints")
@pytest.mark.parametrize("address", [None, "http://127.0.0.1:9", "env"])
def test_without_the_sdk_every_stage_ends_in_one_line(
    source: Path, tmp_path: Path, address: str | None
) -> None:
    env = {**os.environ, "SDVM_API_KEY": "sk-x", "PYTHONPATH": str(ROOT)}
    env.pop("SDVM_BASE_URL", None)
    extra = [] if address in (None, "env") else ["--base-url", address]
    if address == "env":
        env["SDVM_BASE_URL"] = "http://127.0.0.1:9"
    for stage in ("audit", "fix", "refine"):
        done = subprocess.run(
            [sys.executable, "-m", "sdvm_hf", stage, str(source), "-o", "o.parquet", *extra],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"sdvm-hf {stage}: the SDVM round trip needs the sdvm SDK")
        assert "needs Python >= 3.12" in line and "python3.12 -m venv" in line


@pytest.mark.skipif(SDK, reason="what a Python without the SDK (3.11) prints")
def test_without_the_sdk_a_recipe_ends_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "SDVM_API_KEY": "sk-x", "SDVM_BASE_URL": "http://127.0.0.1:9"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, str(ROOT / "recipes" / "hellaswag.py"), "--refine"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        "recipes/hellaswag.py: the SDVM round trip needs the sdvm SDK, which needs Python >= 3.12"
    )
