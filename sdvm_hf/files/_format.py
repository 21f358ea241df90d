"""A sample file's format, named by its extension."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

from sdvm_hf.errors import InputError

__all__ = ["FORMATS", "Format", "format_of", "not_a_file", "special_kind"]

Format = Literal["parquet", "jsonl", "jsonl.gz"]
"""A sample file's format, named by its extension."""

FORMATS: tuple[Format, ...] = ("parquet", "jsonl", "jsonl.gz")


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(mode: int) -> str | None:
    """What a file of this ``st_mode`` is when it is no regular file nor folder ("a FIFO ...")."""
    return next((kind for test, kind in _SPECIAL if test(mode)), None)


def not_a_file(path: str | os.PathLike[str], what: str = "a sample file") -> Exception:
    """The error for a path that is no regular file, saying what it is instead.

    A folder and a FIFO or device are named as such (opening a FIFO would wait for a writer),
    not as "no such file".
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return FileNotFoundError(f"no such file: {path}")
    if stat.S_ISDIR(mode):
        return IsADirectoryError(f"{path} is a folder, not a file; give {what}")
    kind = special_kind(mode)
    if kind is not None:
        return InputError(f"{path} is {kind}, not a regular file; give {what}")
    return FileNotFoundError(f"no such file: {path}")


def format_of(path: str | os.PathLike[str]) -> Format:
    """The format a file name says (``.parquet``, ``.jsonl``, ``.jsonl.gz``), or ``ValueError``."""
    name = Path(path).name
    for candidate in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(f".{candidate}"):
            return candidate
    raise InputError(
        f"{path}: cannot tell the sample file format; name it .parquet, .jsonl or .jsonl.gz"
    )
