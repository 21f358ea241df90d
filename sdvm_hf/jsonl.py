"""SDVM wire samples as JSON Lines: one wire dict per line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from sdvm_hf._files import atomic_path
from sdvm_hf.samples import MultipleChoiceSample


def write_jsonl(samples: Iterable[MultipleChoiceSample], path: str | os.PathLike[str]) -> int:
    """Write ``samples`` to ``path``, one wire dict per line (UTF-8); return how many.

    The file appears only when every line is written.
    """
    count = 0
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        for sample in samples:
            out.write(json.dumps(sample.to_dict(), ensure_ascii=False, allow_nan=False))
            out.write("\n")
            count += 1
    return count


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[MultipleChoiceSample]:
    """Yield typed samples from a wire JSON Lines file (e.g. what the service returned).

    Blank lines are skipped. A bad line raises ``ValueError`` naming the file and line.
    """
    path = Path(path)
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield MultipleChoiceSample.from_dict(json.loads(line))
            except ValueError as error:  # JSONDecodeError and ValidationError are ValueErrors
                raise ValueError(f"{path}, line {number}: {error}") from error


def read_jsonl(path: str | os.PathLike[str]) -> list[MultipleChoiceSample]:
    """Read a wire JSON Lines file into a list of typed samples."""
    return list(iter_jsonl(path))
