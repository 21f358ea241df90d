"""SDVM wire JSON Lines: one wire dict per line (gzip for ``.jsonl.gz``)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from sdvm_hf._atomic import atomic_path
from sdvm_hf.arrow.sequence import SampleBatches, SampleSequence, samples_to_table
from sdvm_hf.errors import InputError
from sdvm_hf.files._format import not_a_file

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["iter_jsonl", "jsonl_records", "parse_json", "read_jsonl", "write_jsonl"]


def _open_text(path: Path, mode: Literal["r", "w"], gz: bool) -> IO[str]:
    if gz:
        import gzip  # only for .gz files

        return gzip.open(path, f"{mode}t", encoding="utf-8")  # type: ignore[return-value]
    return path.open(mode, encoding="utf-8")


def write_jsonl(samples: Iterable[MultipleChoiceSample], path: str | os.PathLike[str]) -> int:
    """Write ``samples`` to ``path``, one wire dict per line (UTF-8; gzip for ``.gz``).

    Returns how many; the file appears only when every line is written. Every sample is
    checked before anything is written (a sample built around the validators, e.g. with
    ``model_construct``, is refused).
    """
    if not isinstance(samples, SampleBatches):  # loaded and streamed samples come checked
        samples = [_checked(sample) for sample in samples]
    count = 0
    with atomic_path(path) as tmp, _open_text(tmp, "w", str(path).endswith(".gz")) as out:
        for sample in samples:
            out.write(_wire_line(sample))
            count += 1
    return count


def _wire_line(sample: MultipleChoiceSample) -> str:
    return json.dumps(sample.to_dict(), ensure_ascii=False, allow_nan=False) + "\n"


def _checked(sample: MultipleChoiceSample) -> MultipleChoiceSample:
    return type(sample)(**sample.__dict__)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"the number {text} is out of range (JSON has no infinity)")
    return value


def _no_constant(token: str) -> Any:
    raise InputError(f"{token} is not JSON")


def parse_json(text: str) -> Any:
    """Strict JSON: no ``NaN``/``Infinity``, no number that overflows to infinity.

    Nesting too deep for Python's parser is a ``ValueError`` like any other bad line.
    """
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise InputError("nested too deeply to parse") from None


def jsonl_records(
    path: str | os.PathLike[str], *, keep_going: bool = False
) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for each non-blank line of a JSON Lines file.

    A line that is not JSON raises ``ValueError`` naming the file and line, or with
    ``keep_going`` is yielded as that error in place of the value.
    """
    path = Path(path)
    if not path.is_file():
        raise not_a_file(path)
    with _open_text(path, "r", path.name.endswith(".gz")) as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield number, parse_json(line)
            except ValueError as error:
                if not keep_going:
                    raise InputError(f"{path}, line {number}: {error}") from error
                yield number, error


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[MultipleChoiceSample]:
    """Yield typed samples from a wire JSON Lines file (e.g. what the service returned).

    Blank lines are skipped. A bad line raises ``ValueError`` naming the file and line.
    """
    from sdvm_hf.samples import MultipleChoiceSample  # pydantic, when a sample is built

    for number, record in jsonl_records(path):
        try:
            yield MultipleChoiceSample.from_dict(record)
        except ValueError as error:  # ValidationError is a ValueError
            raise InputError(f"{path}, line {number}: {error}") from error


def read_jsonl(path: str | os.PathLike[str]) -> SampleSequence:
    """Read a wire JSON Lines file as a lazy sequence of typed samples, as :func:`read_parquet`.

    :func:`iter_jsonl` streams the file instead.
    """
    return SampleSequence(samples_to_table(iter_jsonl(path)), source=str(path))
