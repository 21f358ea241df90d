"""What an export publishes of each row: the three policies, each one object.

A row's *status* is what the verdicts and the stages say of it, whatever the policy:
``dropped`` when it fails a check (see :mod:`sdvm_hf.verdicts`), else ``replaced`` when a
stage changed a published column, else ``kept``. A policy says what becomes of it
(:meth:`Policy.outcome`) and which text is published (:attr:`Policy.publishes_original`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sdvm_hf.exporter._types import ExportError

__all__ = ["DROP", "ORIGINAL", "POLICIES", "REPLACE", "Policy", "Status", "policy_named"]

Status = Literal["kept", "replaced", "dropped"]
"""What becomes of a row (the export record's ``status`` and ``sdvm_status``)."""


@dataclass(frozen=True)
class Policy:
    """One way to publish a cleaned benchmark."""

    name: str
    """``replace``, ``drop`` or ``original``, as ``--policy`` takes it."""
    drops_failing: bool
    """Whether a row that fails a check is left out."""
    publishes_original: bool
    """Whether the published text is the source's, before the stages (annotation-only)."""

    def outcome(self, failing: bool, changed: bool) -> Status:
        """What this policy makes of a row that fails a check or was changed by a stage.

        >>> [p.outcome(failing=True, changed=True) for p in (REPLACE, DROP, ORIGINAL)]
        ['replaced', 'dropped', 'kept']
        """
        if self.publishes_original:
            return "kept"
        if failing and self.drops_failing:
            return "dropped"
        return "replaced" if changed else "kept"

    def __str__(self) -> str:
        return self.name


REPLACE = Policy("replace", drops_failing=False, publishes_original=False)
"""Every row, with the fixed text where a fix changed it."""
DROP = Policy("drop", drops_failing=True, publishes_original=False)
"""The rows that fail no check, as the file holds them."""
ORIGINAL = Policy("original", drops_failing=False, publishes_original=True)
"""The source rows unchanged (found through the records), for annotation-only releases."""

POLICIES: tuple[str, ...] = ("replace", "drop", "original")
"""The policies by name, as ``--policy`` lists them."""

_BY_NAME = {policy.name: policy for policy in (REPLACE, DROP, ORIGINAL)}


def policy_named(policy: str | Policy) -> Policy:
    """The policy called ``policy`` (a :class:`Policy` is itself); :class:`ExportError` else."""
    if isinstance(policy, Policy):
        return policy
    found = _BY_NAME.get(policy) if isinstance(policy, str) else None
    if found is None:
        raise ExportError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    return found
