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
import hashlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from sdvm_hf._lock import output_lock
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.errors import InputError
from sdvm_hf.files import write_table
from sdvm_hf.record import staged
from sdvm_hf.service._base import (
    MAX_BATCH,
    RESUME,
    ROW_ID,
    STAGES,
    ServiceError,
    Stage,
    install_hint,
)
from sdvm_hf.service._client import DEFAULT_BASE_URL, check_base_url, check_key, make_client
from sdvm_hf.service._join import Sent, by_row, join, part_table, row_key, wire_batch
from sdvm_hf.service._parts import Parts, rows_hash
from sdvm_hf.service._retry import Flight, Gate, Retry, send
from sdvm_hf.service._schedule import Finishing, drive, quiet, run_async

__all__ = [
    "MAX_BATCH",
    "RESUME",
    "ROW_ID",
    "STAGES",
    "Retry",
    "ServiceError",
    "Stage",
    "install_hint",
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
) -> SampleSequence:
    """Send ``samples`` through ``stage`` ("audit", "fix" or "refine"); write and return the result.

    The result has the input's order, schema and schema metadata (a Parquet file's key-value
    metadata comes through unchanged), with the stage blocks filled in. Up to
    ``concurrency`` requests are in flight at once. Finished batches wait in
    ``<output>.parts/`` until the whole run is done; rerunning the same call resumes from
    there, reusing a batch only if its part holds exactly its rows. ``on_batch`` is called
    with each batch's number once its part is written; an exception it raises stops the run
    as Ctrl-C does (no new request; the requests in flight are awaited, at most ``timeout``
    seconds, and kept). The service address is ``base_url``, else the ``SDVM_BASE_URL``
    environment variable, else the SDK's default.
    """
    origin = "base_url" if base_url else "SDVM_BASE_URL"
    base_url = base_url or os.environ.get("SDVM_BASE_URL") or None
    if stage not in STAGES:
        raise InputError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise InputError(
            f"batch_size must be 1..{MAX_BATCH} (the service's limit), got {batch_size}"
        )
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, got {concurrency}")
    check_key(api_key)
    check_base_url(base_url, origin)
    output = Path(output)
    with output_lock(output, ServiceError):
        return _run(
            samples,
            stage,
            output,
            api_key,
            base_url,
            conventions,
            batch_size,
            concurrency,
            retry,
            timeout,
            on_batch,
        )


def _run(
    samples: SampleSequence,
    stage: Stage,
    output: Path,
    api_key: str,
    base_url: str | None,
    conventions: str | None,
    batch_size: int,
    concurrency: int,
    retry: Retry,
    timeout: float,
    on_batch: Callable[[int], None] | None,
) -> SampleSequence:
    parts = Parts(
        output.with_name(output.name + ".parts"),
        {
            "stage": stage,
            "batch_size": batch_size,
            "conventions": conventions and hashlib.sha256(conventions.encode()).hexdigest()[:16],
        },
    )
    starts = range(0, len(samples), batch_size)
    tables: dict[int, pa.Table] = {}  # each batch's finished part: reused, or made in this run
    for number, start in enumerate(starts):
        reused = parts.reusable(number, samples.table.slice(start, batch_size), start)
        if reused is not None:
            tables[number] = reused
    todo = [n for n in range(len(starts)) if n not in tables]
    if tables:
        log.info("resuming %s: %d of %d batches already done", stage, len(tables), len(starts))
    call, close = make_client(stage, api_key, base_url, conventions, timeout)
    address = base_url or DEFAULT_BASE_URL
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
    metadata = staged(samples.table.schema.metadata, stage, samples.source, len(samples))
    ordered = [tables[n].replace_schema_metadata(metadata) for n in range(len(starts))]
    result = pa.concat_tables(ordered) if ordered else samples.table
    write_table(result, output)
    parts.remove()
    # every part is the checked input's rows with columns built from checked samples
    return SampleSequence(result, source=str(output), validate=False)
