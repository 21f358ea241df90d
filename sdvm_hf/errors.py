"""What went wrong, where, and with which row: the problems and errors every layer raises.

A :class:`Problem` is structured (row, path, expected, got, and a :data:`KINDS` code saying
which rule the row breaks), so summaries group rejects by their kind and path and never by
parsing message text, and rewording a message never changes a report's categories;
:meth:`Problem.__str__` is the one formatter of its message. Every exception here pickles
with its type and message, so ``datasets`` multiprocessing and distributed engines hand it
back to the caller intact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "KINDS",
    "ConversionError",
    "InputError",
    "LayoutError",
    "Problem",
    "ProblemKind",
    "Reject",
    "SampleTableError",
    "SdvmHfError",
    "known_kind",
    "printable",
    "read_category",
]

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


ProblemKind = Literal[
    "not_castable",
    "not_text",
    "no_single_blank",
    "blank_opens",
    "answer_unreadable",
    "answer_out_of_range",
    "label_withheld",
    "empty_context",
    "too_few_choices",
    "null_choice",
    "wrong_task_type",
    "unknown_style",
    "null_extra",
    "not_finite",
    "unknown_missing_key",
    "missing_key_has_value",
    "not_json_object",
    "reserved_key",
    "not_utf8",
    "unknown",
]
"""Which rule a bad row breaks: a stable code, whatever its message says (see :data:`KINDS`)."""

KINDS: dict[ProblemKind, str] = {
    "not_castable": "a cell the mapping's types=... cast cannot hold (an int32 'ind' of 'abc')",
    "not_text": "a choice that is not text (a number in a choice column or list)",
    "no_single_blank": "a sentence without exactly one blank (the mapping's blank=...)",
    "blank_opens": "a sentence whose blank opens it, so the context would be empty",
    "answer_unreadable": "an answer that names no choice in its format ('x', a text or label "
    "matching no choice, flags that are not one-hot)",
    "answer_out_of_range": "an answer position outside the row's choices ('E' of four, 4 of "
    "0..3), or a sample's answer_index that is missing",
    "label_withheld": "no answer at all (null, '', '-1' or -1): the split's labels are withheld",
    "empty_context": "a context that is missing, empty or whitespace only",
    "too_few_choices": "fewer than two choices",
    "null_choice": "a choice that is missing (null)",
    "wrong_task_type": "a sample's task_type that is not the wire format's",
    "unknown_style": "a sample's style that is none of the wire format's",
    "null_extra": "a sample's extra that is missing (null), not an object",
    "not_finite": "a NaN or infinity in extra (JSON has neither)",
    "unknown_missing_key": "an extra_missing entry that names no field of extra",
    "missing_key_has_value": "an extra_missing entry naming a field that holds a value",
    "not_json_object": "a JSON text cell (extra or a stage block) that is not a JSON object",
    "reserved_key": "a JSON extra that uses a reserved wire key",
    "not_utf8": "text whose bytes are not UTF-8",
    "unknown": "a problem recorded before kinds existed (an older rejects file)",
}
"""Every :data:`ProblemKind` with its meaning, in the order the checks run."""


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, one_line: bool = False) -> str:
    r"""``text`` safe for a terminal: control characters and bidi overrides escaped.

    Data, server text and check names reach the screen through it, so an escape sequence
    (``\x1b[2J`` clears the screen) is shown, not obeyed. ``one_line`` escapes line breaks
    and tabs too.

    >>> printable("\x1b[31mred\x1b[0m\n"), printable("a\nb", one_line=True)
    ('\\x1b[31mred\\x1b[0m\n', 'a\\x0ab')
    """
    return (_LINE if one_line else _CONTROL).sub(_escape, text)


def read_category(category: str) -> str:
    """A category (``"where: kind"``) with what its kind means, for a person to read.

    >>> read_category("options: too_few_choices")
    'options: too_few_choices (fewer than two choices)'
    """
    kind = category.rpartition(": ")[2]
    meaning = KINDS.get(kind)  # type: ignore[call-overload]
    return f"{category} ({meaning})" if meaning else category


def known_kind(value: object) -> ProblemKind:
    """A kind as read from a file: itself if it is one of :data:`KINDS`, else ``"unknown"``.

    A file written before kinds existed has none, and one from a newer version may have a
    code this version does not know: neither is an error.

    >>> known_kind("not_text"), known_kind(None), known_kind("from_the_future")
    ('not_text', 'unknown', 'unknown')
    """
    for kind in KINDS:
        if value == kind:
            return kind
    return "unknown"


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
    kind: ProblemKind = "unknown"
    """Which rule the row breaks (one of :data:`KINDS`): what summaries group by."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")

    @property
    def column(self) -> str:
        """The column at fault (the first part of :attr:`path`)."""
        return str(self.path[0])

    @property
    def where(self) -> str:
        """The path as one string (:func:`format_path`)."""
        return format_path(self.path)

    @property
    def category(self) -> str:
        """Where and which rule, as summaries group rejects: ``"label: answer_out_of_range"``."""
        return f"{self.where}: {self.kind}"

    def __str__(self) -> str:
        text = f"row {self.row}, column {self.where!r}: expected {self.expected}, got {self.got}"
        return f"{text} ({self.note})" if self.note else text


@dataclass(frozen=True)
class Reject(Problem):
    """A row a conversion with ``on_error="skip"`` left out, with the original row."""

    original: dict[str, Any] = field(default_factory=dict)
    """The input row as it arrived, column by column."""


class SdvmHfError(Exception):
    """The base of every error this package raises on purpose.

    The ``sdvm-hf`` command prints these (and ``OSError``) as one line and exits 2; anything
    else is a bug, and shows its traceback.
    """


class InputError(SdvmHfError, ValueError):
    """Input this package cannot take: a file, an argument, an option, a row, a record.

    A ``ValueError`` too, so ``except ValueError`` keeps catching it.
    """


class SampleTableError(InputError):
    """A table or sample file that is not a valid sample table."""


class LayoutError(InputError):
    """A source whose columns do not fit the mapping (a missing column, an unknown layout)."""


class ConversionError(InputError):
    """A source row that cannot become a sample (raised with ``on_error="raise"``)."""

    def __init__(self, where: str, problem: Problem) -> None:
        self.where = where
        self.problem = problem
        super().__init__(f"{where} {problem}".strip())

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.where, self.problem))
