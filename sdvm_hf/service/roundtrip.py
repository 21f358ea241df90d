"""Send samples through the SDVM models with the official SDK, batch by batch, resumably.

Each request carries at most 100 samples (the service's limit); up to ``concurrency``
requests are in flight at once (the SDK's async low-level client, handed the wire dicts built
from the batch's columns), and the output keeps the input's order. Every sample carries a
stable row id in ``extra`` (:data:`ROW_ID`), so each returned sample joins back to the row it
came from; the id is checked and removed again, so ``extra`` comes back untouched. An audit
must send context, choices and answer back as they were sent. Answers are checked and joined
column by column, by the rules a sample decoded per row would follow (and with its messages).

Each returned batch is written to its own Parquet part (atomically) before it counts as done;
a rerun reuses a part only when it holds exactly that batch's rows as written
(:mod:`sdvm_hf.service._parts`). One run at a time per output (``<output>.lock``). HTTP 429
makes every worker wait (one shared gate, exponential backoff); 5xx answers and dropped
connections are retried a few times; 401, 402 and a malformed answer stop the run. A stop
(or a first Ctrl-C) sends no new request but waits for the requests in flight and keeps their
answers; a second Ctrl-C stops at once. The API key is checked (it must fit in an HTTP
header), handed to the SDK, and never written or logged.

The parts are in :mod:`~sdvm_hf.service._parts`, the client in
:mod:`~sdvm_hf.service._client`, retries in :mod:`~sdvm_hf.service._retry`, the wire join in
:mod:`~sdvm_hf.service._join`, scheduling in :mod:`~sdvm_hf.service._schedule`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._lock import output_lock
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.errors import InputError
from sdvm_hf.files import write_table
from sdvm_hf.record import content_hash, staged
from sdvm_hf.service._base import (
    MAX_ANSWER,
    MAX_BATCH,
    RESUME,
    ROW_ID,
    STAGES,
    ServiceError,
    Stage,
    install_hint,
    redact_url,
    scrubbed,
    secrets_of,
)
from sdvm_hf.service._client import (
    DEFAULT_BASE_URL,
    check_base_url,
    check_key,
    make_client,
    require_sdk,
)
from sdvm_hf.service._join import Sent, by_row, join, part_table, row_key, wire_batch
from sdvm_hf.service._parts import rows_hash
from sdvm_hf.service._plan import STAGE_KEY, Conventions, Plan, account, choose_conventions, plan
from sdvm_hf.service._retry import Flight, Gate, Retry, send
from sdvm_hf.service._schedule import Finishing, drive, quiet, run_async

__all__ = [
    "MAX_BATCH",
    "RESUME",
    "ROW_ID",
    "STAGES",
    "Plan",
    "Retry",
    "ServiceError",
    "Stage",
    "install_hint",
    "plan_stage",
    "run_stage",
]

log = logging.getLogger(__name__)

_quiet = quiet
_RETRY = Retry()
"""Joining and writing wait for quiet turns of the event loop (tests slow it down here)."""


def _progress(total: int, done: int, label: str) -> Any:
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
    concurrency: int = 4,
    retry: Retry = _RETRY,
    timeout: float = 120.0,
    on_batch: Callable[[int], None] | None = None,
    force: bool = False,
    max_answer: int = MAX_ANSWER,
) -> SampleSequence:
    """Send ``samples`` through ``stage`` ("audit", "fix" or "refine"); write and return the result.

    The result has the input's order, schema and schema metadata (a Parquet file's key-value
    metadata comes through unchanged), with the stage blocks filled in. Up to
    ``concurrency`` requests are in flight at once. Finished batches wait in
    ``<output>.parts/`` until the whole run is done; rerunning the same call resumes from
    there, reusing a batch only if its part holds exactly its rows. ``on_batch`` is called
    with each batch's number once its part is written; an exception it raises stops the run
    as Ctrl-C does (no new request; the requests in flight are awaited, at most ``timeout``
    seconds, and kept). ``timeout`` bounds each request whole, ``max_answer`` the bytes of
    an answer. The service address is ``base_url``, else the ``SDVM_BASE_URL``
    environment variable, else the SDK's default.

    ``conventions=None`` sends the defaults of the dataset the samples' record names (none
    when there is no record); ``""`` sends none. Each run logs which it sends. An output
    already complete for the same input and conventions is returned as it is, and nothing
    is sent, unless ``force`` (which also starts over without the finished batches).
    """
    origin = "base_url" if base_url else "SDVM_BASE_URL"
    base_url = base_url or os.environ.get("SDVM_BASE_URL") or None
    _check_options(stage, batch_size, concurrency)
    require_sdk()
    check_key(api_key)
    check_base_url(base_url, origin)
    chosen = choose_conventions(samples, conventions)
    output = Path(output)
    with output_lock(output, ServiceError), scrubbed(secrets_of(api_key, base_url)):
        return _run(
            samples,
            stage,
            output,
            api_key,
            base_url,
            chosen,
            batch_size,
            concurrency,
            retry,
            timeout,
            on_batch,
            force,
            max_answer,
        )


def plan_stage(
    samples: SampleSequence,
    stage: Stage,
    output: str | Path,
    *,
    conventions: str | None = None,
    batch_size: int = MAX_BATCH,
    force: bool = False,
) -> Plan:
    """What :func:`run_stage` with these arguments would send; sends nothing, needs no key.

    :meth:`Plan.lines` says it: the conventions, the batches already done, the requests and
    samples left (``sdvm-hf audit --dry-run`` prints them).
    """
    _check_options(stage, batch_size, 1)
    chosen = choose_conventions(samples, conventions)
    output = Path(output)
    found = plan(samples, stage, output, chosen, batch_size, force, content_hash(samples.table))
    return found[0]


def _check_options(stage: Stage, batch_size: int, concurrency: int) -> None:
    if stage not in STAGES:
        raise InputError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise InputError(
            f"batch_size must be 1..{MAX_BATCH} (the service's limit), got {batch_size}"
        )
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, got {concurrency}")


def _run(
    samples: SampleSequence,
    stage: Stage,
    output: Path,
    api_key: str,
    base_url: str | None,
    conventions: Conventions,
    batch_size: int,
    concurrency: int,
    retry: Retry,
    timeout: float,
    on_batch: Callable[[int], None] | None,
    force: bool,
    max_answer: int,
) -> SampleSequence:
    input_hash = content_hash(samples.table)
    # each batch's finished part: reused, or made in this run
    summary, parts, tables = plan(
        samples, stage, output, conventions, batch_size, force, input_hash
    )
    if summary.done:
        log.info(
            "%s: %s is already done for this input and these conventions: nothing sent "
            "(--force, or force=True, sends every request again)",
            stage,
            output,
        )
        return SampleSequence(pq.read_table(output), source=str(output))
    (log.info if conventions.text else log.warning)("%s: %s", stage, conventions.describe())
    if force:
        parts.remove()
    starts = range(0, len(samples), batch_size)
    todo = list(summary.todo)
    log.info(
        "%s: %s%d request(s) (%s samples) to send",
        stage,
        f"resuming, {len(tables)} of {len(starts)} batches already done; " if tables else "",
        len(todo),
        f"{summary.to_send:,}",
    )
    call, close = make_client(stage, api_key, base_url, conventions.text, timeout, max_answer)
    address = redact_url(base_url or DEFAULT_BASE_URL)
    secrets = secrets_of(api_key, base_url)
    key = row_key(samples.table.schema.field("extra").type)

    async def work(
        number: int, gate: Gate, slots: asyncio.Semaphore, finishing: Finishing, flight: Flight
    ) -> None:
        start = starts[number]
        source = samples.table.slice(start, batch_size)
        label = f"batch {number} (rows {start}..{start + source.num_rows - 1})"
        sent = wire_batch(source, start, key)  # no await before the slot: batches queue in order
        answers = await send(
            call,
            sent.wire,
            number,
            label,
            address,
            gate,
            slots,
            flight,
            lambda returned: by_row(sent, returned, label),
            timeout,
            secrets,
        )
        await finishing.run(finish(number, start, source, sent, answers, label, flight, finishing))

    async def finish(
        number: int,
        start: int,
        source: pa.Table,
        sent: Sent,
        answers: list[dict[str, Any]],
        label: str,
        flight: Flight,
        finishing: Finishing,
    ) -> None:
        """Join the answer and write its part, each step at a quiet turn of the event loop.

        The Parquet write runs in a thread (it lets go of the GIL); a write under way when the
        run stops still completes, atomically.
        """
        await finishing.quiet(_quiet)
        try:
            columns = join(sent, answers, label, stage)
        except ServiceError:
            flight.stopping = True  # a malformed answer: no new request leaves from now on
            raise
        await finishing.quiet(_quiet)
        part = part_table(source, columns)
        input_hash = rows_hash(source)
        await finishing.quiet(_quiet)
        await asyncio.to_thread(parts.write, number, part, input_hash, start)
        tables[number] = part

    with _progress(len(starts), len(tables), stage) as bar:

        def done(number: int) -> None:
            bar.update(1)
            if on_batch is not None:
                on_batch(number)

        async def everything() -> None:
            gate, slots, finishing = Gate(retry), asyncio.Semaphore(concurrency), Finishing()
            flight = Flight()
            try:  # twice the tasks as slots: a batch being joined and written holds none
                await drive(
                    todo,
                    lambda n: work(n, gate, slots, finishing, flight),
                    2 * concurrency,
                    done,
                    flight,
                    timeout,
                )
            finally:
                try:
                    await finishing.settle()
                finally:
                    await close()

        try:
            run_async(everything)
        except BaseException:
            parts.drop_if_empty()
            raise
    metadata = staged(
        samples.table.schema.metadata,
        stage,
        samples.source,
        len(samples),
        conventions=conventions.source,
        conventions_text=conventions.text,
        input_hash=input_hash,
    )
    ordered = [tables[n].replace_schema_metadata(metadata) for n in range(len(starts))]
    result = pa.concat_tables(ordered) if ordered else samples.table
    said = account(stage, input_hash, conventions, result)
    result = result.replace_schema_metadata({**(metadata or {}), STAGE_KEY: said})
    write_table(result, output)
    parts.remove()
    # every part is the checked input's rows with columns built from checked samples
    return SampleSequence(result, source=str(output), validate=False)
