"""What went wrong, where, and with which row: the problems and errors every layer raises.

A :class:`Problem` is structured (row, path, expected, got), so summaries group rejects by
their fields and never by parsing message text; :meth:`Problem.__str__` is the one formatter
of its message. Every exception here pickles with its type and message, so ``datasets``
multiprocessing and distributed engines hand it back to the caller intact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ConversionError", "LayoutError", "Problem", "Reject", "SampleTableError"]

PathPart = str | int
"""A column or key name (``str``) or a list position (``int``)."""


def format_path(path: tuple[PathPart, ...]) -> str:
    """The one spelling of a location in a row: ``extra.subject``, ``choices[2]``.

    >>> format_path(("extra", "tags", 0)), format_path(("extra", "a b"))
    ('extra.tags[0]', "extra['a b']")
    """
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier() or not text:
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return text


@dataclass(frozen=True)
class Problem:
    """One bad row: where it is, what was expected there and what arrived.

    >>> str(Problem(17, ("label",), "'0'..'3'", "''"))
    "row 17, column 'label': expected '0'..'3', got ''"
    """

    row: int
    """Row number in the source (0-based): of the file, or of the whole split."""
    path: tuple[PathPart, ...]
    """The column, then keys or positions inside it (``("extra", "ind")``)."""
    expected: str
    """What a valid value looks like."""
    got: str
    """What arrived (its ``repr``, shortened)."""
    note: str = ""
    """Why it matters, when that is not obvious (a withheld label)."""

    @property
    def column(self) -> str:
        """The column at fault (the first part of :attr:`path`)."""
        return str(self.path[0])

    @property
    def where(self) -> str:
        """The path as one string (:func:`format_path`)."""
        return format_path(self.path)

    def __str__(self) -> str:
        text = f"row {self.row}, column {self.where!r}: expected {self.expected}, got {self.got}"
        return f"{text} ({self.note})" if self.note else text


@dataclass(frozen=True)
class Reject(Problem):
    """A row a conversion with ``on_error="skip"`` left out, with the original row."""

    original: dict[str, Any] = field(default_factory=dict)
    """The input row as it arrived, column by column."""


class SampleTableError(ValueError):
    """A table or sample file that is not a valid sample table."""


class LayoutError(ValueError):
    """A source whose columns do not fit the mapping (a missing column, an unknown layout)."""


class ConversionError(ValueError):
    """A source row that cannot become a sample (raised with ``on_error="raise"``)."""

    def __init__(self, where: str, problem: Problem) -> None:
        self.where = where
        self.problem = problem
        super().__init__(f"{where} {problem}".strip())

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.where, self.problem))
