"""Send samples through the SDVM models with the official SDK, batch by batch, resumably.

Each request carries at most 100 samples (the service's limit); up to ``concurrency``
requests are in flight at once (the SDK's async clients), and the output keeps the input's
order. Every sample carries a stable row id in ``extra`` (:data:`ROW_ID`), so each returned
sample joins back to the row it came from; the id is checked and removed again, so ``extra``
comes back untouched.

Each returned batch is written to its own Parquet part (atomically) before it counts as done.
A part records what produced it: the stage, batch size and conventions, and a hash of its
input rows (every column, the logical values, so a slice and an equal standalone table agree).
A rerun reuses a part only when that record matches; a batch whose rows changed is sent again,
and parts of a different stage, batch size or conventions are refused. HTTP 429 makes every
worker wait (one shared gate, exponential backoff); 5xx answers and dropped connections are
retried a few times; 401 and 402 stop at once. A stop, an error or Ctrl-C cancels the requests
in flight (they are sent again on rerun); batches already answered are still joined and
written, and every finished part is kept. The API key is handed to the SDK and never written
or logged.

Over 300 lines: the batching, resume record, retries and scheduling are one state machine
whose invariants (a batch is done only once its part is written) read best in one place.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import itertools
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._wire import BLOCKS, RESERVED_KEYS
from sdvm_hf.arrow._codec import changeable_columns
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.files import write_table
from sdvm_hf.samples import MultipleChoiceSample

log = logging.getLogger(__name__)

Stage = Literal["audit", "fix", "refine"]
STAGES: tuple[Stage, ...] = ("audit", "fix", "refine")
MAX_BATCH = 100
"""The service's limit of samples per request."""
ROW_ID = "sdvm_hf_row"
"""The extra key that carries each sample's row number on the wire (removed on return)."""


def install_hint() -> str:
    """What to do when the ``sdvm`` SDK is missing, for the Python that is running."""
    if sys.version_info < (3, 12):
        running = ".".join(map(str, sys.version_info[:3]))
        return (
            "the SDVM round trip needs the sdvm SDK, which needs Python >= 3.12; this is "
            f"Python {running}, where the 'sdvm' extra installs nothing. Make a 3.12 "
            "environment: python3.12 -m venv .venv312 && .venv312/bin/pip install "
            "'sdvm-hf[sdvm]' (from a checkout: .venv312/bin/pip install -e '.[sdvm]')"
        )
    return "the SDVM round trip needs the sdvm SDK: pip install 'sdvm-hf[sdvm]'"


RESUME = "finished batches are kept; rerun the same command to resume"
_RUN_KEY = b"sdvm_hf.run"
_ROWS_KEY = b"sdvm_hf.rows"

T = TypeVar("T")
Call = Callable[[list[Any]], Awaitable[list[Any]]]


class ServiceError(RuntimeError):
    """The round trip stopped: a refused key, no credits, a malformed answer, retries spent.

    Every batch finished before it is kept; rerun the same command to resume.
    """


@dataclass(frozen=True)
class Retry:
    """How often and how patiently to retry."""

    rate_limited: int = 8
    """Attempts per batch after an HTTP 429."""
    transient: int = 3
    """Attempts per batch after a 5xx answer or a dropped connection."""
    backoff: float = 1.0
    """Seconds before the first retry; doubled each time."""
    sleep: Callable[[float], Awaitable[None] | None] = field(
        default=asyncio.sleep, compare=False, repr=False
    )
    """How to wait: a function or a coroutine function (tests pass one that records)."""

    async def wait(self, seconds: float) -> None:
        """Wait ``seconds`` with :attr:`sleep`."""
        waited = self.sleep(seconds)
        if inspect.isawaitable(waited):
            await waited


# -- the SDK -------------------------------------------------------------------------------


def _client(
    stage: Stage, api_key: str, base_url: str | None, conventions: str | None, timeout: float
) -> tuple[Call, Callable[[], Awaitable[None]]]:
    """How to send one batch with the SDK's async client, and how to close it afterwards."""
    try:
        import sdvm
    except ImportError:
        raise ServiceError(install_hint()) from None
    client_args: dict[str, Any] = {"api_key": api_key, "timeout": timeout}
    if base_url:
        client_args["base_url"] = base_url
    runner: Any
    if stage == "audit":
        runner = sdvm.AsyncAuditor(**client_args)
        call: Call = lambda batch: runner.run(batch, conventions=conventions)  # noqa: E731
    elif stage == "fix":
        runner = sdvm.AsyncFixer(**client_args)
        call = lambda batch: runner.run(batch, conventions=conventions)  # noqa: E731
    else:
        runner = sdvm.AsyncRefinery(conventions=conventions, **client_args)
        call = lambda batch: runner.run(batch)  # noqa: E731

    async def close() -> None:
        # The SDK (0.1.5) has no close(); its httpx.AsyncClient is closed here so that no
        # connection outlives the event loop (a request cancelled by Ctrl-C leaves one open).
        http = getattr(getattr(runner, "_client", None), "_http", None)
        if http is not None:
            await http.aclose()

    return call, close


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


class _Gate:
    """The shared HTTP 429 backoff: while one worker waits out a rate limit, none sends."""

    def __init__(self, retry: Retry) -> None:
        self.retry = retry
        self.open = asyncio.Event()
        self.open.set()
        self.delay = retry.backoff

    async def back_off(self, label: str) -> None:
        if not self.open.is_set():  # another worker is already waiting it out
            await self.open.wait()
            return
        self.open.clear()
        log.warning("%s: rate limited (HTTP 429); every request waits %.1fs", label, self.delay)
        try:
            await self.retry.wait(self.delay)
            self.delay *= 2
        finally:
            self.open.set()

    def passed(self) -> None:
        self.delay = self.retry.backoff


async def _send(
    call: Call, sent: list[_Tagged], label: str, gate: _Gate, slots: asyncio.Semaphore
) -> Any:
    """The service's answer to one batch; a request holds one of ``slots`` while in flight."""
    retry = gate.retry
    attempts = {"retry-429": 0, "retry": 0}
    limits = {"retry-429": retry.rate_limited, "retry": retry.transient}
    delay = retry.backoff
    while True:
        async with slots:
            await gate.open.wait()  # holding a slot: no request leaves while the gate is shut
            try:
                returned = await call(sent)
            except Exception as error:  # the SDK's errors, httpx's, and a malformed body
                failure: Exception | None = error
            else:
                failure = None
                gate.passed()
        if failure is None:
            return returned
        kind, message = _classify(failure)
        if kind == "stop":
            raise ServiceError(f"{label}: {message}; {RESUME}") from None
        attempts[kind] += 1
        if attempts[kind] > limits[kind]:
            raise ServiceError(f"{label}: {message}, {attempts[kind]} times; {RESUME}") from None
        if kind == "retry-429":
            await gate.back_off(label)
        else:
            log.warning("%s: %s; retrying in %.1fs", label, message, delay)
            await retry.wait(delay)
            delay *= 2


# -- the join ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tagged:
    """A sample on its way to the service, carrying its row id in the wire dict's extra keys.

    The SDK only calls ``to_dict()`` on what it sends, so the id is added there, without
    building (and validating) a second sample.
    """

    sample: MultipleChoiceSample
    row: int

    def to_dict(self) -> dict[str, Any]:
        wire = self.sample.to_dict()
        blocks = {key: wire.pop(key) for key in BLOCKS if key in wire}
        return {**wire, ROW_ID: self.row, **blocks}


def _with_ids(batch: SampleSequence, start: int) -> list[_Tagged]:
    tagged = []
    for offset, sample in enumerate(batch):
        if ROW_ID in sample.extra:
            raise ServiceError(f"row {start + offset}: extra already has the key {ROW_ID!r}")
        tagged.append(_Tagged(sample, start + offset))
    return tagged


def _join(sent: Sequence[_Tagged], returned: Any, label: str) -> list[MultipleChoiceSample]:
    """The returned samples in the order sent; ServiceError if they do not match.

    Each returned sample is validated, all but its ``extra``: that must equal the extra sent
    (already valid), and is left out of the samples returned here, since a part keeps the
    source's own ``extra`` column.
    """

    def malformed(what: str) -> ServiceError:
        return ServiceError(f"{label}: malformed response: {what}; {RESUME}")

    if not isinstance(returned, list) or len(returned) != len(sent):
        count = len(returned) if isinstance(returned, list) else type(returned).__name__
        raise malformed(f"sent {len(sent)} samples, got {count}")
    by_id: dict[int, dict[str, Any]] = {}
    for item in returned:
        try:
            wire = dict(item.to_dict())
        except (AttributeError, TypeError, ValueError) as error:
            raise malformed(str(error)) from None
        row = wire.pop(ROW_ID, None)
        if not isinstance(row, int) or isinstance(row, bool) or row in by_id:
            raise malformed(f"a sample without a row id of its own ({row!r})")
        by_id[row] = wire
    out = []
    for original in sent:
        answer = by_id.get(original.row)
        if answer is None:
            raise malformed(f"row {original.row} did not come back")
        extra = {key: answer.pop(key) for key in [*answer] if key not in RESERVED_KEYS}
        if extra != original.sample.extra:
            raise malformed(f"row {original.row} came back with its extra changed")
        try:
            back = MultipleChoiceSample.from_dict(answer)
        except (TypeError, ValueError) as error:
            raise malformed(f"row {original.row}: {error}") from None
        if type(back) is not type(original.sample):
            raise malformed(f"row {original.row} came back as {type(back).__name__}")
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


# -- the parts: what each finished batch was made from -------------------------------------


def _rows_hash(batch: pa.Table) -> str:
    """A hash of a batch's rows: its column types and every logical value, in order.

    Computed from the values (not the buffers), so a slice of a larger table and an equal
    standalone table hash alike, and any change in any column changes the hash.
    """
    schema = batch.schema.remove_metadata()
    rows = json.dumps(batch.to_pylist(), ensure_ascii=False, default=repr)
    return hashlib.sha256(f"{schema}\n{rows}".encode()).hexdigest()


@dataclass
class _Parts:
    """The folder of finished batches, ``<output>.parts/batch-NNNNNN.parquet``."""

    folder: Path
    run: dict[str, Any]
    """The stage, batch size and conventions: parts of another run are refused."""

    def path(self, number: int) -> Path:
        return self.folder / f"batch-{number:06d}.parquet"

    def finished(self, number: int, batch: pa.Table) -> bool:
        """Whether batch ``number`` has a part made from exactly these rows in this run."""
        part = self.path(number)
        if not part.exists():
            return False
        meta = pq.read_schema(part).metadata or {}
        recorded = json.loads(meta.get(_RUN_KEY, b"{}"))
        if recorded != self.run:
            differ = [
                f"{key} {recorded.get(key)!r}, not {value!r}"
                for key, value in self.run.items()
                if recorded.get(key) != value
            ]
            raise ServiceError(
                f"{self.folder} holds the parts of another run ({'; '.join(differ)}); "
                "rerun with the same options, or remove it to start over"
            )
        if meta.get(_ROWS_KEY, b"").decode() != _rows_hash(batch):
            log.warning("batch %d: its input rows changed since it was sent; resending", number)
            return False
        return True

    def write(self, number: int, part: pa.Table, rows_hash: str) -> None:
        """Write batch ``number``'s part, recording this run and the hash of its input rows."""
        meta = {
            **(part.schema.metadata or {}),
            _RUN_KEY: json.dumps(self.run).encode(),
            _ROWS_KEY: rows_hash.encode(),
        }
        write_table(part.replace_schema_metadata(meta), self.path(number))

    def read(self, number: int, metadata: dict[bytes, bytes] | None) -> pa.Table:
        # checked as a whole by SampleSequence once the parts are joined
        return pq.read_table(self.path(number)).replace_schema_metadata(metadata)

    def drop_if_empty(self) -> None:
        if self.folder.is_dir() and not any(self.folder.glob("batch-*.parquet")):
            shutil.rmtree(self.folder)


# -- scheduling ----------------------------------------------------------------------------

_QUIET = 0.0002
"""CPU seconds: a turn of the event loop this cheap ran nothing but the task that waited.

The event loop's own thread's CPU time, not the wall clock: a turn in which the process was
merely descheduled (a busy machine) still counts as quiet."""


async def _quiet(turns: int = 50) -> int:
    """Wait for two turns of the event loop in a row in which nothing else ran; how many turns.

    Joining and writing a batch wait for them before each step, so that the answers already
    in are read and the next requests sent first: a late request delays the whole run, a late
    part nothing. Two turns, because what the loop has just read from a socket runs after the
    task that waits, in the same turn: only the next turn shows it. After ``turns`` turns it
    stops waiting.
    """
    quiet = 0
    for turn in range(1, turns + 1):
        before = time.thread_time()
        await asyncio.sleep(0)
        quiet = quiet + 1 if time.thread_time() - before < _QUIET else 0
        if quiet == 2:
            return turn
    return turns


class _Finishing:
    """The answered batches being joined and written: they finish even when the run stops."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()

    async def run(self, step: Coroutine[Any, Any, None]) -> None:
        """Run ``step`` to its end; cancelling the caller does not cancel it."""
        task = asyncio.create_task(step)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        await asyncio.shield(task)

    async def settle(self) -> None:
        """Wait for every batch still finishing as the run stops; log what could not be kept."""
        for outcome in await asyncio.gather(*self.tasks, return_exceptions=True):
            if isinstance(outcome, Exception):
                log.warning("an answered batch was not kept: %s", outcome)


async def _drive(
    todo: Iterable[int],
    work: Callable[[int], Coroutine[Any, Any, None]],
    tasks: int,
    done: Callable[[int], None],
) -> None:
    """Run ``work`` on each number, at most ``tasks`` at once; ``done`` after each.

    The first error (or a cancel, as Ctrl-C makes) cancels the work in flight and is raised
    once it has stopped.
    """
    queue = iter(todo)
    running: dict[asyncio.Task[None], int] = {}
    try:
        while True:
            for number in itertools.islice(queue, tasks - len(running)):
                running[asyncio.create_task(work(number))] = number
            if not running:
                return
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            failure: BaseException | None = None
            for task in sorted(finished, key=running.__getitem__):
                number = running.pop(task)
                if task.exception() is None:
                    done(number)
                elif failure is None:
                    failure = task.exception()
            if failure is not None:
                raise failure
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


def _run_async(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to its end, also from code already inside an event loop (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


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
    concurrency: int = 4,
    retry: Retry = Retry(),
    timeout: float = 120.0,
    on_batch: Callable[[int], None] | None = None,
) -> SampleSequence:
    """Send ``samples`` through ``stage`` ("audit", "fix" or "refine"); write and return the result.

    The result has the input's order and schema, with the stage blocks filled in. Up to
    ``concurrency`` requests are in flight at once. Finished batches wait in
    ``<output>.parts/`` until the whole run is done; rerunning the same call resumes from
    there, reusing a batch only if its input rows are the same. ``on_batch`` is called with
    each batch's number once its part is written; an exception it raises stops the run as
    Ctrl-C does (requests in flight are dropped, finished parts kept). The service address
    is ``base_url``, else the ``SDVM_BASE_URL`` environment variable, else the SDK's default.
    """
    base_url = base_url or os.environ.get("SDVM_BASE_URL") or None
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(
            f"batch_size must be 1..{MAX_BATCH} (the service's limit), got {batch_size}"
        )
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if not api_key:
        raise ServiceError("no API key: set SDVM_API_KEY")
    output = Path(output)
    parts = _Parts(
        output.with_name(output.name + ".parts"),
        {
            "stage": stage,
            "batch_size": batch_size,
            "conventions": conventions and hashlib.sha256(conventions.encode()).hexdigest()[:16],
        },
    )
    starts = range(0, len(samples), batch_size)
    todo = [
        n
        for n, start in enumerate(starts)
        if not parts.finished(n, samples.table.slice(start, batch_size))
    ]
    if len(todo) < len(starts):
        log.info(
            "resuming %s: %d of %d batches already done",
            stage,
            len(starts) - len(todo),
            len(starts),
        )
    call, close = _client(stage, api_key, base_url, conventions, timeout)
    made: dict[int, pa.Table] = {}  # the parts written in this run: not read back at the end

    async def work(
        number: int, gate: _Gate, slots: asyncio.Semaphore, finishing: _Finishing
    ) -> None:
        start = starts[number]
        batch = samples[start : start + batch_size]
        label = f"batch {number} (rows {start}..{start + len(batch) - 1})"
        sent = _with_ids(batch, start)  # no await before the slot: batches queue in order
        returned = await _send(call, sent, label, gate, slots)
        await finishing.run(finish(number, batch.table, sent, returned, label))

    async def finish(
        number: int, source: pa.Table, sent: list[_Tagged], returned: Any, label: str
    ) -> None:
        """Join the answer and write its part, each step at a quiet turn of the event loop.

        The Parquet write runs in a thread (it lets go of the GIL); a write under way when the
        run stops still completes, atomically.
        """
        await _quiet()
        joined = _join(sent, returned, label)
        await _quiet()
        part = _part_table(source, joined)
        rows_hash = _rows_hash(source)
        await _quiet()
        await asyncio.to_thread(parts.write, number, part, rows_hash)
        made[number] = part

    with _progress(len(starts), len(starts) - len(todo), stage) as bar:

        def done(number: int) -> None:
            bar.update(1)
            if on_batch is not None:
                on_batch(number)

        async def everything() -> None:
            gate, slots, finishing = _Gate(retry), asyncio.Semaphore(concurrency), _Finishing()
            try:  # twice the tasks as slots: a batch being joined and written holds none
                await _drive(todo, lambda n: work(n, gate, slots, finishing), 2 * concurrency, done)
            finally:
                try:
                    await finishing.settle()
                finally:
                    await close()

        try:
            _run_async(everything)
        except BaseException:
            parts.drop_if_empty()
            raise
    metadata = samples.table.schema.metadata
    tables = [
        made[n].replace_schema_metadata(metadata) if n in made else parts.read(n, metadata)
        for n in range(len(starts))
    ]
    result = pa.concat_tables(tables) if tables else samples.table
    write_table(result, output)
    shutil.rmtree(parts.folder, ignore_errors=True)
    # every part is the checked input's rows with columns built from checked samples
    return SampleSequence(result, source=str(output), validate=False)
