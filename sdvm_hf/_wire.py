"""The SDVM wire format's constants and rules, each defined once.

The sample types, the Arrow checks and the converters all enforce these rules; they read them
from here so that a rule and its message never drift apart between layers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

Style = Literal["continuation", "qa"]
"""How the context reads: a sentence stem the answer continues, or a complete question."""

STYLES: tuple[str, ...] = get_args(Style)
"""Every style, in the order the docs name them."""

TASK_TYPE = "multiple_choice"
"""The wire ``task_type`` of every multiple-choice sample."""

BLOCKS: tuple[str, ...] = ("audit", "fix", "reaudit")
"""The blocks the service writes on a sample, in wire order."""

CORE_KEYS: tuple[str, ...] = ("task_type", "context", "choices", "answer_index", "style")
"""The wire keys every sample carries, in wire order."""

RESERVED_KEYS: frozenset[str] = frozenset(CORE_KEYS + BLOCKS)
"""Wire keys an ``extra`` key may not take: the wire flattens ``extra`` over them."""


def describe(value: object) -> str:
    """``int 5``, ``str ''``: the type and the value that arrived, for error messages."""
    return f"{type(value).__name__} {shorten(repr(value))}"


def shorten(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters, with ``...`` where it was cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def reserved_key(keys: Iterable[str]) -> str | None:
    """The first of ``keys`` that is a reserved wire key (``None`` when none is)."""
    return next((key for key in keys if key in RESERVED_KEYS), None)


def style_problem(value: object) -> str | None:
    """Say why ``value`` is not a style (``None`` when it is)."""
    if value in STYLES:
        return None
    return f"style must be {' or '.join(map(repr, STYLES))}, got {describe(value)}"


def answer_range(count: int) -> str:
    """What a valid answer index is for ``count`` choices: ``0..3 for 4 choices``."""
    return f"0..{count - 1} for {count} choices"


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""The letters that name choices: ``A`` the first, ... ``Z`` the 26th."""


def letter(position: int) -> str:
    """The letter a choice position is shown by (``A``, ``B``, ...; past ``Z``, its number).

    >>> letter(0), letter(25), letter(26)
    ('A', 'Z', '26')
    """
    return LETTERS[position] if 0 <= position < len(LETTERS) else str(position)
