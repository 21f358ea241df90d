"""Atomic file writes: a crash or an error mid-write never leaves a partial file behind."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

_LIVE: set[Path] = set()
"""The temporary files of atomic writes under way: an interrupt removes them all, even one
that landed before its writer was bound to a name (see :func:`discard_unfinished`)."""

_STOPS = {signal.SIGINT, signal.SIGTERM}
"""Ctrl-C and SIGTERM: the signals an atomic write holds and worker threads leave alone."""

_FULL = ("ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EIO")
_WRITE_FAILURES = {getattr(errno, name) for name in _FULL if hasattr(errno, name)}
_WRITE_FAILURE_TEXTS = (
    "No space left on device",
    "Disk quota exceeded",
    "File too large",
    "Read-only file system",
    "Input/output error",
)


def _write_failure(error: BaseException | None) -> bool:
    """Whether ``error`` is a failure to write a file: a full disk, a quota, a read-only disk.

    pyarrow's own errors carry no errno, only the system's text.
    """
    if not isinstance(error, OSError):
        return False
    return error.errno in _WRITE_FAILURES or any(t in str(error) for t in _WRITE_FAILURE_TEXTS)


def named(error: OSError, destination: Path) -> OSError:
    """``error`` as an ``OSError`` that names ``destination`` (as it is if it names a file).

    The error returned is marked, so that an outer atomic file it passes through on its way
    up does not name itself instead.
    """
    if getattr(error, "sdvm_hf_named", False) or str(destination) in str(error):
        return error
    text = f"cannot write {destination}: {error.strerror or error}"
    new = OSError(error.errno, text) if error.errno is not None else OSError(text)
    new.sdvm_hf_named = True  # type: ignore[attr-defined]
    return new


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
    (a missing folder, a full disk) is an ``OSError`` naming it.
    """

    def __init__(self, destination: str | os.PathLike[str]) -> None:
        import tempfile  # (with shutil, bz2, lzma and random) only once a file is written

        self.destination = Path(destination)
        tmp = None
        try:
            self.destination.parent.mkdir(parents=True, exist_ok=True)
            with signals_held():  # made and listed at once: an interrupt finds it listed
                fd, tmp = tempfile.mkstemp(
                    dir=self.destination.parent, prefix=f".{self.destination.name}.", suffix=".tmp"
                )
                _LIVE.add(Path(tmp))
            os.close(fd)
            os.chmod(tmp, 0o666 & ~_umask())
        except BaseException as error:  # Ctrl-C or SIGTERM included: no temporary file left
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
                _LIVE.discard(Path(tmp))
            if isinstance(error, OSError):
                raise OSError(
                    error.errno, f"cannot write {self.destination}: {error.strerror}"
                ) from None
            raise
        self.path = Path(tmp)
        """The temporary file to write."""
        self._done = False

    def commit(self) -> None:
        """Move the written file into place."""
        if not self._done:
            self._done = True
            try:
                os.replace(self.path, self.destination)
                _LIVE.discard(self.path)
            except OSError as error:
                self.path.unlink(missing_ok=True)
                raise named(error, self.destination) from error
            except BaseException:
                self.path.unlink(missing_ok=True)
                raise

    def discard(self) -> None:
        """Remove the temporary file; the destination stays as it was."""
        self._done = True
        self.path.unlink(missing_ok=True)
        _LIVE.discard(self.path)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, *_: object
    ) -> None:
        if kind is None:
            self.commit()
            return
        self.discard()
        if isinstance(error, OSError) and _write_failure(error):  # a full disk names the file
            raise named(error, self.destination) from error


@contextlib.contextmanager
def atomic_path(destination: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``destination``; move it into place only on success.

    On any exception the temporary file is removed and the destination is left as it was
    (see :class:`AtomicFile`); an ``OSError`` (a full disk) names ``destination``.
    """
    with AtomicFile(destination) as file:
        try:
            yield file.path
        except OSError as error:
            raise named(error, file.destination) from error


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait (on POSIX, in the main thread) until the block is done."""
    main = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "pthread_sigmask") or not main:
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def block_signals_in_this_thread() -> None:
    """Leave Ctrl-C and SIGTERM to the main thread (call first thing in a worker thread).

    The OS delivers a process signal to any thread that does not block it; one delivered to
    a worker while the main thread holds signals (:func:`signals_held`) would still run the
    Python handler in the main thread inside the held block, between a temporary file's
    creation and its listing. Blocked here, it waits for the main thread to take it.
    """
    if hasattr(signal, "pthread_sigmask") and threading.current_thread() is not (
        threading.main_thread()
    ):
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)


def discard_unfinished() -> None:
    """Remove the temporary file of every atomic write still under way (after an interrupt)."""
    for path in list(_LIVE):
        path.unlink(missing_ok=True)
        _LIVE.discard(path)
