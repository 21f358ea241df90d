"""A summary as text lines: what ``sdvm-hf inspect`` and the conversions print.

:meth:`Summary.lines() <sdvm_hf.summary.Summary.lines>` is :func:`summary_lines`. This module
sits below the :class:`~sdvm_hf.summary.Summary` it renders (which calls it), so it reads the
summary through :class:`SummaryFields`, the fields it needs, rather than importing the class.
"""

from __future__ import annotations

from typing import Any, Protocol

from sdvm_hf._html import percent
from sdvm_hf.errors import read_category
from sdvm_hf.summary.groups import Group
from sdvm_hf.summary.stats import PositionBias, bias_verdict
from sdvm_hf.verdicts import check_name

__all__ = ["SummaryFields", "summary_lines"]


class SummaryFields(Protocol):
    """The fields of :class:`~sdvm_hf.summary.Summary` its text lines show."""

    rows_in: int | None
    samples: int
    rejects: dict[str, int]
    by_class: dict[str, int]
    by_style: dict[str, int]
    choices: dict[int, int]
    positions: dict[int, dict[int, int]]
    bias: dict[int, PositionBias]
    positions_before: dict[int, dict[int, int]]
    left_in_place: int
    extra: dict[str, str]
    verdicts: dict[str, dict[str, dict[str, int]]]
    total: Group
    others: dict[str, list[str]]


def summary_lines(summary: SummaryFields) -> list[str]:
    """The summary as text lines."""
    out = []
    if summary.rows_in is not None:
        out.append(f"rows in:      {summary.rows_in:,}")
    out.append(f"samples out:  {summary.samples:,}")
    if summary.rows_in is not None:
        out.append(f"rejects:      {sum(summary.rejects.values()):,}")
        out += [f"  {count:,}  {read_category(c)}" for c, count in summary.rejects.items()]
    out.append("by class:     " + _pairs(summary.by_class))
    out.append("by style:     " + _pairs(summary.by_style))
    out.append("choices:      " + _pairs({f"{n} choices": c for n, c in summary.choices.items()}))
    for n, positions in summary.positions.items():
        total = sum(positions.values())
        shares = ", ".join(f"{p}: {percent(c / total, 0)}" for p, c in positions.items())
        out.append(f"answer position ({n} choices): {shares}" + _bias(summary.bias.get(n)))
    for n, positions in summary.positions_before.items():
        total = sum(positions.values())
        shares = ", ".join(f"{p}: {percent(c / total, 0)}" for p, c in positions.items())
        out.append(f"  before the shuffle ({n} choices): {shares}")
    if summary.positions_before:
        out.append(f"  left in place (choices refer to each other): {summary.left_in_place:,}")
    out.append("extra:        " + (_pairs(summary.extra) if summary.extra else "(none)"))
    for block, checks in summary.verdicts.items():
        carrying = summary.total.carrying.get(block, 0)
        out.append(f"{block}: {carrying:,} samples")
        for check, counts in checks.items():
            bad = summary.total.checks.get(block, {}).get(check, 0)
            share = f" ({percent(bad / carrying)} bad)" if carrying else ""
            out.append(f"  {check_name(block, check)}: {_pairs(counts)}{share}")
        if summary.others.get(block):
            out.append(f"  not checks: {', '.join(summary.others[block])}")
    return out


def _bias(test: PositionBias | None) -> str:
    if test is None:
        return ""
    return f"; chi-square {test.statistic:.2f}, p {test.p_value:.3g}: {bias_verdict(test)}"


def _pairs(mapping: dict[Any, Any]) -> str:
    return ", ".join(
        f"{key}: {value:,}" if isinstance(value, int) else f"{key}: {value}"
        for key, value in mapping.items()
    )
