"""The jobs the ``sdvm-hf`` command runs, as plain functions Python users can call too.

Each subcommand is a few lines over one of these: :func:`convert_to_files` (write the samples
and the rejects beside them, summarise), :func:`inspect_file`, :func:`validate_file` and
:func:`report_file`. The service stages are :func:`sdvm_hf.service.run_stage`.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from sdvm_hf._atomic import AtomicFile
from sdvm_hf._progress import bar
from sdvm_hf._restart import at_most_twice
from sdvm_hf.arrow import canonical, find_problems
from sdvm_hf.arrow.rejects import Rejects, json_line
from sdvm_hf.arrow.sequence import SampleBatches
from sdvm_hf.errors import InputError, Problem
from sdvm_hf.files import (
    Format,
    SampleWriter,
    converted_record,
    format_of,
    iter_parquet_tables,
    jsonl_records,
    parquet_batches,
    read_samples,
)
from sdvm_hf.report import ReportFormat, build_report, write_report
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.summary import Summary, Tally

__all__ = [
    "Converted",
    "Validation",
    "convert_to_files",
    "inspect_file",
    "read_rejects",
    "rejects_path",
    "report_file",
    "validate_file",
]


def rejects_path(output: str | os.PathLike[str]) -> Path:
    """Where a conversion's rejects go: the output's whole name, ``.rejects.jsonl`` for its format.

    >>> rejects_path("out/hs.v1.parquet"), rejects_path("mmlu.jsonl.gz")
    (PosixPath('out/hs.v1.rejects.jsonl'), PosixPath('mmlu.rejects.jsonl'))
    """
    output = Path(output)
    stem = output.name.removesuffix(f".{format_of(output)}")
    return output.with_name(f"{stem}.rejects.jsonl")


def write_rejects(rejects: Rejects, out: IO[str]) -> str:
    """Write rejects as strict JSON Lines: row, kind, column, expected, got, note, original row.

    What JSON cannot carry in an original row is written as text (see
    :func:`~sdvm_hf.arrow.rejects.json_line`): ``NaN`` and infinities as ``"NaN"``,
    ``"Infinity"``, ``"-Infinity"``.
    """
    text = "".join(json_line(record) + "\n" for record in rejects.records())
    out.write(text)
    return text  # what was written, for the record's hash of the file


def read_rejects(path: str | os.PathLike[str]) -> Rejects:
    """Read a rejects file that :func:`write_rejects` wrote."""
    return Rejects.from_records([record for _, record in jsonl_records(path)])


def check_output(
    output: str | os.PathLike[str],
    inputs: Iterable[str | os.PathLike[str]] = (),
    format: Format | None = None,
) -> Format:
    """The format to write ``output`` in, checked before any work starts.

    Refuses a name whose extension is not a sample file format (or disagrees with
    ``format``), a folder, and an output or its rejects file that is one of the ``inputs``:
    a run never overwrites its own source.
    """
    named = format_of(output)
    if format is not None and format != named:
        raise InputError(f"{output}: the name says {named}, but the format asked for is {format}")
    if Path(output).is_dir():
        raise InputError(f"{output} is a folder; name a file to write")
    written = {Path(output).resolve(): output, rejects_path(output).resolve(): rejects_path(output)}
    for source in inputs:
        clash = written.get(Path(source).resolve())
        if clash is not None:
            raise InputError(f"{clash} is also an input; write the output to another file")
    return named


@dataclass(frozen=True)
class Converted:
    """What :func:`convert_to_files` wrote."""

    output: Path | None
    """The sample file, or ``None`` when every row was rejected (then nothing is written)."""
    rejects: Path | None
    """The rejects file beside it, when rows were left out."""
    summary: Summary
    """Rows in, samples out, rejects by reason, distributions."""


def convert_to_files(
    samples: SampleBatches,
    output: str | os.PathLike[str],
    format: Format | None = None,
) -> Converted:
    """Write converted samples to ``output`` and their rejects beside it; summarise them.

    A :class:`~sdvm_hf.StreamingSamples` is converted, written and summarised
    batch by batch (samples, rejects and summary alike), so memory stays flat at any size.
    When every row is rejected, no sample file is written (an earlier one stays as it was)
    and ``output`` is ``None``. The rejects file is rewritten on every run, and removed
    when no row was rejected, so it never holds an earlier run's rows. An error (a bad row
    with ``on_error="raise"``) leaves both files as they were.

    Both files are temporary until the end, so a stream may be read again from the start
    (:func:`~sdvm_hf._restart.at_most_twice`): a JSON Lines file is parsed once, in its first
    block's types, and a second time only when a later block's types differ.
    """
    return at_most_twice(lambda: _convert_to_files(samples, Path(output), format))


def _convert_to_files(samples: SampleBatches, output: Path, format: Format | None) -> Converted:
    tally = Tally()
    tally.add_rejects(())  # a conversion's summary says rows in, even of an empty source
    beside = rejects_path(output)
    writer: SampleWriter | None = None
    rejected: AtomicFile | None = None
    try:  # whenever an interrupt lands, neither temporary file is left behind
        writer = SampleWriter(output, format)  # first, so an unwritable folder names the output
        rejected = AtomicFile(beside)
        with rejected:
            digest = hashlib.sha256()  # the record keeps the rejects file's: export checks it
            with writer, rejected.path.open("w", encoding="utf-8", newline="\n") as lines:
                for table, rejects in samples.batches():
                    tally.add(table)
                    tally.add_rejects(rejects)
                    writer.write(table)
                    digest.update(write_rejects(rejects, lines).encode("utf-8"))
                if tally.samples == 0 and tally.rejected:
                    writer.discard()
                writer.record = converted_record(
                    samples,
                    tally.samples,
                    tally.rejected,
                    beside if tally.rejected else None,
                    digest.hexdigest() if tally.rejected else None,
                )
            # the sample file is in place before the rejects file changes
            if not tally.rejected:
                rejected.discard()
                beside.unlink(missing_ok=True)
    except BaseException:
        if writer is not None:
            writer.discard()
        if rejected is not None:
            rejected.discard()
        raise
    return Converted(
        output if writer.rows or not tally.rejected else None,
        beside if tally.rejected else None,
        tally.summary(),
    )


def inspect_file(path: str | os.PathLike[str]) -> Summary:
    """What a sample file holds: classes, styles, choices, answer positions, extra, verdicts."""
    return _summarize_file(path)


def report_file(
    path: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    format: ReportFormat | None = None,
    group_by: str | None = None,
) -> Summary:
    """Summarise a sample file with its groups, its conversion's rejects and examples.

    The report ``sdvm-hf report`` writes (:func:`sdvm_hf.report.build_report`): the rejects
    its record names (or the file beside it), a few samples per check. With ``output``, also
    write it there: HTML (``.html``) or JSON (``.json``), or ``format``. ``group_by`` names
    the extra key to break the samples down by.
    """
    built = build_report(path, group_by=group_by)
    if output is not None:
        write_report(built, output, format)
    return built.summary


_SUMMARY_ROWS = 16_384
"""Rows of a sample file (or rejects) summarised at a time."""


def _summarize_file(
    path: str | os.PathLike[str],
    rejects: Path | None = None,
    group_by: str | None = None,
) -> Summary:
    """A file's summary; a Parquet file (and the rejects) batch by batch, in flat memory."""
    tally = Tally(group_by)
    if format_of(path) == "parquet":
        for table in iter_parquet_tables(path, _SUMMARY_ROWS):
            tally.add(table)
    else:  # a JSON Lines file is read whole: its extra's storage is known only at the end
        tally.add(read_samples(path).table)
    if rejects is not None and rejects.is_file():
        records = (record for _, record in jsonl_records(rejects))
        while chunk := list(itertools.islice(records, _SUMMARY_ROWS)):
            tally.add_rejects(Rejects.from_records(chunk))
    return tally.summary()


@dataclass(frozen=True)
class Validation:
    """What :func:`validate_file` found."""

    rows: int
    """How many rows (or non-blank lines) the file holds."""
    problems: list[Problem | str]
    """Every problem, first rows first; a JSON Lines problem is a line's message."""


_VALIDATE_ROWS = 16_384
"""Rows checked at a time by :func:`validate_file` (the progress bar's step)."""


def validate_file(path: str | os.PathLike[str]) -> Validation:
    """Check every row of a sample file (Parquet, or wire JSON Lines)."""
    problems: list[Problem | str] = []
    if format_of(path) == "parquet":
        try:
            rows: int | None = pq.read_metadata(path).num_rows
        except (pa.ArrowInvalid, OSError):
            rows = None  # parquet_batches says what is wrong with the file
        offset = 0
        with bar(rows, f"validating {Path(path).name}") as progress:
            for batch in parquet_batches(path, _VALIDATE_ROWS):  # a batch at a time
                found = find_problems(canonical(batch))
                problems += [replace(p, row=p.row + offset) for p in found]
                offset += batch.num_rows
                progress.update(batch.num_rows)
        return Validation(offset, problems)
    rows = 0
    with bar(None, f"validating {Path(path).name}") as progress:
        for number, record in jsonl_records(path, keep_going=True):
            rows += 1
            progress.update(1)
            try:
                if isinstance(record, ValueError):
                    raise record
                MultipleChoiceSample.from_dict(record)
            except ValueError as error:
                problems.append(f"line {number}: {error}".replace("\n", " "))
    return Validation(rows, problems)
