"""Scheduling: batches in flight at once, finishing what was answered, and stopping by draining.

A stop (the first error, a first Ctrl-C, an ``on_batch`` that raises) sends no new request:
the batches waiting for a slot or a retry are dropped, the requests on the wire are awaited
(at most ``drain`` seconds) and their answers kept, then the stop is raised. A second Ctrl-C
ends the wait at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from sdvm_hf.service._retry import Flight, NotSent

log = logging.getLogger("sdvm_hf.service.roundtrip")
T = TypeVar("T")

QUIET = 0.0002
"""CPU seconds: a turn of the event loop this cheap ran nothing but the task that waited.

The event loop's own thread's CPU time, not the wall clock: a turn in which the process was
merely descheduled (a busy machine) still counts as quiet."""

NOTICE = 1.0
"""Seconds of draining after which the wait is explained in the log."""


async def quiet(turns: int = 50) -> int:
    """Wait for two turns of the event loop in a row in which nothing else ran; how many turns.

    Joining and writing a batch wait for them before each step, so that the answers already
    in are read and the next requests sent first: a late request delays the whole run, a late
    part nothing. Two turns, because what the loop has just read from a socket runs after the
    task that waits, in the same turn: only the next turn shows it. After ``turns`` turns it
    stops waiting.
    """
    still = 0
    for turn in range(1, turns + 1):
        before = time.thread_time()
        await asyncio.sleep(0)
        still = still + 1 if time.thread_time() - before < QUIET else 0
        if still == 2:
            return turn
    return turns


class Finishing:
    """The answered batches being joined and written: they finish even when the run stops."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()
        self.turn = asyncio.Lock()

    async def quiet(self, wait: Callable[[], Awaitable[object]]) -> None:
        """Wait (with ``wait``) for quiet turns of the event loop, one batch at a time.

        Batches waiting side by side keep the loop busy for each other: at 16 in flight most
        never saw a quiet turn, and spun the 50 turns :func:`quiet` allows before giving up.
        The lock is fair, so the batches finish in the order they were answered.
        """
        async with self.turn:
            await wait()

    async def run(self, step: Coroutine[Any, Any, None]) -> None:
        """Run ``step`` to its end; cancelling the caller does not cancel it.

        An error of ``step`` is marked ``answered``: the batch was answered but not kept.
        """
        task = asyncio.create_task(step)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        try:
            await asyncio.shield(task)
        except Exception as error:
            error.answered = True  # type: ignore[attr-defined]
            raise

    async def settle(self) -> None:
        """Wait for every batch still finishing as the run stops; log what could not be kept."""
        for outcome in await asyncio.gather(*self.tasks, return_exceptions=True):
            if isinstance(outcome, Exception):
                log.warning("an answered batch was not kept: %s", outcome)


async def drive(
    todo: Iterable[int],
    work: Callable[[int], Coroutine[Any, Any, None]],
    tasks: int,
    done: Callable[[int], None],
    flight: Flight,
    drain: float,
) -> None:
    """Run ``work`` on each number, at most ``tasks`` at once; ``done`` after each.

    The first error, a cancel (a first Ctrl-C) or an error of ``done`` stops the run: it
    drains (see the module) and then raises that first error.
    """
    queue = iter(todo)
    running: dict[asyncio.Task[None], int] = {}
    failure: BaseException | None = None
    try:
        while failure is None:
            for number in itertools.islice(queue, tasks - len(running)):
                running[asyncio.create_task(work(number))] = number
            if not running:
                return
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            failure = _collect(finished, running, done)
    except BaseException as stop:  # a cancel: the first Ctrl-C
        failure = stop
    try:
        await _drain(running, done, flight, drain)
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
    raise failure


def _collect(
    finished: set[asyncio.Task[None]],
    running: dict[asyncio.Task[None], int],
    done: Callable[[int], None],
) -> BaseException | None:
    """Call ``done`` for each finished batch in order; the first error, of a batch or ``done``."""
    failure: BaseException | None = None
    for task in sorted(finished, key=running.__getitem__):
        number = running.pop(task)
        error = task.exception()
        if error is None:
            try:
                done(number)
            except BaseException as stop:  # an on_batch that stops the run
                failure = failure or stop
        elif failure is None:
            failure = error
    return failure


async def _drain(
    running: dict[asyncio.Task[None], int],
    done: Callable[[int], None],
    flight: Flight,
    drain: float,
) -> None:
    """Stop sending, await the requests on the wire and keep their answers."""
    flight.stopping = True
    for task, number in running.items():
        if number not in flight.sending:  # waiting for a slot, a retry, or being finished
            task.cancel()
    if not running:
        return
    _, pending = await asyncio.wait(running, timeout=min(NOTICE, drain))
    if pending and drain > NOTICE:
        on_wire = sorted(running[task] for task in pending)
        log.warning(
            "stopping: waiting up to %.0fs for the answers to batch %s, already sent "
            "(Ctrl-C again to stop at once and send them again on rerun)",
            drain,
            ", ".join(map(str, on_wire)),
        )
        await asyncio.wait(pending, timeout=drain - NOTICE)
    for task in sorted((t for t in running if t.done()), key=running.__getitem__):
        number = running.pop(task)
        if task.cancelled():
            continue
        error = task.exception()
        if error is None:
            with contextlib.suppress(BaseException):  # already stopping
                done(number)
        elif isinstance(error, NotSent):
            continue
        elif getattr(error, "answered", False):
            log.warning("an answered batch was not kept: %s", error)
        else:
            log.warning("a batch in flight was not answered: %s", error)


def run_async(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to its end, also from code already inside an event loop (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()
