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

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._html import percent
from sdvm_hf._wire import BLOCKS
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.errors import Problem
from sdvm_hf.samples import class_for_style

__all__ = [
    "Group",
    "PositionBias",
    "Summary",
    "Tally",
    "flatten_block",
    "position_bias",
    "summarize",
]

ORDER_KEY = "sdvm_hf_choice_order"
"""The extra key where :func:`sdvm_hf.shuffle.shuffle_choices` keeps each sample's original
choice order: ``order[i]`` is the original position of the choice now at ``i``."""


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


BAD_WHEN_TRUE: frozenset[tuple[str, str]] = frozenset({("fix", "flagged")})
"""The (block, check) pairs where ``true`` is the bad outcome; every other check fails on
``false``. The wire format names ``fix.flagged`` (the fix could not settle the sample)."""


def flatten_block(block: Mapping[str, Any]) -> tuple[dict[str, bool], list[str]]:
    """A block's boolean leaves by dotted name, and the dotted names of its other leaves.

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


def reads_bad(block: str, check: str, value: bool) -> bool:
    """Whether ``value`` of ``check`` in ``block`` is the bad outcome (:data:`BAD_WHEN_TRUE`)."""
    return value if (block, check) in BAD_WHEN_TRUE else not value


EXAMPLES = 5
"""Example samples a summary keeps per check (and of fixed samples), by default."""


_MASK = 0xFFFFFFFFFFFFFFFF


def _row_key(row: int) -> int:
    """A fixed pseudo-random key per row number (splitmix64): examples are the lowest keys.

    >>> _row_key(0) == int(_row_keys(np.array([0]))[0])
    True
    """
    z = (row + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """:func:`_row_key` of many row numbers at once (uint64 arithmetic wraps as the mask)."""
    z = rows.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class _Examples:
    """Up to ``size`` row numbers: those with the lowest :func:`_row_key`.

    The row number is mixed with a hash of ``salt`` first, so each check shows its own rows.
    The same rows whatever the batches, spread over the file rather than its first rows.
    """

    def __init__(self, size: int, salt: str = "") -> None:
        self.size = size
        digest = hashlib.blake2b(salt.encode("utf-8"), digest_size=4).digest()
        self._salt = int.from_bytes(digest, "big") << 32  # each check its own spread of rows
        self._keys = np.zeros(0, np.uint64)
        self._rows = np.zeros(0, np.int64)

    def add(self, rows: np.ndarray) -> None:
        """Consider these row numbers (an int array)."""
        if self.size <= 0 or not len(rows):
            return
        keys = np.concatenate(
            [self._keys, _row_keys(rows.astype(np.uint64) ^ np.uint64(self._salt))]
        )
        rows = np.concatenate([self._rows, rows.astype(np.int64)])
        if len(keys) > self.size:
            keep = np.argpartition(keys, self.size - 1)[: self.size]
            keys, rows = keys[keep], rows[keep]
        self._keys, self._rows = keys, rows

    def rows(self) -> list[int]:
        return sorted(int(row) for row in self._rows)


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


_SAMPLES, _FIXED = "samples", "fixed"
"""The count columns every group table has; ``carry:BLOCK`` and ``bad:N`` (a check's slot)
are added as blocks and checks appear."""


class _Groups:
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
        if not isinstance(names, pa.Array | pa.ChunkedArray):
            names = pa.array(names, pa.string())
        table = pa.table({"name": names, **counts})
        columns = [name for name in table.column_names if name != "name"]
        part = table.group_by("name").aggregate([(c, "sum") for c in columns])
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
        merged = table.group_by("name").aggregate([(c, "sum") for c in columns])
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
                merged, sort_keys=[(_SAMPLES, "descending"), ("name", "ascending")]
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
        samples=row.get(_SAMPLES) or 0,
        audited=carrying.get("audit", 0),
        failing=dict(checks.get("audit", {})),
        fixed=row.get(_FIXED) or 0,
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


def _group_values(
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
    """Per block, each boolean check (nested dicts flattened to dotted names) and how many
    samples have it ``true`` and ``false``."""
    rows_in: int | None = None
    rejects: dict[str, int] = field(default_factory=dict)
    bias: dict[int, PositionBias] = field(default_factory=dict)
    """Each choices-count's answer positions tested against uniform."""
    group_by: str | None = None
    """The extra key :attr:`groups` is by, or ``None``."""
    groups: dict[str, Group] = field(default_factory=dict)
    """Per value of :attr:`group_by`, sorted by name: the largest :data:`TOP_GROUPS` (by
    default), and the others summed as :data:`REST`."""
    total: Group = field(default_factory=Group)
    """All samples: the audit failures, fixes and flags."""
    others: dict[str, list[str]] = field(default_factory=dict)
    """Per block, the dotted names of the leaves that are not booleans (listed, not counted)."""
    group_count: int = 0
    """How many distinct values :attr:`group_by` has (``groups`` may list fewer)."""
    examples: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    """Per block and check, a few row numbers where the check reads bad (the same rows on
    every run: the lowest of a fixed hash of the row number)."""
    fixed_examples: list[int] = field(default_factory=list)
    """A few row numbers of samples the fix changed, chosen the same way."""
    positions_before: dict[int, dict[int, int]] = field(default_factory=dict)
    """For shuffled samples (see :mod:`sdvm_hf.shuffle`), each choices-count's answer
    positions before the shuffle; empty when no sample records its original order."""
    left_in_place: int = 0
    """Shuffled-file samples whose choices refer to each other and kept their order."""

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
            shares = ", ".join(f"{p}: {percent(c / total, 0)}" for p, c in positions.items())
            out.append(f"answer position ({n} choices): {shares}" + _bias(self.bias.get(n)))
        for n, positions in self.positions_before.items():
            total = sum(positions.values())
            shares = ", ".join(f"{p}: {percent(c / total, 0)}" for p, c in positions.items())
            out.append(f"  before the shuffle ({n} choices): {shares}")
        if self.positions_before:
            out.append(f"  left in place (choices refer to each other): {self.left_in_place:,}")
        out.append("extra:        " + (_pairs(self.extra) if self.extra else "(none)"))
        for block, checks in self.verdicts.items():
            carrying = self.total.carrying.get(block, 0)
            out.append(f"{block}: {carrying:,} samples")
            for check, counts in checks.items():
                bad = self.total.checks.get(block, {}).get(check, 0)
                share = f" ({percent(bad / carrying)} bad)" if carrying else ""
                out.append(f"  {check}: {_pairs(counts)}{share}")
            if self.others.get(block):
                out.append(f"  not checks: {', '.join(self.others[block])}")
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
            "answer_positions_before_shuffle": self.positions_before,
            "left_in_place": self.left_in_place,
            "extra": self.extra,
            "verdicts": self.verdicts,
            "not_checks": self.others,
            "position_bias": {n: asdict(test) for n, test in self.bias.items()},
            "alpha": ALPHA,
            "group_by": self.group_by,
            "group_count": self.group_count,
            "groups": {name: group.as_dict() for name, group in self.groups.items()},
            "total": self.total.as_dict(),
            "examples": self.examples,
            "fixed_examples": self.fixed_examples,
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
    concatenated. Besides the current batch, it holds counts, the distinct values of the
    text and integer extra keys (for their distinct counts) and the counts per group value.
    """

    def __init__(
        self,
        group_by: str | None = None,
        *,
        top: int | None = TOP_GROUPS,
        examples: int = EXAMPLES,
    ) -> None:
        """Count samples as they come.

        ``group_by`` names the extra key to break the samples down by (see :func:`summarize`),
        ``top`` how many groups to list (``None``: all), ``examples`` how many row numbers to
        keep per check.
        """
        if top is not None and top < 1:
            raise ValueError(f"top groups: expected at least 1 (or None for all), got {top}")
        self._group_by = group_by
        self._top = top
        self._examples = examples
        self._samples = 0
        self._styles: Counter[str] = Counter()
        self._positions: dict[int, Counter[int]] = {}
        self._before: dict[int, Counter[int]] = {}
        self._in_place = 0
        self._extra_type: pa.DataType | None = None
        self._json_keys: Counter[str] = Counter()
        self._distinct: dict[str, _Distinct] = {}
        self._blocks: dict[str, dict[str, Counter[str]]] = {}
        self._others: dict[str, dict[str, None]] = {}
        self._slots: dict[tuple[str, str], int] = {}
        self._picked: dict[tuple[str, str], _Examples] = {}
        self._fixed = _Examples(examples)
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
        first = self._samples
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
        self._count_original_positions(table, json_extra)
        counts = self._count_blocks(table, first)
        for key, groups in self._groups.items():
            if json_extra is not None or key in self._extra_keys():  # a struct's keys are fixed
                groups.add(_group_values(table, key, json_extra), counts)
        self._total.add(pa.repeat("", table.num_rows), counts)

    def _count_blocks(self, table: pa.Table, first: int) -> dict[str, pa.Array]:
        """Count every block's checks; the per-row counts the groups sum, by column name.

        Each distinct block text is parsed once (verdicts repeat: a few booleans); the rows
        are counted through the dictionary indices, in numpy.
        """
        rows = table.num_rows
        counts: dict[str, pa.Array] = {_SAMPLES: pa.array(np.ones(rows, np.int64))}
        bad: dict[int, np.ndarray] = {}
        for block in BLOCKS:
            column = table.column(block)
            if column.null_count == len(column):
                continue
            encoded = pc.dictionary_encode(column).combine_chunks()
            texts = encoded.dictionary.to_pylist()
            index = pc.fill_null(encoded.indices, len(texts)).to_numpy(zero_copy_only=False)
            seen = np.bincount(index, minlength=len(texts) + 1)
            verdicts = self._blocks.setdefault(block, {})
            others = self._others.setdefault(block, {})
            carried = np.zeros(len(texts) + 1, bool)  # per distinct text; the last is null
            fixed = np.zeros(len(texts) + 1, bool)
            failing: dict[int, np.ndarray] = {}
            for number, text in enumerate(texts):
                value = json.loads(text)
                if not isinstance(value, Mapping):
                    continue
                carried[number] = True
                checks, leaves = flatten_block(value)
                for check, verdict in checks.items():
                    verdicts.setdefault(check, Counter())[str(verdict).lower()] += int(seen[number])
                    slot = self._slot(block, check)
                    if reads_bad(block, check, verdict):
                        failing.setdefault(slot, np.zeros(len(texts) + 1, bool))[number] = True
                for leaf in leaves:
                    others.setdefault(leaf)
                fixed[number] = block == "fix" and bool(value.get("changes"))
            counts[f"carry:{block}"] = pa.array(carried[index].astype(np.int64))
            if block == "fix":
                per_row = fixed[index]
                counts[_FIXED] = pa.array(per_row.astype(np.int64))
                self._fixed.add(first + np.flatnonzero(per_row))
            slots = {number: key for key, number in self._slots.items()}
            for slot, values in failing.items():
                per_row = values[index]
                bad[slot] = per_row
                self._picked[slots[slot]].add(first + np.flatnonzero(per_row))
        for slot, column in sorted(bad.items()):
            counts[f"bad:{slot}"] = pa.array(column.astype(np.int64))
        return counts

    def _slot(self, block: str, check: str) -> int:
        slot = self._slots.get((block, check))
        if slot is None:
            slot = self._slots[block, check] = len(self._slots)
            self._picked[block, check] = _Examples(self._examples, f"{block}\x1f{check}")
        return slot

    def _count_original_positions(
        self, table: pa.Table, json_extra: list[dict[str, Any]] | None
    ) -> None:
        """For shuffled samples, where each answer sat before the shuffle.

        A sample left in place (its choices refer to each other) has the key with ``None``.
        """
        if json_extra is not None:
            orders = [extra.get(ORDER_KEY, MISSING) for extra in json_extra]
        elif ORDER_KEY in self._extra_keys():
            orders = pc.struct_field(table.column("extra"), ORDER_KEY).to_pylist()
        else:
            return
        lengths = pc.list_value_length(table.column("choices")).to_pylist()
        answers = table.column("answer_index").to_pylist()
        for order, answer, n in zip(orders, answers, lengths, strict=True):
            if order is None:
                self._in_place += 1
                self._before.setdefault(n, Counter())[answer] += 1
            elif isinstance(order, list) and 0 <= answer < len(order):
                self._before.setdefault(len(order), Counter())[order[answer]] += 1

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
        slots = sorted(self._slots, key=self._slots.__getitem__)
        groups: dict[str, Group] = {}
        group_count = 0
        if key is not None:
            groups, _, group_count = self._groups[key].result(slots, self._top)
        positions = {
            n: dict(sorted(counts.items())) for n, counts in sorted(self._positions.items())
        }
        by_style = dict(sorted(self._styles.items()))
        examples: dict[str, dict[str, list[int]]] = {}
        for block, check in slots:
            if rows := self._picked[block, check].rows():
                examples.setdefault(block, {})[check] = rows
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
            total=self._total.result(slots, None)[1],
            others={block: list(keys) for block, keys in self._others.items() if keys},
            group_count=group_count,
            examples=examples,
            fixed_examples=self._fixed.rows(),
            positions_before={
                n: {p: counts.get(p, 0) for p in range(n)}
                for n, counts in sorted(self._before.items())
            },
            left_in_place=self._in_place,
        )


def _value_counts(values: pa.ChunkedArray) -> dict[Any, int]:
    counts = pc.value_counts(values)
    return dict(zip(counts.field(0).to_pylist(), counts.field(1).to_pylist(), strict=True))


def summarize(
    table: pa.Table,
    rejects: Sequence[Problem] | None = None,
    *,
    group_by: str | None = None,
    top: int | None = TOP_GROUPS,
    examples: int = EXAMPLES,
) -> Summary:
    """Summarise a (canonical) sample table; with ``rejects``, as the result of a conversion.

    ``group_by`` names the extra key to break the samples down by (default: ``subject`` or
    ``activity_label``, whichever the table has first; none if neither); ``top`` how many of
    its groups to list one by one (the rest are summed); ``examples`` how many row numbers to
    keep per check. :class:`Tally` gives the same summary batch by batch.
    """
    tally = Tally(group_by, top=top, examples=examples)
    tally.add(table)
    if rejects is not None:
        tally.add_rejects(rejects)
    return tally.summary()
