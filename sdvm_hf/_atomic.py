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


@contextlib.contextmanager
def atomic_path(destination: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``destination``; move it into place only on success.

    The temporary file lives in the same folder, so the final ``os.replace`` is atomic on
    POSIX and Windows. On any exception the temporary file is removed and the destination is
    left as it was. The file gets the usual permissions (``0o666`` less the umask), not the
    private ones of a temporary file; a destination that cannot be written is an ``OSError``
    naming it.
    """
    destination = Path(destination)
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            dir=destination.parent, prefix=f".{destination.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise OSError(error.errno, f"cannot write {destination}: {error.strerror}") from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        os.chmod(tmp_path, 0o666 & ~_umask())
        yield tmp_path
        os.replace(tmp_path, destination)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
