"""The jobs the ``sdvm-hf`` command runs, as plain functions Python users can call too.

Each subcommand is a few lines over one of these: :func:`convert_to_files` (write the samples
and the rejects beside them, summarise), :func:`inspect_file`, :func:`validate_file` and
:func:`report_file`. The service stages are :func:`sdvm_hf.service.run_stage`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from sdvm_hf._atomic import atomic_path
from sdvm_hf.arrow._validate import canonical, check_schema, find_problems
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.errors import Problem, Reject
from sdvm_hf.files import Format, format_of, jsonl_records, read_samples, write_samples
from sdvm_hf.report import ReportFormat, write_report
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.summary import Summary, summarize


def rejects_path(output: str | os.PathLike[str]) -> Path:
    """Where the rejects of a conversion go: ``NAME.rejects.jsonl`` beside the output."""
    output = Path(output)
    return output.with_name(output.name.split(".")[0] + ".rejects.jsonl")


def write_rejects(rejects: Sequence[Reject], path: str | os.PathLike[str]) -> None:
    """Write rejects as JSON Lines: row, column, reason and the original row."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        for reject in rejects:
            record = {
                "row": reject.row,
                "column": reject.where,
                "expected": reject.expected,
                "got": reject.got,
                "note": reject.note,
                "original": reject.original,
            }
            out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


def read_rejects(path: str | os.PathLike[str]) -> list[Reject]:
    """Read a rejects file that :func:`write_rejects` wrote."""
    return [
        Reject(
            row=record["row"],
            path=(record["column"],),
            expected=record["expected"],
            got=record["got"],
            note=record.get("note") or "",
            original=record.get("original") or {},
        )
        for _, record in jsonl_records(path)
    ]


@dataclass(frozen=True)
class Converted:
    """What :func:`convert_to_files` wrote."""

    output: Path
    """The sample file."""
    rejects: Path | None
    """The rejects file beside it, when rows were left out."""
    summary: Summary
    """Rows in, samples out, rejects by reason, distributions."""


def convert_to_files(
    samples: SampleSequence, output: str | os.PathLike[str], format: Format | None = None
) -> Converted:
    """Write converted samples to ``output`` and their rejects beside it; summarise them."""
    output = Path(output)
    write_samples(samples, output, format)
    rejects = None
    if samples.rejects:
        rejects = rejects_path(output)
        write_rejects(samples.rejects, rejects)
    return Converted(output, rejects, summarize(samples.table, samples.rejects))


def inspect_file(path: str | os.PathLike[str]) -> Summary:
    """What a sample file holds: classes, styles, choices, answer positions, extra, verdicts."""
    return summarize(read_samples(path).table)


def report_file(
    path: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    format: ReportFormat | None = None,
    group_by: str | None = None,
) -> Summary:
    """Summarise a sample file with its groups and the rejects file beside it, if any.

    With ``output``, also write the report there: HTML (``.html``) or JSON (``.json``), or
    ``format``. ``group_by`` names the extra key to break the samples down by.
    """
    beside = rejects_path(path)
    rejects = read_rejects(beside) if beside.is_file() else None
    summary = summarize(read_samples(path).table, rejects, group_by=group_by)
    if output is not None:
        write_report(summary, output, format, title=Path(path).name)
    return summary


@dataclass(frozen=True)
class Validation:
    """What :func:`validate_file` found."""

    rows: int
    """How many rows (or non-blank lines) the file holds."""
    problems: list[Problem | str]
    """Every problem, first rows first; a JSON Lines problem is a line's message."""


def validate_file(path: str | os.PathLike[str]) -> Validation:
    """Check every row of a sample file (Parquet, or wire JSON Lines)."""
    problems: list[Problem | str] = []
    if format_of(path) == "parquet":
        table = pq.read_table(path)
        check_schema(table.schema, str(path))
        return Validation(table.num_rows, list(find_problems(canonical(table))))
    rows = 0
    for number, record in jsonl_records(path, keep_going=True):
        rows += 1
        try:
            if isinstance(record, ValueError):
                raise record
            MultipleChoiceSample.from_dict(record)
        except ValueError as error:
            problems.append(f"line {number}: {error}".replace("\n", " "))
    return Validation(rows, problems)
