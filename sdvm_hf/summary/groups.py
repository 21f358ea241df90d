"""Samples broken down by a group column: each group's counts, the largest listed, the rest summed.

A group is the samples with one value of an extra key (``subject``, ``activity_label``, or
any key named); :class:`Groups` sums each batch's per-row counts (:mod:`.checks`) per value,
in Arrow, and lists the largest groups as :class:`Group` objects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import BLOCKS
from sdvm_hf.summary.checks import FIXED, SAMPLES

__all__ = [
    "GROUP_COLUMNS",
    "MISSING",
    "REST",
    "TOP_GROUPS",
    "Group",
    "Groups",
    "group_values",
]

GROUP_COLUMNS = ("subject", "activity_label")
"""The extra keys a summary groups by when none is named: the first the table has."""

MISSING = "(missing)"
"""The group of samples without a value in the group column."""

REST = "(the rest)"
"""The group that sums every group beyond the largest :data:`TOP_GROUPS`."""

TOP_GROUPS = 100
"""Groups a summary lists one by one, by default: the largest, the rest summed as :data:`REST`
(a key with a value per row would otherwise make a report as long as the file)."""


@dataclass
class Group:
    """Samples of one group (or all of them) and what the service said of them."""

    samples: int = 0
    audited: int = 0
    """Samples with an ``audit`` block."""
    failing: dict[str, int] = field(default_factory=dict)
    """For each boolean check of the ``audit`` block (dotted), the samples where it is false."""
    fixed: int = 0
    """Samples whose ``fix`` block has non-empty ``changes``."""
    flagged: int = 0
    """Samples whose ``fix`` block has ``flagged`` true."""
    checks: dict[str, dict[str, int]] = field(default_factory=dict)
    """For every block, each boolean check (dotted) and the samples where it reads bad:
    false, or true for :data:`BAD_WHEN_TRUE` (``checks["audit"]`` is :attr:`failing`)."""
    carrying: dict[str, int] = field(default_factory=dict)
    """For every block, the samples carrying it."""

    def share(self, count: int) -> float:
        """``count`` as a share of this group's samples."""
        return count / self.samples if self.samples else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counts, and each as a share of the group's samples."""
        return {
            "samples": self.samples,
            "audited": self.audited,
            "failing": {
                check: {"count": count, "share": self.share(count)}
                for check, count in self.failing.items()
            },
            "fixed": {"count": self.fixed, "share": self.share(self.fixed)},
            "flagged": {"count": self.flagged, "share": self.share(self.flagged)},
            "carrying": self.carrying,
            "checks": {
                block: {
                    check: {"count": count, "share": self.share(count)}
                    for check, count in checks.items()
                }
                for block, checks in self.checks.items()
            },
        }


class Groups:
    """Per value of one extra key (or all together): samples, blocks carried, checks failed.

    Each batch's counts are summed per value in Arrow (``group_by``) and the partial tables
    merged once they outnumber the rows merged so far, so a key with a value per row (a
    million groups) costs a few columns of integers, not a Python object per value.
    """

    def __init__(self, key: str | None) -> None:
        self.key = key
        self._merged: pa.Table | None = None
        self._waiting: list[pa.Table] = []
        self._waiting_rows = 0

    def add(
        self, names: pa.Array | pa.ChunkedArray | Sequence[str], counts: dict[str, pa.Array]
    ) -> None:
        """Sum a batch's per-row ``counts`` (by column name) per group name in ``names``."""
        if not isinstance(names, pa.Array | pa.ChunkedArray):
            names = pa.array(names, pa.string())
        table = pa.table({"name": names, **counts})
        columns = [name for name in table.column_names if name != "name"]
        part = table.group_by("name", use_threads=False).aggregate([(c, "sum") for c in columns])
        part = part.rename_columns([name.removesuffix("_sum") for name in part.column_names])
        self._waiting.append(part)
        self._waiting_rows += part.num_rows
        if self._waiting_rows > max(4096, 0 if self._merged is None else self._merged.num_rows):
            self._merge()

    def _merge(self) -> None:
        parts = ([] if self._merged is None else [self._merged]) + self._waiting
        self._waiting, self._waiting_rows = [], 0
        if not parts:
            return
        table = pa.concat_tables(parts, promote_options="default")
        columns = [name for name in table.column_names if name != "name"]
        table = pa.table(
            {"name": table.column("name"), **{c: pc.fill_null(table.column(c), 0) for c in columns}}
        )
        merged = table.group_by("name", use_threads=False).aggregate([(c, "sum") for c in columns])
        self._merged = merged.rename_columns(
            [name.removesuffix("_sum") for name in merged.column_names]
        )

    def result(
        self, slots: Sequence[tuple[str, str]], top: int | None
    ) -> tuple[dict[str, Group], Group, int]:
        """The groups, all of them together, and how many groups there are.

        The groups are the ``top`` largest (all when ``None``) by name, the rest summed under
        :data:`REST`. Only the groups listed become Python objects.
        """
        self._merge()
        merged = self._merged
        if merged is None or merged.num_rows == 0:
            return {}, _sum_groups([], slots), 0
        columns = [name for name in merged.column_names if name != "name"]
        whole = {c: pc.sum(merged.column(c)).as_py() or 0 for c in columns}
        total = _group_of(whole, slots)
        if self.key is None:
            return {}, total, 0
        count = merged.num_rows
        if top is None or count <= top:
            listed = merged
        else:
            order = pc.sort_indices(
                merged, sort_keys=[(SAMPLES, "descending"), ("name", "ascending")]
            )
            listed = merged.take(order[:top])
        groups = {row["name"]: _group_of(row, slots) for row in listed.to_pylist()}
        groups = dict(sorted(groups.items()))
        if listed is not merged:
            kept = {c: pc.sum(listed.column(c)).as_py() or 0 for c in columns}
            groups[REST] = _group_of({c: whole[c] - kept[c] for c in columns}, slots)
        return groups, total, count


def _group_of(row: dict[str, Any], slots: Sequence[tuple[str, str]]) -> Group:
    checks: dict[str, dict[str, int]] = {}
    for number, (block, check) in enumerate(slots):
        checks.setdefault(block, {})[check] = row.get(f"bad:{number}") or 0
    carrying = {block: count for block in BLOCKS if (count := row.get(f"carry:{block}") or 0)}
    return Group(
        samples=row.get(SAMPLES) or 0,
        audited=carrying.get("audit", 0),
        failing=dict(checks.get("audit", {})),
        fixed=row.get(FIXED) or 0,
        flagged=checks.get("fix", {}).get("flagged", 0),
        checks=checks,
        carrying=carrying,
    )


def _sum_groups(groups: Iterable[Group], slots: Sequence[tuple[str, str]]) -> Group:
    total = Group(checks={})
    for block, check in slots:
        total.checks.setdefault(block, {})[check] = 0
    for group in groups:
        total.samples += group.samples
        total.fixed += group.fixed
        for block, count in group.carrying.items():
            total.carrying[block] = total.carrying.get(block, 0) + count
        for block, checks in group.checks.items():
            for check, count in checks.items():
                total.checks[block][check] += count
    total.carrying = {block: total.carrying[block] for block in BLOCKS if block in total.carrying}
    total.audited = total.carrying.get("audit", 0)
    total.failing = dict(total.checks.get("audit", {}))
    total.flagged = total.checks.get("fix", {}).get("flagged", 0)
    return total


def group_values(
    table: pa.Table, key: str, json_extra: list[dict[str, Any]] | None
) -> pa.Array | list[str]:
    """Each sample's value of the extra ``key``, as text (JSON for non-strings)."""
    if json_extra is not None:
        values = [extra.get(key, MISSING) for extra in json_extra]
    else:
        column = pc.struct_field(table.column("extra"), key)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            return pc.fill_null(column, MISSING)  # text as it is, in Arrow
        if pa.types.is_integer(column.type):  # an integer's text is its JSON
            return pc.fill_null(pc.cast(column, pa.string()), MISSING)
        values = column.to_pylist()
    return [
        MISSING if value is None else value if isinstance(value, str) else json.dumps(value)
        for value in values
    ]
