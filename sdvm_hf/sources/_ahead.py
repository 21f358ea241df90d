"""Reading ahead: the next batches of a stream read in a thread while this one is converted.

pyarrow reads and decodes a Parquet row group (and writes one) with the GIL released, so a
stream whose reading runs beside the conversion and the writing takes about the longest of
the three rather than their sum. At most ``depth`` batches wait, so memory stays flat.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from typing import TypeVar

from sdvm_hf._atomic import block_signals_in_this_thread

__all__ = ["read_ahead"]

T = TypeVar("T")

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
        block_signals_in_this_thread()  # Ctrl-C and SIGTERM stay the main thread's
        try:
            for item in items:
                if not put(item):
                    return
        except BaseException as error:  # handed to the reader, in order
            put(_Failed(error))
            return
        put(_DONE)

    thread = threading.Thread(target=run, name="sdvm_hf-read-ahead", daemon=True)
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
        close = getattr(items, "close", None)
        if close is not None:
            close()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error
