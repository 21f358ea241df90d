"""What every subcommand shares: how it is added to the parser and how it prints."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdvm_hf.errors import InputError

if TYPE_CHECKING:
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


def readable_input(path: str | os.PathLike[str], what: str = "a sample file") -> None:
    """Refuse an input that is not a regular file (or a folder), by name, before it is opened.

    Opening a FIFO blocks until something writes to it, and a device never ends: the command
    would hang. A path that does not exist is named too. Folders pass (read as their files).
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path}") from None
    except OSError as error:
        raise OSError(error.errno, f"cannot read {path}: {error.strerror}") from None
    from sdvm_hf.files import special_kind  # here: the parsers import no pyarrow

    kind = special_kind(mode)
    if kind is not None:
        raise InputError(f"{path} is {kind}, not a regular file; give {what}")


def not_an_input(output: Path, inputs: dict[str, Path]) -> None:
    """Refuse an output that is one of the ``inputs`` (named by what they are), by name."""
    for what, path in inputs.items():
        if output.resolve() == path.resolve():
            raise InputError(
                f"{output} is the {what}; writing there would replace it: name another output"
            )
