"""One run per output: ``<output>.lock`` names the run that holds it (PID, start time).

A service stage's output file and an export's folder are each written by one run at a time.

A second run on the same output stops at once, naming the first. A lock whose process is
gone (killed, the machine restarted) is taken over. On POSIX the lock is also an ``flock``
on the file, which the system lets go of when the process dies, whatever its PID.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from sdvm_hf.errors import SdvmHfError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the PID alone decides
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("sdvm_hf")


def lock_path(output: Path) -> Path:
    """Where ``output``'s lock lives: ``<output>.lock`` beside it."""
    return output.with_name(output.name + ".lock")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except OSError:
        return False
    return True


def _holder(path: Path) -> dict[str, object]:
    try:
        record = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _describe(record: dict[str, object]) -> str:
    started = record.get("started")
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started))
        if isinstance(started, int | float)
        else "an unknown time"
    )
    host = record.get("host")
    where = f" on {host}" if isinstance(host, str) and host != socket.gethostname() else ""
    return f"PID {record.get('pid', '?')}{where}, started {when}"


@contextlib.contextmanager
def output_lock(output: Path, error: type[SdvmHfError]) -> Iterator[None]:
    """Hold ``output``'s lock while the block runs; ``error`` naming its holder if taken."""
    path = lock_path(output)
    try:
        fd = _take(path, output, error)
    except OSError as error:
        raise OSError(error.errno, f"cannot lock {path}: {error.strerror or error}") from None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def _take(path: Path, output: Path, error: type[SdvmHfError]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(10):  # another run may take or drop the lock between two steps
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                _refuse(path, output, _holder(path), error)
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the run before let go and removed the file we opened: try again
            os.close(fd)
            continue
        record = _holder(path)
        pid = record.get("pid")
        if isinstance(pid, int) and pid != os.getpid() and (fcntl is None and _alive(pid)):
            os.close(fd)
            _refuse(path, output, record, error)
        if record:
            stale = _describe(record)
            log.warning("taking over the stale lock %s (%s, no longer running)", path, stale)
        mine = {"pid": os.getpid(), "started": round(time.time(), 3), "host": socket.gethostname()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(mine).encode(), 0)
        return fd
    raise error(f"{path}: cannot take the lock of {output}; try again")


def _refuse(path: Path, output: Path, record: dict[str, object], error: type[SdvmHfError]) -> None:
    raise error(
        f"{output} is being written by another run ({_describe(record)}; lock {path}); "
        "wait for it to finish or stop it, then rerun"
    )
