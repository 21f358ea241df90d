"""Lines into a gzip file, compressed in a thread beside the one that makes them.

zlib releases the GIL while it compresses, so the lines of the next documents are made on one
core while the last ones are packed on the other. Lines are handed over in pieces of a few
MiB (a bounded queue: memory stays flat). A file of two gzip members is one gzip stream to
every reader (``gzip.open``, ``zcat``), so the unconditional requests, written to a second
file as they come, are appended to the first as they are, not packed again.
"""

from __future__ import annotations

import gzip
import queue
import shutil
import threading
from pathlib import Path
from types import TracebackType

from sdvm_hf._atomic import block_signals_in_this_thread

__all__ = ["COMPRESSION", "GzipLines", "append_file"]

COMPRESSION = 1
"""The gzip level: a document is repeated in each of its requests' lines, so the first level
already packs them about 10:1, at several times the speed of the default."""

PIECE = 4 << 20
"""About how many characters are handed to the compressing thread at a time."""


class GzipLines:
    """Write lines (without their newline) to a gzip file, compressed in a thread."""

    def __init__(self, path: str | Path) -> None:
        """Open ``path`` for writing and start the thread."""
        self._file = gzip.open(path, "wb", compresslevel=COMPRESSION)  # noqa: SIM115 (closed by close)
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
        self._parts: list[str] = []
        self._size = 0
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="sdvm_hf-gzip", daemon=True)
        self._thread.start()

    def write(self, line: str) -> None:
        """Add one line."""
        self._parts.append(line)
        self._size += len(line)
        if self._size >= PIECE:
            self._hand_over()

    def _hand_over(self) -> None:
        if self._error is not None:
            raise self._error
        if self._parts:
            self._parts.append("")
            self._queue.put("\n".join(self._parts).encode("utf-8"))
            self._parts, self._size = [], 0

    def _run(self) -> None:
        block_signals_in_this_thread()
        while (piece := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._file.write(piece)
                except BaseException as error:  # raised in the writing thread
                    self._error = error

    def close(self) -> None:
        """Write what is left, stop the thread and close the file; raise its error if any."""
        try:
            self._hand_over()
        finally:
            self._queue.put(None)
            self._thread.join()
            self._file.close()
        if self._error is not None:
            raise self._error

    def __enter__(self) -> GzipLines:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
            return
        self._parts = []  # an error: stop, keep nothing more
        self._queue.put(None)
        self._thread.join()
        self._file.close()


def append_file(path: str | Path, other: str | Path) -> None:
    """Append the bytes of ``other`` (a whole gzip file) to ``path``: one more gzip member."""
    with open(path, "ab") as target, open(other, "rb") as source:
        shutil.copyfileobj(source, target, 1 << 20)
