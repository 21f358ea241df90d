"""Reading ahead: the next batches of a stream read in a thread while this one is converted.

pyarrow reads and decodes a Parquet row group (and writes one) with the GIL released, so a
stream whose reading runs beside the conversion and the writing takes about the longest of
the three rather than their sum. At most ``depth`` batches wait, so memory stays flat.
:func:`in_order` parses several blocks at once (JSON Lines), handing them back in order.
"""

from __future__ import annotations

import collections
import contextvars
import os
import queue
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from sdvm_hf._atomic import block_signals_in_this_thread
from sdvm_hf._priority import work_ahead

__all__ = ["close", "in_order", "read_ahead"]

T = TypeVar("T")
U = TypeVar("U")

_DONE = object()


def read_ahead(items: Iterator[T], depth: int = 1) -> Generator[T, None, None]:
    """``items`` in order, each read in a thread while the one before it is used.

    An error raised while reading is raised here, where that item would have come. Closing
    the iterator early (``take``, an error downstream) stops the thread at its next item.
    """
    waiting: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                waiting.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        _worker()
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as error:  # handed to the reader, in order
            put(_Failed(error))
            return
        put(_DONE)

    # the thread reads in the caller's context (as ``asyncio.to_thread`` does): a setting the
    # caller made for its reads (``_restart.restartable``) holds for the reads done ahead
    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run, args=(run,), name="sdvm_hf-read-ahead", daemon=True
    )
    thread.start()
    try:
        while True:
            item = waiting.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        thread.join()
        close(items)


def workers() -> int:
    """Threads for work that scales with cores: one per core, at most four."""
    return max(1, min(4, os.cpu_count() or 1))


def in_order(
    work: Callable[[T], U], items: Iterable[T], threads: int | None = None
) -> Generator[U, None, None]:
    """``work(item)`` of each item, in the items' order, ``threads`` of them running at once.

    ``work`` should release the GIL (a pyarrow parse does). At most one more item than there
    are threads is taken ahead, so memory stays flat; an error (of the work, or of taking
    the next item) is raised where that item's result would have come, and closing early
    waits only for the work already running.
    """
    threads = threads or workers()
    pool = ThreadPoolExecutor(threads, "sdvm_hf-parse", initializer=_worker)
    running: collections.deque[Future[U]] = collections.deque()
    source = iter(items)
    try:
        while True:
            try:
                item = next(source)
            except StopIteration:
                break
            except BaseException:  # the items before it come first, as they would have
                while running:
                    yield running.popleft().result()
                raise
            running.append(pool.submit(work, item))
            if len(running) > threads:
                yield running.popleft().result()
        while running:
            yield running.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        close(source)  # the items' own threads stop too


def close(items: Iterable[object]) -> None:
    """Close ``items`` if it can be closed (a generator: its ``finally`` runs, its threads stop)."""
    closer = getattr(items, "close", None)
    if closer is not None:
        closer()


def _worker() -> None:
    """First thing in a thread that works ahead of its caller."""
    block_signals_in_this_thread()  # Ctrl-C and SIGTERM stay the main thread's
    work_ahead()  # the caller waits for its work; it goes first


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error
