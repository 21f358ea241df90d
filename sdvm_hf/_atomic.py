"""Atomic file writes: a crash or an error mid-write never leaves a partial file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class AtomicFile:
    """A file written beside ``destination`` under a temporary name, moved into place on commit.

    The temporary file lives in the same folder, so the final ``os.replace`` is atomic on
    POSIX and Windows. Used as a context manager it commits on success and is discarded on
    any exception, leaving the destination as it was; :meth:`discard` inside the block
    leaves it as it was too. The file gets the usual permissions (``0o666`` less the
    umask), not the private ones of a temporary file; a destination that cannot be written
    is an ``OSError`` naming it.
    """

    def __init__(self, destination: str | os.PathLike[str]) -> None:
        self.destination = Path(destination)
        try:
            self.destination.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(
                dir=self.destination.parent, prefix=f".{self.destination.name}.", suffix=".tmp"
            )
        except OSError as error:
            raise OSError(
                error.errno, f"cannot write {self.destination}: {error.strerror}"
            ) from None
        os.close(fd)
        self.path = Path(tmp)
        """The temporary file to write."""
        self._done = False
        try:
            os.chmod(self.path, 0o666 & ~_umask())
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        """Move the written file into place."""
        if not self._done:
            self._done = True
            try:
                os.replace(self.path, self.destination)
            except BaseException:
                self.path.unlink(missing_ok=True)
                raise

    def discard(self) -> None:
        """Remove the temporary file; the destination stays as it was."""
        self._done = True
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


@contextlib.contextmanager
def atomic_path(destination: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``destination``; move it into place only on success.

    On any exception the temporary file is removed and the destination is left as it was
    (see :class:`AtomicFile`).
    """
    with AtomicFile(destination) as file:
        yield file.path
