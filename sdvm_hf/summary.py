"""Summaries of a sample table: what a conversion gave, what a file holds, what the audit said.

Everything here reads the Arrow table column by column; nothing builds samples. Besides the
counts, a summary tests each choices-count's answer positions against uniform (a chi-square
test, :func:`chi_square_sf` computed here without scipy) and breaks the samples down by a
group column (``subject``, ``activity_label``, or any extra key) with, for an audited file, the
share of each group failing each audit check, fixed, and flagged.

Longer than most modules: every number a summary holds is computed here, once, so its text
lines, its JSON and the HTML report (:mod:`sdvm_hf.report`) can never disagree.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import BLOCKS
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.errors import Problem
from sdvm_hf.samples import class_for_style

__all__ = ["Group", "PositionBias", "Summary", "Tally", "position_bias", "summarize"]


def chi_square_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for X chi-square distributed with ``df`` degrees of freedom.

    This is the regularized upper incomplete gamma function Q(df/2, statistic/2), by its
    series below a + 1 and its continued fraction above (Numerical Recipes, ``gammq``).

    >>> round(chi_square_sf(3.841458820694124, 1), 6), round(chi_square_sf(2.0, 2), 6)
    (0.05, 0.367879)
    """
    if df < 1 or statistic < 0 or math.isnan(statistic):
        raise ValueError(f"chi-square: expected df >= 1 and statistic >= 0, got {df}, {statistic}")
    a, x = df / 2, statistic / 2
    if x == 0:
        return 1.0
    scale = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:  # the series for P(a, x); Q = 1 - P
        term = total = 1 / a
        for n in range(1, 10_000):
            term *= x / (a + n)
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return max(0.0, 1 - total * scale)
    tiny = 1e-300  # the continued fraction for Q(a, x), by modified Lentz
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    fraction = d
    for n in range(1, 10_000):
        an = -n * (n - a)
        b += 2
        d = an * d + b
        d = 1 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        fraction *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return fraction * scale


ALPHA = 0.05
"""Answer positions whose chi-square p-value falls below this are flagged as biased."""

MIN_EXPECTED = 5
"""The test needs at least this many samples expected at each position to say anything."""


@dataclass(frozen=True)
class PositionBias:
    """Answer positions of one choices-count tested against uniform (chi-square)."""

    samples: int
    """Samples with this many choices."""
    statistic: float
    """The chi-square statistic: sum over positions of (observed - expected)^2 / expected."""
    df: int
    """Degrees of freedom: choices - 1."""
    p_value: float
    """P(chi-square >= statistic) were every position equally likely."""
    testable: bool
    """Whether every position expects at least :data:`MIN_EXPECTED` samples."""
    biased: bool
    """Testable, and ``p_value`` below :data:`ALPHA`."""


def position_bias(positions: dict[int, int], choices: int) -> PositionBias:
    """Test how often the answer sits at each of ``choices`` positions against uniform.

    >>> test = position_bias({0: 30, 1: 10}, 2)
    >>> test.statistic, round(test.p_value, 5), test.biased
    (10.0, 0.00157, True)
    """
    samples = sum(positions.values())
    expected = samples / choices
    statistic = sum((positions.get(p, 0) - expected) ** 2 / expected for p in range(choices))
    p_value = chi_square_sf(statistic, choices - 1)
    testable = expected >= MIN_EXPECTED
    return PositionBias(
        samples, statistic, choices - 1, p_value, testable, testable and p_value < ALPHA
    )


def reject_reasons(rejects: Sequence[Problem]) -> dict[str, int]:
    """Rejects grouped by their fields: where, what was expected, the note (not the value)."""
    return dict(_reasons(rejects).most_common())


def _reasons(rejects: Sequence[Problem]) -> Counter[str]:
    """How many rejects have each reason, in order of first appearance."""
    if isinstance(rejects, Rejects):
        return rejects.reasons()
    return Counter(
        f"{p.where}: expected {p.expected}" + (f" ({p.note})" if p.note else "") for p in rejects
    )


GROUP_COLUMNS = ("subject", "activity_label")
"""The extra keys a summary groups by when none is named: the first the table has."""

MISSING = "(missing)"
"""The group of samples without a value in the group column."""


@dataclass
class Group:
    """Samples of one group (or all of them) and what the service said of them."""

    samples: int = 0
    audited: int = 0
    """Samples with an ``audit`` block."""
    failing: dict[str, int] = field(default_factory=dict)
    """For each boolean check of the ``audit`` block, the samples where it is false."""
    fixed: int = 0
    """Samples whose ``fix`` block has non-empty ``changes``."""
    flagged: int = 0
    """Samples whose ``fix`` block has ``flagged`` true."""

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
        }


def _verdicts(column: pa.ChunkedArray) -> list[dict[str, Any] | None] | None:
    """Each row's block parsed (``None`` where absent), or ``None`` when no row has one."""
    if column.null_count == len(column):
        return None
    return [None if text is None else json.loads(text) for text in column.to_pylist()]


class _Distinct:
    """The distinct non-null values of a column, seen batch by batch, kept in Arrow.

    Each batch's unique values wait in a list and are merged once they outnumber the values
    merged so far, so a stream of any length costs O(n log n) and holds, besides the current
    batch, about twice the distinct values (for HellaSwag's ``ind``, 4 bytes each).
    """

    def __init__(self) -> None:
        self._merged: pa.Array | None = None
        self._waiting: list[pa.Array] = []
        self._waiting_values = 0

    def add(self, values: pa.ChunkedArray) -> None:
        unique = pc.unique(values.drop_null())
        self._waiting.append(unique)
        self._waiting_values += len(unique)
        if self._waiting_values > max(4096, 0 if self._merged is None else len(self._merged)):
            self._merge()

    def _merge(self) -> None:
        parts = ([] if self._merged is None else [self._merged]) + self._waiting
        if parts:
            self._merged = pc.unique(pa.chunked_array(parts, type=parts[0].type))
        self._waiting, self._waiting_values = [], 0

    def __len__(self) -> int:
        self._merge()
        return 0 if self._merged is None else len(self._merged)


class _Groups:
    """Samples, audit failures, fixes and flags per value of one extra key (or all together)."""

    def __init__(self, key: str | None) -> None:
        self.key = key
        self.groups: dict[str, Group] = {}
        self.checks: dict[str, None] = {}
        """The boolean audit checks, in order of first appearance."""

    def add(
        self,
        names: Sequence[str],
        audits: Sequence[dict[str, Any] | None] | None,
        fixes: Sequence[dict[str, Any] | None] | None,
    ) -> None:
        if audits is None and fixes is None:  # a converted file: samples only
            for name, count in Counter(names).items():
                self.groups.setdefault(name, Group()).samples += count
            return
        audits = audits or [None] * len(names)
        fixes = fixes or [None] * len(names)
        for name, audit, fix in zip(names, audits, fixes, strict=True):
            group = self.groups.setdefault(name, Group())
            group.samples += 1
            if audit is not None:
                group.audited += 1
                for check, verdict in audit.items():
                    if isinstance(verdict, bool):
                        self.checks.setdefault(check)
                        group.failing[check] = group.failing.get(check, 0) + (not verdict)
            if isinstance(fix, dict):
                group.fixed += bool(fix.get("changes"))
                group.flagged += fix.get("flagged") is True

    def result(self) -> tuple[dict[str, Group], Group]:
        """Per group (sorted by name; none without a key), and all of them together."""
        groups = {
            name: replace(group, failing={c: group.failing.get(c, 0) for c in self.checks})
            for name, group in sorted(self.groups.items())
        }
        total = Group(failing=dict.fromkeys(self.checks, 0))
        for group in groups.values():
            total.samples += group.samples
            total.audited += group.audited
            total.fixed += group.fixed
            total.flagged += group.flagged
            for check, count in group.failing.items():
                total.failing[check] += count
        return (groups if self.key is not None else {}), total


def _group_values(table: pa.Table, key: str, json_extra: list[dict[str, Any]] | None) -> list[str]:
    """Each sample's value of the extra ``key``, as text (JSON for non-strings)."""
    if json_extra is not None:
        values = [extra.get(key, MISSING) for extra in json_extra]
    else:
        values = pc.struct_field(table.column("extra"), key).to_pylist()
    return [
        MISSING if value is None else value if isinstance(value, str) else json.dumps(value)
        for value in values
    ]


@dataclass
class Summary:
    """What a table holds, for people: counts and distributions."""

    samples: int
    by_class: dict[str, int]
    by_style: dict[str, int]
    choices: dict[int, int]
    positions: dict[int, dict[int, int]]
    extra: dict[str, str]
    verdicts: dict[str, dict[str, dict[str, int]]]
    rows_in: int | None = None
    rejects: dict[str, int] = field(default_factory=dict)
    bias: dict[int, PositionBias] = field(default_factory=dict)
    """Each choices-count's answer positions tested against uniform."""
    group_by: str | None = None
    """The extra key :attr:`groups` is by, or ``None``."""
    groups: dict[str, Group] = field(default_factory=dict)
    """Per value of :attr:`group_by`, sorted by name."""
    total: Group = field(default_factory=Group)
    """All samples: the audit failures, fixes and flags."""

    def lines(self) -> list[str]:
        """The summary as text lines."""
        out = []
        if self.rows_in is not None:
            out.append(f"rows in:      {self.rows_in:,}")
        out.append(f"samples out:  {self.samples:,}")
        if self.rows_in is not None:
            out.append(f"rejects:      {sum(self.rejects.values()):,}")
            out += [f"  {count:,}  {reason}" for reason, count in self.rejects.items()]
        out.append("by class:     " + _pairs(self.by_class))
        out.append("by style:     " + _pairs(self.by_style))
        out.append("choices:      " + _pairs({f"{n} choices": c for n, c in self.choices.items()}))
        for n, positions in self.positions.items():
            total = sum(positions.values())
            shares = ", ".join(f"{p}: {c / total:.0%}" for p, c in positions.items())
            out.append(f"answer position ({n} choices): {shares}" + _bias(self.bias.get(n)))
        out.append("extra:        " + (_pairs(self.extra) if self.extra else "(none)"))
        for block, checks in self.verdicts.items():
            out.append(f"{block}:")
            out += [f"  {check}: {_pairs(counts)}" for check, counts in checks.items()]
        return out

    def as_dict(self) -> dict[str, Any]:
        """The summary as JSON-compatible data."""
        return {
            "rows_in": self.rows_in,
            "samples": self.samples,
            "rejects": self.rejects,
            "by_class": self.by_class,
            "by_style": self.by_style,
            "choices": self.choices,
            "answer_positions": self.positions,
            "extra": self.extra,
            "verdicts": self.verdicts,
            "position_bias": {n: asdict(test) for n, test in self.bias.items()},
            "alpha": ALPHA,
            "group_by": self.group_by,
            "groups": {name: group.as_dict() for name, group in self.groups.items()},
            "total": self.total.as_dict(),
        }


def _bias(test: PositionBias | None) -> str:
    if test is None:
        return ""
    return f"; chi-square {test.statistic:.2f}, p {test.p_value:.3g}: {bias_verdict(test)}"


def bias_verdict(test: PositionBias) -> str:
    """The test's verdict in words."""
    if not test.testable:
        return f"too few samples to test (under {MIN_EXPECTED} expected per position)"
    return f"position bias (p < {ALPHA})" if test.biased else "no position bias found"


def _pairs(mapping: dict[Any, Any]) -> str:
    return ", ".join(
        f"{key}: {value:,}" if isinstance(value, int) else f"{key}: {value}"
        for key, value in mapping.items()
    )


class Tally:
    """A :class:`Summary` built batch by batch, for streams too long to hold at once.

    :meth:`add` each sample table as it comes (and :meth:`add_rejects` the rows a conversion
    left out); :meth:`summary` is then exactly what :func:`summarize` gives for all the tables
    concatenated. Besides the current batch, it holds counts and the distinct values of the
    text and integer extra keys (for their distinct counts).
    """

    def __init__(self, group_by: str | None = None) -> None:
        """``group_by`` names the extra key to break the samples down by (see :func:`summarize`)."""
        self._group_by = group_by
        self._samples = 0
        self._styles: Counter[str] = Counter()
        self._positions: dict[int, Counter[int]] = {}
        self._extra_type: pa.DataType | None = None
        self._json_keys: Counter[str] = Counter()
        self._distinct: dict[str, _Distinct] = {}
        self._blocks: dict[str, dict[str, Counter[str]]] = {}
        candidates = GROUP_COLUMNS if group_by is None else (group_by,)
        self._groups = {key: _Groups(key) for key in candidates}
        self._total = _Groups(None)
        self._rejects: Counter[str] | None = None
        self._rejected = 0

    @property
    def samples(self) -> int:
        """The samples added so far."""
        return self._samples

    @property
    def rejected(self) -> int:
        """The rejects added so far."""
        return self._rejected

    def add(self, table: pa.Table) -> None:
        """Count a (canonical) sample table's samples."""
        self._check_extra(table)
        self._samples += table.num_rows
        self._styles.update(_value_counts(table.column("style")))
        lengths = pc.list_value_length(table.column("choices"))
        pairs = pa.table({"n": lengths, "answer": table.column("answer_index")})
        grouped = pairs.group_by(["n", "answer"]).aggregate([([], "count_all")])
        for n, answer, count in zip(
            grouped.column("n").to_pylist(),
            grouped.column("answer").to_pylist(),
            grouped.column("count_all").to_pylist(),
            strict=True,
        ):
            self._positions.setdefault(n, Counter())[answer] += count
        json_extra = None
        if pa.types.is_struct(table.schema.field("extra").type):
            for key, distinct in self._distinct.items():
                distinct.add(pc.struct_field(table.column("extra"), key))
        else:
            json_extra = [json.loads(text) for text in table.column("extra").to_pylist()]
            for extra in json_extra:
                self._json_keys.update(extra.keys())  # the keys, not their values
        audits, fixes = _verdicts(table.column("audit")), _verdicts(table.column("fix"))
        parsed = {"audit": audits, "fix": fixes}
        for block in BLOCKS:
            rows = parsed[block] if block in parsed else _verdicts(table.column(block))
            if rows is None:
                continue
            checks = self._blocks.setdefault(block, {})
            for verdicts in rows:
                for check, verdict in (verdicts or {}).items():
                    if isinstance(verdict, bool):
                        checks.setdefault(check, Counter())[str(verdict).lower()] += 1
        for key, groups in self._groups.items():
            if json_extra is not None or key in self._extra_keys():  # a struct's keys are fixed
                groups.add(_group_values(table, key, json_extra), audits, fixes)
        self._total.add([""] * table.num_rows, audits, fixes)

    def _check_extra(self, table: pa.Table) -> None:
        dtype = table.schema.field("extra").type
        if self._extra_type is None:
            self._extra_type = dtype
            if pa.types.is_struct(dtype):
                self._distinct = {
                    child.name: _Distinct()
                    for child in dtype
                    if pa.types.is_string(child.type) or pa.types.is_integer(child.type)
                }
        elif dtype != self._extra_type:
            raise ValueError(
                f"summary: every table of one summary has one extra type; expected "
                f"{self._extra_type}, got {dtype}"
            )

    def add_rejects(self, rejects: Sequence[Problem]) -> None:
        """Count rows a conversion left out: the summary then says rows in and rejects."""
        if self._rejects is None:
            self._rejects = Counter()
        self._rejects.update(_reasons(rejects))
        self._rejected += len(rejects)

    def _extra_keys(self) -> list[str]:
        if self._extra_type is None:
            return []
        if pa.types.is_struct(self._extra_type):
            return [child.name for child in self._extra_type]
        return list(self._json_keys)

    def _extra(self) -> dict[str, str]:
        if self._extra_type is None or not pa.types.is_struct(self._extra_type):
            return {
                key: f"json ({count} of {self._samples} samples)"
                for key, count in self._json_keys.items()
            }
        described = {child.name: str(child.type) for child in self._extra_type}
        for key, distinct in self._distinct.items():
            described[key] += f" ({len(distinct):,} distinct)"
        return described

    def _group_key(self) -> str | None:
        keys = self._extra_keys()
        if self._group_by is None:
            return next((key for key in GROUP_COLUMNS if key in keys), None)
        if self._group_by not in keys:
            raise ValueError(
                f"group by {self._group_by!r}: expected an extra key "
                f"({', '.join(map(repr, keys))}), got a key no sample has"
            )
        return self._group_by

    def summary(self) -> Summary:
        """The summary of every table and reject added."""
        key = self._group_key()
        groups = self._groups[key].result()[0] if key is not None else {}
        positions = {
            n: dict(sorted(counts.items())) for n, counts in sorted(self._positions.items())
        }
        by_style = dict(sorted(self._styles.items()))
        return Summary(
            samples=self._samples,
            by_class={class_for_style(style).__name__: n for style, n in by_style.items()},
            by_style=by_style,
            choices={n: sum(counts.values()) for n, counts in positions.items()},
            positions=positions,
            extra=self._extra(),
            verdicts={
                block: {check: dict(sorted(c.items())) for check, c in checks.items()}
                for block in BLOCKS
                if (checks := self._blocks.get(block)) is not None
            },
            rows_in=None if self._rejects is None else self._samples + self._rejected,
            rejects={} if self._rejects is None else dict(self._rejects.most_common()),
            bias={n: position_bias(counts, n) for n, counts in positions.items()},
            group_by=key,
            groups=groups,
            total=self._total.result()[1],
        )


def _value_counts(values: pa.ChunkedArray) -> dict[Any, int]:
    counts = pc.value_counts(values)
    return dict(zip(counts.field(0).to_pylist(), counts.field(1).to_pylist(), strict=True))


def summarize(
    table: pa.Table, rejects: Sequence[Problem] | None = None, *, group_by: str | None = None
) -> Summary:
    """Summarise a (canonical) sample table; with ``rejects``, as the result of a conversion.

    ``group_by`` names the extra key to break the samples down by (default: ``subject`` or
    ``activity_label``, whichever the table has first; none if neither). :class:`Tally`
    gives the same summary batch by batch.
    """
    tally = Tally(group_by)
    tally.add(table)
    if rejects is not None:
        tally.add_rejects(rejects)
    return tally.summary()
