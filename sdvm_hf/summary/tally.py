"""Counting a sample table, batch by batch, into a :class:`~sdvm_hf.summary.Summary`.

Everything here reads the Arrow table column by column; nothing builds samples. :class:`Tally`
counts classes, styles, answer positions (and, for shuffled samples, where the answers sat
before), the extra keys, every block's checks (:mod:`.checks`) and the groups (:mod:`.groups`);
:func:`summarize` is a tally of one table.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import BLOCKS
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.errors import InputError, Problem
from sdvm_hf.samples import class_for_style
from sdvm_hf.summary.checks import CheckCounts
from sdvm_hf.summary.examples import EXAMPLES
from sdvm_hf.summary.groups import GROUP_COLUMNS, MISSING, TOP_GROUPS, Group, Groups, group_values
from sdvm_hf.summary.result import Summary
from sdvm_hf.summary.stats import position_bias

__all__ = ["DISTINCT_TEXT", "ORDER_KEY", "Tally", "reject_reasons", "summarize"]

ORDER_KEY = "sdvm_hf_choice_order"
"""The extra key where :func:`sdvm_hf.shuffle.shuffle_choices` keeps each sample's original
choice order: ``order[i]`` is the original position of the choice now at ``i``."""


def reject_reasons(rejects: Sequence[Problem]) -> dict[str, int]:
    """Rejects grouped by category: where, and the problem's stable kind.

    Not by the message or the value, so rewording a message never changes a report's
    categories (:data:`sdvm_hf.errors.KINDS` says what each kind means).
    """
    return dict(_reasons(rejects).most_common())


def _reasons(rejects: Sequence[Problem]) -> Counter[str]:
    """How many rejects fall in each category (where and kind), in order of first appearance."""
    if isinstance(rejects, Rejects):
        return rejects.categories()
    return Counter(p.category for p in rejects)


DISTINCT_TEXT = 1_000
"""Distinct values of a text extra key counted exactly up to this many; past it, a summary
says "more than 1,000 distinct" (a free-text key such as HellaSwag's ``ctx_a`` has a value
per row: counting them all cost 7% of a conversion and held every text)."""


class _Distinct:
    """The distinct non-null values of a column, seen batch by batch, kept in Arrow.

    Each batch's unique values wait in a list and are merged once they outnumber the values
    merged so far, so a stream of any length costs O(n log n) and holds, besides the current
    batch, about twice the distinct values (for HellaSwag's ``ind``, 4 bytes each).

    With a ``bound``, the count is exact up to ``bound`` and then only "more than ``bound``":
    values are hashed a slice at a time until more than ``bound`` are seen, then never again.
    """

    def __init__(self, bound: int | None = None) -> None:
        self._merged: pa.Array | None = None
        self._waiting: list[pa.Array] = []
        self._waiting_values = 0
        self._bound = bound
        self._past_bound = False

    def add(self, values: pa.ChunkedArray) -> None:
        if self._bound is not None:
            self._add_bounded(values, self._bound)
            return
        unique = pc.unique(values.drop_null())
        self._waiting.append(unique)
        self._waiting_values += len(unique)
        if self._waiting_values > max(4096, 0 if self._merged is None else len(self._merged)):
            self._merge()

    def _add_bounded(self, values: pa.ChunkedArray, bound: int) -> None:
        step = 4 * bound
        for offset in range(0, len(values), step):
            if self._past_bound:
                return
            unique = pc.unique(values.slice(offset, step)).drop_null()
            self._waiting.append(unique)
            self._waiting_values += len(unique)
            if self._known() + self._waiting_values > bound:  # perhaps past it: look
                self._merge()
                if self._known() > bound:
                    self._past_bound = True
                    self._merged, self._waiting, self._waiting_values = None, [], 0

    def _known(self) -> int:
        return 0 if self._merged is None else len(self._merged)

    def _merge(self) -> None:
        parts = ([] if self._merged is None else [self._merged]) + self._waiting
        if parts:
            self._merged = pc.unique(pa.chunked_array(parts, type=parts[0].type))
        self._waiting, self._waiting_values = [], 0

    def __len__(self) -> int:
        self._merge()
        return self._known()

    def describe(self) -> str:
        """``"57 distinct"``, or past the bound ``"more than 1,000 distinct"``."""
        if self._past_bound:
            return f"more than {self._bound:,} distinct"
        return f"{len(self):,} distinct"


class Tally:
    """A :class:`Summary` built batch by batch, for streams too long to hold at once.

    :meth:`add` each sample table as it comes (and :meth:`add_rejects` the rows a conversion
    left out); :meth:`summary` is then exactly what :func:`summarize` gives for all the tables
    concatenated. Besides the current batch, it holds counts, the distinct values of the
    integer extra keys and of the text ones up to :data:`DISTINCT_TEXT` (for their distinct
    counts) and the counts per group value.
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
            raise InputError(f"top groups: expected at least 1 (or None for all), got {top}")
        self._group_by = group_by
        self._top = top
        self._samples = 0
        self._styles: Counter[str] = Counter()
        self._positions: dict[int, Counter[int]] = {}
        self._before: dict[int, Counter[int]] = {}
        self._in_place = 0
        self._extra_type: pa.DataType | None = None
        self._json_keys: Counter[str] = Counter()
        self._distinct: dict[str, _Distinct] = {}
        self._checks = CheckCounts(examples)
        candidates = GROUP_COLUMNS if group_by is None else (group_by,)
        self._groups = {key: Groups(key) for key in candidates}
        self._total = Groups(None)
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
        grouped = pairs.group_by(["n", "answer"], use_threads=False).aggregate([([], "count_all")])
        for n, answer, count in zip(
            grouped.column("n").to_pylist(),
            grouped.column("answer").to_pylist(),
            grouped.column("count_all").to_pylist(),
            strict=True,
        ):
            self._positions.setdefault(n, Counter())[answer] += count
        json_extra = None
        if pa.types.is_struct(table.schema.field("extra").type):
            fields = struct_fields(table.column("extra"))  # once: by name it is linear each
            for key, distinct in self._distinct.items():
                distinct.add(fields[key])
        else:
            json_extra = [json.loads(text) for text in table.column("extra").to_pylist()]
            for extra in json_extra:
                self._json_keys.update(extra.keys())  # the keys, not their values
        self._count_original_positions(table, json_extra)
        counts = self._checks.count(table, first)
        for key, groups in self._groups.items():
            if json_extra is not None or key in self._extra_keys():  # a struct's keys are fixed
                groups.add(group_values(table, key, json_extra), counts)
        self._total.add(pa.repeat("", table.num_rows), counts)

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
                    child.name: _Distinct(DISTINCT_TEXT if _is_text(child.type) else None)
                    for child in dtype
                    if _is_text(child.type) or pa.types.is_integer(child.type)
                }
        elif dtype != self._extra_type:
            raise InputError(
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
            described[key] += f" ({distinct.describe()})"
        return described

    def _group_key(self) -> str | None:
        keys = self._extra_keys()
        if self._group_by is None:
            return next((key for key in GROUP_COLUMNS if key in keys), None)
        if self._group_by not in keys:
            raise InputError(
                f"group by {self._group_by!r}: expected an extra key "
                f"({', '.join(map(repr, keys))}), got a key no sample has"
            )
        return self._group_by

    def summary(self) -> Summary:
        """The summary of every table and reject added."""
        key = self._group_key()
        slots = self._checks.slots()
        groups: dict[str, Group] = {}
        group_count = 0
        if key is not None:
            groups, _, group_count = self._groups[key].result(slots, self._top)
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
                if (checks := self._checks.verdicts.get(block)) is not None
            },
            rows_in=None if self._rejects is None else self._samples + self._rejected,
            rejects={} if self._rejects is None else dict(self._rejects.most_common()),
            bias={n: position_bias(counts, n) for n, counts in positions.items()},
            group_by=key,
            groups=groups,
            total=self._total.result(slots, None)[1],
            others={block: list(keys) for block, keys in self._checks.others.items() if keys},
            group_count=group_count,
            examples=self._checks.examples(),
            fixed_examples=self._checks.fixed_examples(),
            positions_before={
                n: {p: counts.get(p, 0) for p in range(n)}
                for n, counts in sorted(self._before.items())
            },
            left_in_place=self._in_place,
        )


def _is_text(dtype: pa.DataType) -> bool:
    return bool(pa.types.is_string(dtype))


def struct_fields(column: pa.ChunkedArray) -> dict[str, pa.ChunkedArray]:
    """Each field of a struct column by name, in one pass over its fields.

    ``pc.struct_field(column, name)`` looks the name up among all the fields, so taking every
    field that way is quadratic in their number (a row of 20,000 extra keys took minutes).
    """
    kind = column.type
    names = [kind.field(i).name for i in range(kind.num_fields)]
    children = [chunk.flatten() for chunk in column.chunks]  # the offsets and nulls applied
    return {
        name: pa.chunked_array([child[i] for child in children], kind.field(i).type)
        for i, name in reversed(list(enumerate(names)))  # a repeated name: the first wins
    }


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
