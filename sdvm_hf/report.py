"""A sample file's report: read the file (and its rejects and original) into a :class:`Report`.

:func:`build_report` reads a file once for the counts (its
:class:`~sdvm_hf.summary.Summary`) and once more for the few example rows, and the same rows
of the stage's input, the original, for the before/after diffs; the conversion's rejects are
found through the file's record. :func:`write_report` writes it as one self-contained HTML
page or as JSON, by the renderers of :mod:`sdvm_hf.render`, whose :func:`report_html`,
:func:`report_json` and :class:`Report` are importable from here too.
"""

from __future__ import annotations

import itertools
import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Literal

from sdvm_hf._atomic import atomic_path
from sdvm_hf.arrow import canonical
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.diff import samples_at
from sdvm_hf.errors import InputError
from sdvm_hf.files import format_of, jsonl_records, parquet_batches, read_samples
from sdvm_hf.record import Record, read_record
from sdvm_hf.render.html import report_html
from sdvm_hf.render.json import report_json
from sdvm_hf.render.model import Report
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.summary import EXAMPLES, TOP_GROUPS, Summary, Tally

log = logging.getLogger(__name__)

__all__ = [
    "Report",
    "ReportFormat",
    "build_report",
    "rejects_of",
    "report_format",
    "report_html",
    "report_json",
    "write_report",
]

ReportFormat = Literal["html", "json"]
"""A report's encoding."""


def rejects_of(record: Record | None, path: str | os.PathLike[str]) -> tuple[Path, int | None]:
    """Where a sample file's conversion rejects are, and how many the record says there were.

    The record's ``rejects`` (kept through every stage) when it has them, else the rejects
    file beside the file (``NAME.rejects.jsonl``, :func:`sdvm_hf.jobs.rejects_path`). A
    record is not trusted blindly: a path not named like a rejects file (``*.jsonl``) is not
    read, and a count that is not a number of rows is dropped.
    """
    where, count = (None, None) if record is None else record.rejects_file(path)
    if count is not None and count < 0:
        count = None
    if where is not None and where.name.endswith(".jsonl"):
        return where, count
    if where is not None:
        log.warning(
            "%s: its record names %s as its rejects, not a JSON Lines file: not read", path, where
        )
    file = Path(path)
    stem = file.name.removesuffix(f".{format_of(file)}")  # the rule of jobs.rejects_path
    return file.with_name(f"{stem}.rejects.jsonl"), None


_ROWS = 16_384
"""Rows of a sample file (or rejects) summarised at a time."""


def build_report(
    path: str | os.PathLike[str],
    *,
    original: str | os.PathLike[str] | None = None,
    examples: int = EXAMPLES,
    group_by: str | None = None,
    top: int | None = TOP_GROUPS,
) -> Report:
    """Summarise a sample file, its conversion's rejects, and a few samples per check.

    The rejects are those its record names (or the file beside it); the before/after diffs
    of fixed samples are against ``original``, or the stage's input its record names (when
    that file is there). ``examples`` samples per check, ``group_by`` and ``top`` as in
    :func:`~sdvm_hf.summary.summarize`.
    """
    if examples < 0:
        raise InputError(f"examples: expected 0 or more, got {examples}")
    record = read_record(path)
    tally = Tally(group_by, top=top, examples=examples)
    if format_of(path) == "parquet":
        for part in parquet_batches(path, _ROWS):  # the schema checked, not every row:
            tally.add(canonical(part))  # that is what validate is for
    else:  # a JSON Lines file is read whole: its extra's storage is known only at the end
        tally.add(read_samples(path).table)
    rejects, count = rejects_of(record, path)
    rejects_from = None
    if rejects.is_file():
        rejects_from = str(rejects)
        records = (item for _, item in jsonl_records(rejects))
        tally.add_rejects([])
        while chunk := list(itertools.islice(records, _ROWS)):
            tally.add_rejects(Rejects.from_records(chunk))
        if count is not None and count != tally.rejected:
            log.warning(
                "%s: its record counts %d rejects, %s holds %d: the report shows the file's",
                path,
                count,
                rejects,
                tally.rejected,
            )
    summary = tally.summary()
    if rejects_from is None and count is not None:  # the record counts them; the file is gone
        reason = f"(the reasons were in {rejects}, which is missing)"
        summary = replace(
            summary, rows_in=summary.samples + count, rejects={reason: count} if count else {}
        )
    wanted = {
        row for checks in summary.examples.values() for rows in checks.values() for row in rows
    }
    wanted.update(summary.fixed_examples)
    samples, _ = samples_at(path, wanted) if wanted else ({}, summary.samples)
    named = None if record is None else record.stage_input(path)
    if original is None and named is not None:
        original = named if named.is_file() else None
    originals: dict[int, MultipleChoiceSample] = {}
    if original is not None:
        originals, rows = samples_at(original, wanted)
        if rows != summary.samples:
            raise InputError(
                f"original {original}: expected {summary.samples:,} rows, as {path} has (a "
                f"stage keeps every row), got {rows:,}"
            )
    return Report(
        summary,
        Path(path).name,
        samples,
        originals,
        None if original is None else str(original),
        rejects_from,
    )


def report_format(path: str | os.PathLike[str]) -> ReportFormat:
    """The format a report's file name says (``.html``, ``.htm``, ``.json``)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".html", ".htm"):
        return "html"
    if suffix == ".json":
        return "json"
    raise InputError(f"{path}: cannot tell the report format; name it .html or .json")


def write_report(
    report: Report | Summary,
    path: str | os.PathLike[str],
    format: ReportFormat | None = None,
    title: str | None = None,
) -> None:
    """Write the report to ``path`` atomically, in ``format`` or the one its name says."""
    json_format = (format or report_format(path)) == "json"
    text = report_json(report) if json_format else report_html(report, title)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
