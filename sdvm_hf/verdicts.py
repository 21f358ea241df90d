"""What the service's blocks say about a sample: its checks, which value is bad, its final verdict.

Every reader of a verdict goes through this module: ``sdvm-hf diff --only failing``, the export's
``--policy drop``, ``--drop-if`` and ``sdvm_failing``, the summary and the HTML report. So they
agree row for row and name for name.

**A check's name.** A block (``audit``, ``fix``, ``reaudit``) is JSON; each boolean leaf is a
check, named by its dotted path (``{"checks": {"grammatical": false}}`` holds
``checks.grammatical``). The two verdicts (``audit``, ``reaudit``) are the same model's
ratings before and after a fix, so a check has one name in both; a check of the fix block is
named with its block first: the fix's flag is ``fix.flagged`` (see :func:`check_name`).

**Which value is bad.** ``false``, except for the pairs in :data:`BAD_WHEN_TRUE`
(``fix.flagged``: the fix could not settle the sample).

**The final verdict.** The ``reaudit`` when it holds at least one check, else the ``audit``:
a reaudit with no check (``{}``, or only numbers and text) says nothing about the fixed text, so
the audit's verdict stands. A sample *fails* when its final verdict fails a check or its fix
is flagged; :func:`failing` names those checks. Such a sample is listed by ``diff --only
failing`` and dropped by ``export --policy drop``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

import pyarrow as pa

__all__ = [
    "BAD_WHEN_TRUE",
    "FLAGGED",
    "VERDICT_BLOCKS",
    "Failing",
    "check_name",
    "failing",
    "failing_rows",
    "final_block",
    "flatten_block",
    "is_flagged",
    "reads_bad",
]

VERDICT_BLOCKS: tuple[str, ...] = ("audit", "reaudit")
"""The blocks that rate a sample; a check is named the same in both."""

BAD_WHEN_TRUE: frozenset[tuple[str, str]] = frozenset({("fix", "flagged")})
"""The (block, check path) pairs where ``true`` is the bad outcome; every other check fails on
``false``. The wire format names ``fix.flagged`` (the fix could not settle the sample)."""

FLAGGED = "fix.flagged"
"""The name of the fix's flag (:func:`check_name` of ``("fix", "flagged")``)."""


def flatten_block(block: Mapping[str, Any]) -> tuple[dict[str, bool], list[str]]:
    """A block's boolean leaves by dotted path, and the dotted paths of its other leaves.

    Nested dicts are walked (``{"checks": {"grammatical": false}}`` gives
    ``checks.grammatical``); a list, number, text or null is a leaf that is not a check.

    >>> flatten_block({"ok": True, "checks": {"a": False, "b": {"c": True}}, "score": 0.5})
    ({'ok': True, 'checks.a': False, 'checks.b.c': True}, ['score'])
    """
    checks: dict[str, bool] = {}
    others: list[str] = []

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for key, value in node.items():
            name = f"{prefix}{key}"
            if isinstance(value, bool):
                checks[name] = value
            elif isinstance(value, Mapping) and value:
                walk(value, name + ".")
            else:
                others.append(name)

    walk(block, "")
    return checks, others


def check_name(block: str, path: str) -> str:
    """The one spelling of the check at ``path`` in ``block``.

    >>> check_name("audit", "checks.grammatical"), check_name("reaudit", "checks.grammatical")
    ('checks.grammatical', 'checks.grammatical')
    >>> check_name("fix", "flagged")
    'fix.flagged'
    """
    return path if block in VERDICT_BLOCKS else f"{block}.{path}"


def reads_bad(block: str, path: str, value: bool) -> bool:
    """Whether ``value`` of the check at ``path`` in ``block`` is the bad outcome."""
    return value if (block, path) in BAD_WHEN_TRUE else not value


def final_block(audit: Any, reaudit: Any) -> tuple[str, Mapping[str, Any]] | None:
    """The final verdict and its block: the reaudit when it holds a check, else the audit.

    >>> final_block({"ok": False}, {})
    ('audit', {'ok': False})
    >>> final_block({"ok": False}, {"ok": True})
    ('reaudit', {'ok': True})
    >>> final_block(None, None) is None
    True
    """
    if isinstance(reaudit, Mapping) and flatten_block(reaudit)[0]:
        return "reaudit", reaudit
    if isinstance(audit, Mapping):
        return "audit", audit
    return None


def is_flagged(fix: Any) -> bool:
    """Whether a fix block flags its sample (``fix.flagged`` is ``true``)."""
    return isinstance(fix, Mapping) and fix.get("flagged") is True


class Failing(NamedTuple):
    """A sample's failing checks, by their names, and the block its final verdict came from."""

    names: list[str]
    block: str | None
    """``"audit"`` or ``"reaudit"``; ``None`` when the sample carries no verdict."""


def failing(audit: Any, fix: Any, reaudit: Any) -> Failing:
    """The checks a sample fails: its final verdict's bad checks, then ``fix.flagged``.

    The per-sample reader (``diff``); :func:`failing_rows` is the same rule over columns.

    >>> failing({"checks": {"a": False, "b": True}}, {"flagged": True}, {})
    Failing(names=['checks.a', 'fix.flagged'], block='audit')
    """
    final = final_block(audit, reaudit)
    names: list[str] = []
    block = None
    if final is not None:
        block, verdict = final
        checks, _ = flatten_block(verdict)
        names = [check_name(block, p) for p, value in checks.items() if reads_bad(block, p, value)]
    if is_flagged(fix):
        names.append(FLAGGED)
    return Failing(names, block)


def failing_rows(
    table: pa.Table, only: Collection[str] = ()
) -> tuple[dict[int, list[str]], set[str]]:
    """The columnar reader: the failing checks of each row that fails one, and every check seen.

    ``table`` is a sample table: its ``audit``, ``fix`` and ``reaudit`` columns hold each block
    as JSON text (null where a row has none); each distinct triple of texts is parsed once.
    ``only`` narrows the names counted as failing (``--drop-if``); the checks seen are those
    of the final verdicts, and ``fix.flagged`` where a fix block is present.
    """
    audit, fix, reaudit = (table.column(block) for block in ("audit", "fix", "reaudit"))
    count = len(table)
    if audit.null_count == count and fix.null_count == count and reaudit.null_count == count:
        return {}, set()
    seen: set[str] = set()
    known: dict[tuple[str | None, str | None, str | None], list[str]] = {}
    failed: dict[int, list[str]] = {}
    texts = zip(audit.to_pylist(), fix.to_pylist(), reaudit.to_pylist(), strict=True)
    for row, key in enumerate(texts):
        names = known.get(key)
        if names is None:
            blocks = [None if text is None else json.loads(text) for text in key]
            final = final_block(blocks[0], blocks[2])
            if final is not None:
                seen.update(check_name(final[0], p) for p in flatten_block(final[1])[0])
            if isinstance(blocks[1], Mapping):
                seen.add(FLAGGED)
            names = failing(*blocks).names
            if only:
                names = [name for name in names if name in only]
            known[key] = names
        if names:
            failed[row] = names
    return failed, seen
