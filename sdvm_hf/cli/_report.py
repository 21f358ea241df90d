"""``sdvm-hf report``: a sample file's summary as a self-contained HTML page, or JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sdvm_hf.cli._common import add_command, not_an_input, readable_input
from sdvm_hf.jobs import rejects_path, report_file
from sdvm_hf.report import report_format, report_html, report_json


def add_commands(commands: Any) -> None:
    """Add ``report``."""
    report = add_command(
        commands,
        "report",
        "write a sample file's report: counts, answer-position bias, groups, audit, rejects",
        """sdvm-hf report out/mmlu.audit.parquet -o out/mmlu-report.html
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
    report.set_defaults(run=_report)


def _report(args: argparse.Namespace) -> int:
    readable_input(args.file)
    if args.output is not None:
        inputs = {"sample file reported on": args.file, "rejects file": rejects_path(args.file)}
        not_an_input(args.output, inputs)
        format = args.format or report_format(args.output)
        summary = report_file(args.file, args.output, format=format, group_by=args.group_by)
        print(f"{args.output}: {format} report of {summary.samples:,} samples", file=sys.stderr)
        return 0
    summary = report_file(args.file, group_by=args.group_by)
    text = report_html(summary, args.file.name) if args.format == "html" else report_json(summary)
    sys.stdout.write(text)
    return 0
