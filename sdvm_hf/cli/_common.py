"""What every subcommand shares: how it is added to the parser and how it prints."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sdvm_hf.summary import Summary


def add_command(commands: Any, name: str, help: str, example: str) -> argparse.ArgumentParser:
    """A subcommand with its help line and an example under ``--help``."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=help,
        description=help[0].upper() + help[1:] + ".",
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def print_summary(summary: Summary, as_json: bool = False) -> None:
    """Print a summary as text lines, or as JSON."""
    if as_json:
        print(json.dumps(summary.as_dict(), indent=2, default=str))
    else:
        print("\n".join(summary.lines()))
