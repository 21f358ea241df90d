"""Summaries of a sample table: what a conversion gave, what a file holds, what the audit said.

Everything here reads the Arrow table column by column; nothing builds samples.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
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


def reject_reasons(rejects: Sequence[Problem]) -> dict[str, int]:
    """Rejects grouped by their fields: where, what was expected, the note (not the value)."""
    problems = rejects.problems if isinstance(rejects, Rejects) else rejects
    kinds = Counter(
        f"{p.where}: expected {p.expected}" + (f" ({p.note})" if p.note else "") for p in problems
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
            out.append(f"answer position ({n} choices): {shares}")
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
        }


def _pairs(mapping: dict[Any, Any]) -> str:
    return ", ".join(
        f"{key}: {value:,}" if isinstance(value, int) else f"{key}: {value}"
        for key, value in mapping.items()
    )


def summarize(table: pa.Table, rejects: Sequence[Problem] | None = None) -> Summary:
    """Summarise a (canonical) sample table; with ``rejects``, as the result of a conversion."""
    counts = pc.value_counts(table.column("style"))
    by_style = dict(
        sorted(zip(counts.field(0).to_pylist(), counts.field(1).to_pylist(), strict=True))
    )
    by_class = {class_for_style(style).__name__: count for style, count in by_style.items()}
    return Summary(
        samples=table.num_rows,
        by_class=by_class,
        by_style=by_style,
        choices=choice_counts(table),
        positions=answer_positions(table),
        extra=extra_types(table),
        verdicts=verdict_rollup(table),
        rows_in=None if rejects is None else table.num_rows + len(rejects),
        rejects={} if rejects is None else reject_reasons(rejects),
    )
