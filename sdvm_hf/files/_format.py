"""A sample file's format, named by its extension."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from sdvm_hf.errors import InputError

__all__ = ["FORMATS", "Format", "format_of"]

Format = Literal["parquet", "jsonl", "jsonl.gz"]
"""A sample file's format, named by its extension."""

FORMATS: tuple[Format, ...] = ("parquet", "jsonl", "jsonl.gz")


def format_of(path: str | os.PathLike[str]) -> Format:
    """The format a file name says (``.parquet``, ``.jsonl``, ``.jsonl.gz``), or ``ValueError``."""
    name = Path(path).name
    for candidate in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(f".{candidate}"):
            return candidate
    raise InputError(
        f"{path}: cannot tell the sample file format; name it .parquet, .jsonl or .jsonl.gz"
    )
