"""``sdvm-hf inspect`` and ``sdvm-hf validate``: look into a sample file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sdvm_hf.cli._common import add_command, print_summary, readable_input


def add_commands(commands: Any) -> None:
    """Add ``inspect`` and ``validate``."""
    inspect = add_command(
        commands, "inspect", "summarise a sample file", "sdvm-hf inspect out/mmlu.parquet"
    )
    inspect.add_argument("file", type=Path)
    inspect.add_argument("--json", action="store_true", help="print the summary as JSON")
    inspect.set_defaults(run=_inspect)

    validate = add_command(
        commands,
        "validate",
        "check every row of a sample file",
        "sdvm-hf validate out/mmlu.parquet && echo valid",
    )
    validate.add_argument("file", type=Path)
    validate.add_argument(
        "--limit", type=int, default=20, help="how many problems to list (default: 20)"
    )
    validate.add_argument("--quiet", action="store_true", help="no progress bar")
    validate.set_defaults(run=_validate)


def _inspect(args: argparse.Namespace) -> int:
    from sdvm_hf.jobs import inspect_file

    readable_input(args.file)
    print_summary(inspect_file(args.file), args.json)
    return 0


def _validate(args: argparse.Namespace) -> int:
    from sdvm_hf._progress import quiet
    from sdvm_hf.jobs import validate_file

    readable_input(args.file)
    with quiet(args.quiet):
        result = validate_file(args.file)
    if result.problems:
        shown = min(len(result.problems), args.limit)
        print(
            f"{args.file}: {len(result.problems):,} problems in {result.rows:,} rows; "
            f"the first {shown}:"
        )
        for problem in result.problems[: args.limit]:
            print(f"  {problem}")
        return 1
    print(f"{args.file}: {result.rows:,} valid samples")
    return 0
