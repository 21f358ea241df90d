"""What an answer may not do to the rows sent: trade their content, or touch their extra keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

FIELDS = ("context", "choices")
"""The fields a fix may change but not trade between rows."""


def traded(
    wire: Sequence[dict[str, Any]], start: int, back: Sequence[list[Any]]
) -> tuple[int, str, int] | None:
    """The first row whose answer holds another row's content as sent: (row, field, other).

    ``back`` holds the answers' contexts and choices (:data:`FIELDS`), in the order sent. A
    fix may change a row's context and choices, even into another row's (a duplicate
    question fixed), but two rows may not trade: an answer giving row 0 the context (or the
    choices) sent with row 1, while row 1 came back with something else, moved content
    between rows, whatever their ids and extras say.
    """
    for name, values in zip(FIELDS, back, strict=True):
        before = [_key(item[name]) for item in wire]
        after = [_key(value) for value in values]
        owner: dict[Any, int] = {}
        for offset, value in enumerate(before):
            owner.setdefault(value, offset)
        for offset, value in enumerate(after):
            other = owner.get(value)
            if value != before[offset] and other is not None and after[other] != before[other]:
                return start + offset, name, start + other
    return None


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def extra_change(sent: dict[str, Any], got: dict[str, Any]) -> str:
    """How an answer's extra keys differ from those sent: added, left out, or changed."""
    added = [key for key in got if key not in sent]
    if added:
        return (
            f"with a top-level key that was not sent ({', '.join(map(repr, added[:3]))}; only "
            "the audit, fix and reaudit blocks may be added)"
        )
    missing = [key for key in sent if key not in got]
    if missing:
        return f"without the extra key {missing[0]!r} that was sent"
    changed = next((key for key in sent if sent[key] != got[key]), "?")
    return f"with its extra changed (key {changed!r})"
