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
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import BLOCKS
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.errors import Problem
from sdvm_hf.samples import class_for_style


def choice_counts(table: pa.Table) -> dict[int, int]:
    """How many samples have each number of choices."""
    counts = pc.value_counts(pc.list_value_length(table.column("choices")))
    return dict(sorted(zip(counts.field(0).to_pylist(), counts.field(1).to_pylist(), strict=True)))


def answer_positions(table: pa.Table) -> dict[int, dict[int, int]]:
    """For each number of choices, how often the answer sits at each position."""
    grouped = (
        pa.table(
            {
                "n": pc.list_value_length(table.column("choices")),
                "answer": table.column("answer_index"),
            }
        )
        .group_by(["n", "answer"])
        .aggregate([([], "count_all")])
    )
    out: dict[int, dict[int, int]] = {}
    for n, answer, count in zip(
        grouped.column("n").to_pylist(),
        grouped.column("answer").to_pylist(),
        grouped.column("count_all").to_pylist(),
        strict=True,
    ):
        out.setdefault(n, {})[answer] = count
    return {n: dict(sorted(positions.items())) for n, positions in sorted(out.items())}


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
    if isinstance(rejects, Rejects):
        return dict(rejects.reasons().most_common())
    kinds = Counter(
        f"{p.where}: expected {p.expected}" + (f" ({p.note})" if p.note else "") for p in rejects
    )
    return dict(kinds.most_common())


def extra_types(table: pa.Table) -> dict[str, str]:
    """The extra keys and their Arrow types (``json`` values for a JSON extra column)."""
    dtype = table.schema.field("extra").type
    if pa.types.is_struct(dtype):
        extra = table.column("extra").combine_chunks()
        described = {}
        for i, child in enumerate(dtype):
            described[child.name] = str(child.type)
            if pa.types.is_string(child.type) or pa.types.is_integer(child.type):
                distinct = pc.count_distinct(extra.field(i)).as_py()
                described[child.name] += f" ({distinct:,} distinct)"
        return described
    keys: Counter[str] = Counter()
    for text in table.column("extra").to_pylist():
        keys.update(json.loads(text))
    return {key: f"json ({count} of {table.num_rows} samples)" for key, count in keys.items()}


def verdict_rollup(table: pa.Table) -> dict[str, dict[str, dict[str, int]]]:
    """For each block present, each check's true / false counts (boolean checks only)."""
    rollup: dict[str, dict[str, dict[str, int]]] = {}
    for block in BLOCKS:
        column = table.column(block)
        if column.null_count == len(column):
            continue
        checks: dict[str, Counter[str]] = {}
        for text in column.to_pylist():
            if text is None:
                continue
            for check, verdict in json.loads(text).items():
                if isinstance(verdict, bool):
                    checks.setdefault(check, Counter())[str(verdict).lower()] += 1
        rollup[block] = {check: dict(sorted(c.items())) for check, c in checks.items()}
    return rollup


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


def extra_keys(table: pa.Table) -> list[str]:
    """The extra keys any sample has, in order of appearance."""
    dtype = table.schema.field("extra").type
    if pa.types.is_struct(dtype):
        return [child.name for child in dtype]
    keys: dict[str, None] = {}
    for text in table.column("extra").to_pylist():
        keys.update(dict.fromkeys(json.loads(text)))
    return list(keys)


def group_column(table: pa.Table, group_by: str | None = None) -> str | None:
    """The extra key to group by: ``group_by``, else the first of :data:`GROUP_COLUMNS`."""
    keys = extra_keys(table)
    if group_by is None:
        return next((key for key in GROUP_COLUMNS if key in keys), None)
    if group_by not in keys:
        raise ValueError(
            f"group by {group_by!r}: expected an extra key ({', '.join(map(repr, keys))}), "
            "got a key no sample has"
        )
    return group_by


def group_values(table: pa.Table, key: str) -> list[str]:
    """Each sample's value of the extra ``key``, as text (JSON for non-strings)."""
    if pa.types.is_struct(table.schema.field("extra").type):
        values = pc.struct_field(table.column("extra"), key).to_pylist()
    else:
        values = [json.loads(text).get(key, MISSING) for text in table.column("extra").to_pylist()]
    return [
        MISSING if value is None else value if isinstance(value, str) else json.dumps(value)
        for value in values
    ]


def group_rollup(table: pa.Table, key: str | None) -> tuple[dict[str, Group], Group]:
    """Per group of ``key`` (sorted by name) and in total: samples, audit failures, fixes."""
    names = group_values(table, key) if key else [""] * table.num_rows
    audits = table.column("audit").to_pylist()
    fixes = table.column("fix").to_pylist()
    groups: dict[str, Group] = {}
    checks: dict[str, None] = {}
    for name, audit_text, fix_text in zip(names, audits, fixes, strict=True):
        group = groups.setdefault(name, Group())
        group.samples += 1
        if audit_text is not None:
            group.audited += 1
            for check, verdict in json.loads(audit_text).items():
                if isinstance(verdict, bool):
                    checks.setdefault(check)
                    group.failing[check] = group.failing.get(check, 0) + (not verdict)
        fix = json.loads(fix_text) if fix_text is not None else None
        if isinstance(fix, dict):
            group.fixed += bool(fix.get("changes"))
            group.flagged += fix.get("flagged") is True
    total = Group()
    for group in groups.values():
        group.failing = {check: group.failing.get(check, 0) for check in checks}
        total.samples += group.samples
        total.audited += group.audited
        total.fixed += group.fixed
        total.flagged += group.flagged
        for check, count in group.failing.items():
            total.failing[check] = total.failing.get(check, 0) + count
    total.failing = {check: total.failing.get(check, 0) for check in checks}
    return (dict(sorted(groups.items())) if key else {}), total


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


def summarize(
    table: pa.Table, rejects: Sequence[Problem] | None = None, *, group_by: str | None = None
) -> Summary:
    """Summarise a (canonical) sample table; with ``rejects``, as the result of a conversion.

    ``group_by`` names the extra key to break the samples down by (default: ``subject`` or
    ``activity_label``, whichever the table has first; none if neither).
    """
    counts = pc.value_counts(table.column("style"))
    by_style = dict(
        sorted(zip(counts.field(0).to_pylist(), counts.field(1).to_pylist(), strict=True))
    )
    by_class = {class_for_style(style).__name__: count for style, count in by_style.items()}
    positions = answer_positions(table)
    key = group_column(table, group_by)
    groups, total = group_rollup(table, key)
    return Summary(
        samples=table.num_rows,
        by_class=by_class,
        by_style=by_style,
        choices=choice_counts(table),
        positions=positions,
        extra=extra_types(table),
        verdicts=verdict_rollup(table),
        rows_in=None if rejects is None else table.num_rows + len(rejects),
        rejects={} if rejects is None else reject_reasons(rejects),
        bias={n: position_bias(counts, n) for n, counts in positions.items()},
        group_by=key,
        groups=groups,
        total=total,
    )
