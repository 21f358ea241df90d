"""A sample file's format, named by its extension."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from sdvm_hf.errors import InputError

__all__ = ["FORMATS", "Format", "format_of", "not_a_file"]

Format = Literal["parquet", "jsonl", "jsonl.gz"]
"""A sample file's format, named by its extension."""

FORMATS: tuple[Format, ...] = ("parquet", "jsonl", "jsonl.gz")


def not_a_file(path: str | os.PathLike[str]) -> OSError:
    """The error for a path that is no file: a folder is named as one, not as "no such file"."""
    if os.path.isdir(path):
        return IsADirectoryError(f"{path} is a folder, not a file; give a sample file")
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
