"""Send samples through the SDVM models with the official SDK, batch by batch, resumably.

Each request carries at most 100 samples (the service's limit). Every sample carries a
stable row id in ``extra`` (:data:`ROW_ID`), so each returned sample joins back to the row it
came from; the id is checked and removed again, so ``extra`` comes back untouched. Each
returned batch is written to its own Parquet part (atomically) before the next is sent: a
rerun after a crash or Ctrl-C skips the parts already there, so no finished batch is sent
twice and none is lost. HTTP 429 is retried with exponential backoff, as are 5xx answers and
dropped connections (a few times); 401 and 402 stop at once. The API key is handed to the SDK
and never written or logged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from sdvm_hf._atomic import atomic_path
from sdvm_hf.arrow._codec import changeable_columns
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.files import read_parquet, write_table
from sdvm_hf.samples import MultipleChoiceSample

log = logging.getLogger(__name__)

Stage = Literal["audit", "fix", "refine"]
STAGES: tuple[Stage, ...] = ("audit", "fix", "refine")
MAX_BATCH = 100
"""The service's limit of samples per request."""
ROW_ID = "sdvm_hf_row"
"""The extra key that carries each sample's row number on the wire (removed on return)."""

INSTALL_HINT = (
    "the SDVM round trip needs the sdvm SDK (Python >= 3.12): pip install 'sdvm-hf[sdvm]'"
)


class ServiceError(RuntimeError):
    """The round trip stopped: a refused key, no credits, a malformed answer, retries spent.

    Every batch finished before it is kept; rerun the same command to resume.
    """


@dataclass(frozen=True)
class Retry:
    """How often and how patiently to retry."""

    rate_limited: int = 8
    """Attempts after an HTTP 429."""
    transient: int = 3
    """Attempts after a 5xx answer or a dropped connection."""
    backoff: float = 1.0
    """Seconds before the first retry; doubled each time."""
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    """How to wait (tests pass one that records the waits)."""


def _client(
    stage: Stage, api_key: str, base_url: str | None, conventions: str | None, timeout: float
) -> Callable[[list[Any]], list[Any]]:
    try:
        import sdvm
    except ImportError:
        raise ServiceError(INSTALL_HINT) from None
    client_args: dict[str, Any] = {"api_key": api_key, "timeout": timeout}
    if base_url:
        client_args["base_url"] = base_url
    if stage == "audit":
        auditor = sdvm.Auditor(**client_args)
        return lambda batch: auditor.run(batch, conventions=conventions)
    if stage == "fix":
        fixer = sdvm.Fixer(**client_args)
        return lambda batch: fixer.run(batch, conventions=conventions)
    refinery = sdvm.Refinery(conventions=conventions, **client_args)
    return lambda batch: refinery.run(batch)


def _classify(error: BaseException) -> tuple[str, str]:
    """('retry-429' | 'retry' | 'stop', what to tell the user) for an error from the SDK."""
    import httpx
    import sdvm

    if isinstance(error, sdvm.RateLimitError):
        return "retry-429", "rate limited (HTTP 429)"
    if isinstance(error, sdvm.AuthenticationError):
        return "stop", "the service refused the API key (HTTP 401); check SDVM_API_KEY"
    if isinstance(error, sdvm.InsufficientCreditsError):
        return "stop", "the account has no credits left (HTTP 402)"
    if isinstance(error, sdvm.APIError):
        kind = "retry" if error.status_code >= 500 else "stop"
        return kind, f"the service answered {error}"
    if isinstance(error, httpx.TransportError):
        return "retry", f"the connection failed ({type(error).__name__}: {error})"
    return "stop", f"malformed response ({type(error).__name__}: {error})"


def _with_ids(batch: SampleSequence, start: int) -> list[MultipleChoiceSample]:
    tagged = []
    for offset, sample in enumerate(batch):
        if ROW_ID in sample.extra:
            raise ServiceError(f"row {start + offset}: extra already has the key {ROW_ID!r}")
        extra = {**sample.extra, ROW_ID: start + offset}
        tagged.append(sample.model_copy(update={"extra": extra}))
    return tagged


def _join(
    sent: Sequence[MultipleChoiceSample], returned: Any, label: str
) -> list[MultipleChoiceSample]:
    """The returned samples in the order sent, ids removed; ServiceError if they do not match."""
    if not isinstance(returned, list) or len(returned) != len(sent):
        count = len(returned) if isinstance(returned, list) else type(returned).__name__
        raise ServiceError(f"{label}: malformed response: sent {len(sent)} samples, got {count}")
    by_id: dict[int, MultipleChoiceSample] = {}
    for item in returned:
        try:
            sample = MultipleChoiceSample.from_dict(item.to_dict())
        except (AttributeError, ValueError) as error:
            raise ServiceError(f"{label}: malformed response: {error}") from None
        row = sample.extra.get(ROW_ID)
        if not isinstance(row, int) or row in by_id:
            raise ServiceError(
                f"{label}: malformed response: a sample without a row id of its own ({row!r})"
            )
        extra = {key: value for key, value in sample.extra.items() if key != ROW_ID}
        by_id[row] = sample.model_copy(update={"extra": extra})
    out = []
    for original in sent:
        row = original.extra[ROW_ID]
        if row not in by_id:
            raise ServiceError(f"{label}: malformed response: row {row} did not come back")
        back = by_id[row]
        if back.extra != {k: v for k, v in original.extra.items() if k != ROW_ID}:
            raise ServiceError(
                f"{label}: malformed response: row {row} came back with its extra changed"
            )
        if type(back) is not type(original):
            raise ServiceError(
                f"{label}: malformed response: row {row} came back as {type(back).__name__}"
            )
        out.append(back)
    return out


def _part_table(source: pa.Table, returned: Sequence[MultipleChoiceSample]) -> pa.Table:
    """The source batch's rows with the returned core fields and stage blocks.

    ``extra`` is the source's own column (the join checked it came back equal), so its Arrow
    types survive the trip exactly.
    """
    columns = changeable_columns(returned)
    for name, array in columns.items():
        source = source.set_column(source.schema.get_field_index(name), name, array)
    return source


def _fingerprint(samples: SampleSequence, stage: Stage, batch_size: int) -> str:
    digest = hashlib.sha256(f"{stage}/{batch_size}/{len(samples)}/{samples.table.schema}".encode())
    for column in ("context", "answer_index"):
        for chunk in samples.table.column(column).chunks:
            for buffer in chunk.buffers():
                if buffer is not None:
                    digest.update(memoryview(buffer))
    return digest.hexdigest()


def _progress(total: int, done: int, label: str) -> Any:
    import sys

    from tqdm.auto import tqdm

    return tqdm(
        total=total, initial=done, desc=label, unit="batch", disable=not sys.stderr.isatty()
    )


def run_stage(
    samples: SampleSequence,
    stage: Stage,
    output: str | Path,
    *,
    api_key: str,
    base_url: str | None = None,
    conventions: str | None = None,
    batch_size: int = MAX_BATCH,
    retry: Retry = Retry(),
    timeout: float = 120.0,
) -> SampleSequence:
    """Send ``samples`` through ``stage`` ("audit", "fix" or "refine"); write and return the result.

    The result has the input's order and schema, with the stage blocks filled in. Finished
    batches wait in ``<output>.parts/`` until the whole run is done; rerunning the same call
    resumes from there.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(
            f"batch_size must be 1..{MAX_BATCH} (the service's limit), got {batch_size}"
        )
    if not api_key:
        raise ServiceError("no API key: set SDVM_API_KEY")
    output = Path(output)
    parts = output.with_name(output.name + ".parts")
    parts.mkdir(parents=True, exist_ok=True)
    stamp = parts / "run.json"
    fingerprint = _fingerprint(samples, stage, batch_size)
    if stamp.exists() and json.loads(stamp.read_text())["fingerprint"] != fingerprint:
        raise ServiceError(
            f"{parts} holds the parts of another run (other input, stage or batch size); "
            "remove it to start over"
        )
    with atomic_path(stamp) as tmp:
        tmp.write_text(
            json.dumps({"stage": stage, "rows": len(samples), "fingerprint": fingerprint})
        )
    call = _client(stage, api_key, base_url, conventions, timeout)
    starts = range(0, len(samples), batch_size)
    done = sum(1 for n in range(len(starts)) if (parts / f"batch-{n:06d}.parquet").exists())
    if done:
        log.info("resuming %s: %d of %d batches already done", stage, done, len(starts))
    with _progress(len(starts), done, stage) as bar:
        for number, start in enumerate(starts):
            part = parts / f"batch-{number:06d}.parquet"
            if part.exists():
                continue
            batch = samples[start : start + batch_size]
            label = f"batch {number} (rows {start}..{start + len(batch) - 1})"
            sent = _with_ids(batch, start)
            returned = _send(call, sent, label, retry)
            write_table(_part_table(batch.table, _join(sent, returned, label)), part)
            bar.update(1)
    tables = [read_parquet(parts / f"batch-{n:06d}.parquet").table for n in range(len(starts))]
    result = pa.concat_tables(tables) if tables else samples.table
    write_table(result, output)
    shutil.rmtree(parts)
    return SampleSequence(result, source=str(output))


def _send(
    call: Callable[[list[Any]], list[Any]],
    sent: list[MultipleChoiceSample],
    label: str,
    retry: Retry,
) -> list[Any]:
    attempts = {"retry-429": 0, "retry": 0}
    limits = {"retry-429": retry.rate_limited, "retry": retry.transient}
    delay = retry.backoff
    while True:
        try:
            return call(sent)
        except Exception as error:  # the SDK's errors, httpx's, and a malformed body
            kind, message = _classify(error)
            if kind == "stop":
                raise ServiceError(
                    f"{label}: {message}; batches before it are kept, rerun to resume"
                ) from None
            attempts[kind] += 1
            if attempts[kind] > limits[kind]:
                raise ServiceError(
                    f"{label}: {message}, {attempts[kind]} times; "
                    "batches before it are kept, rerun to resume"
                ) from None
            log.warning("%s: %s; retrying in %.1fs", label, message, delay)
            retry.sleep(delay)
            delay *= 2
