"""``sdvm-hf diff``: what a stage changed, row by row, word by word."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sdvm_hf.cli._common import add_command, readable_input


def add_commands(commands: Any) -> None:
    """Add ``diff``."""
    diff = add_command(
        commands,
        "diff",
        "show what a stage changed: each row's context and choices word by word, moved answers",
        """sdvm-hf diff out/mmlu.parquet out/mmlu.refine.parquet --only changed --limit 10""",
    )
    diff.add_argument("before", type=Path, help="the stage's input (a sample file)")
    diff.add_argument("after", type=Path, help="the stage's output, row for row")
    diff.add_argument(
        "--only",
        choices=["changed", "failing", "flagged", "all"],
        default="changed",
        help="rows that changed (default), whose last verdict fails a check, that the fix "
        "flagged, or all",
    )
    diff.add_argument(
        "--limit", type=int, default=20, help="show at most this many rows (default: 20)"
    )
    diff.set_defaults(run=_diff)


def _diff(args: argparse.Namespace) -> int:
    from sdvm_hf.diff import diff_files

    readable_input(args.before)
    readable_input(args.after)
    shown = 0
    for found in diff_files(args.before, args.after, only=args.only, limit=args.limit):
        if shown:
            print()
        print("\n".join(found.lines()))
        shown += 1
    what = "" if args.only == "all" else f" {args.only}"
    cut = " (--limit)" if shown == args.limit else ""
    print(f"{shown:,}{what} rows shown{cut}")
    return 0
