"""``sdvm-hf report``: a sample file's report as a self-contained HTML page, or JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sdvm_hf.cli._common import add_command, not_an_input, readable_input
from sdvm_hf.cli._names import EXAMPLES, TOP_GROUPS


def add_commands(commands: Any) -> None:
    """Add ``report``."""
    report = add_command(
        commands,
        "report",
        "write a sample file's report: counts, answer-position bias, groups, every check of "
        "every block with example samples and before/after diffs, rejects",
        """sdvm-hf report out/mmlu.refine.parquet -o out/mmlu-report.html
  sdvm-hf report out/hellaswag.parquet --format json --group-by split_type""",
    )
    report.add_argument("file", type=Path, help="a sample file (.parquet, .jsonl, .jsonl.gz)")
    report.add_argument(
        "-o", "--output", type=Path, help="write here (.html or .json); default: print"
    )
    report.add_argument(
        "--format",
        choices=["html", "json"],
        help="the report's format (default: the output's extension, or json when printing)",
    )
    report.add_argument(
        "--group-by",
        metavar="COLUMN",
        help="the extra key to group by (default: subject or activity_label)",
    )
    report.add_argument(
        "--top",
        type=int,
        default=TOP_GROUPS,
        metavar="N",
        help=f"list the N largest groups, the rest summed in one row (default: {TOP_GROUPS})",
    )
    report.add_argument(
        "--examples",
        type=int,
        default=EXAMPLES,
        metavar="N",
        help=f"example samples per check, the same on every run (default: {EXAMPLES})",
    )
    report.add_argument(
        "--original",
        type=Path,
        metavar="FILE",
        help="the stage's input, for before/after diffs (default: the one the file's record names)",
    )
    report.set_defaults(run=_report)


def _report(args: argparse.Namespace) -> int:
    from sdvm_hf.jobs import rejects_path
    from sdvm_hf.record import read_record
    from sdvm_hf.report import (
        build_report,
        rejects_of,
        report_format,
        report_html,
        report_json,
        write_report,
    )

    readable_input(args.file)
    if args.output is not None:  # before anything is read: never write over an input
        rejects, _ = rejects_of(read_record(args.file), args.file)
        inputs = {
            "sample file reported on": args.file,
            "rejects file": rejects_path(args.file),
            "rejects file its record names": rejects,
        }
        if args.original is not None:
            inputs["original"] = args.original
        not_an_input(args.output, inputs)
    built = build_report(
        args.file,
        original=args.original,
        examples=args.examples,
        group_by=args.group_by,
        top=args.top,
    )
    if args.output is not None:
        format = args.format or report_format(args.output)
        write_report(built, args.output, format)
        print(
            f"{args.output}: {format} report of {built.summary.samples:,} samples",
            file=sys.stderr,
        )
        return 0
    text = report_html(built) if args.format == "html" else report_json(built)
    sys.stdout.write(text)
    return 0
