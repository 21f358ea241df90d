"""Errors and reports shared by every layer: what went wrong, where, and with which row."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One bad row: its number, the column, and what was expected versus what arrived."""

    row: int
    """Row number in the input (0-based)."""
    column: str
    """The column at fault."""
    reason: str
    """``expected …, got …``."""

    def __str__(self) -> str:
        return f"row {self.row}, column {self.column!r}: {self.reason}"


@dataclass(frozen=True)
class Reject(Problem):
    """A row a conversion with ``on_error="skip"`` left out, with the original row."""

    original: dict[str, Any] = field(default_factory=dict)
    """The input row as it arrived, column by column."""


class SampleTableError(ValueError):
    """A table or Parquet file that is not a valid sample table."""


class ConversionError(ValueError):
    """A source row that cannot become a sample (raised with ``on_error="raise"``)."""

    def __init__(self, where: str, problem: Problem) -> None:
        self.problem = problem
        super().__init__(f"{where} {problem}")


class LayoutError(ValueError):
    """A source whose columns do not fit the mapping (a missing column, an unknown layout)."""
