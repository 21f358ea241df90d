"""Each row back in its layout: the inverse half, the preset's follow rule, the policies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

import numpy as np
import pyarrow as pa

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.inverse import EncodeError
from sdvm_hf.exporter._annotate import annotated
from sdvm_hf.exporter._layout import (
    check_labels,
    check_layout_columns,
    class_labels,
    config_values,
    label_problem,
    layout_schema,
    layout_table,
)
from sdvm_hf.exporter._lines import RowLine, published_row, write_rows_among
from sdvm_hf.exporter._rejected import rejected_rows, with_rejected
from sdvm_hf.exporter._stream import SLICE_ROWS, open_input, originals_of
from sdvm_hf.exporter._tables import encode, interleave, shuffled, unchanged
from sdvm_hf.exporter._types import Counts, ExportError, Part
from sdvm_hf.exporter.policy import DROP, Policy
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.shuffle import ORDER_KEY, unshuffled
from sdvm_hf.verdicts import failing_rows

_encode = encode
"""The table form batch by batch (:func:`._tables.encode`), which the tests hold to a copy."""


def _publish(
    part: Part, sample: MultipleChoiceSample, row: int, labels: dict[str, list[str]]
) -> tuple[dict[str, Any], str]:
    """The published row for ``sample``; and why a fix could not be expressed, or ``""``."""
    try:
        if part.preset is not None:
            published, why = part.preset.published_row(part.mapping, sample)
        else:
            published, why = part.mapping.encode(sample), None
    except EncodeError as error:
        raise ExportError(f"{part.path} row {row}: {error}") from None
    return published, why or label_problem(labels, published)


@dataclass(frozen=True)
class Method:
    """How the export does its work; the tests hold the fast way to the reference way.

    The same tables, lines and totals come out either way.
    """

    table_form: bool = True
    """Whether the rows a fix left alone go back through the table form of the inverse half
    (``False``: every row through the row form and the follow rule)."""
    in_place: bool = True
    """Whether the export works on the rows where they are read, without copying them: the
    table form batch by batch on the sample file's own buffers, the record's plain lines
    built in Arrow, the kept rows copied only when some are dropped, the card's sizes
    counted (:mod:`._size`). ``False``: the rows copied into one chunk, every line built one
    by one, the kept rows copied into place and the card sized from the copy."""


FAST = Method()
"""The export's own way."""
REFERENCE = Method(table_form=False, in_place=False)
"""Every row by the row form, every line one by one, every table copied."""


class PartExport(NamedTuple):
    """One input file exported: its rows, counts, configurations and checks."""

    table: pa.Table
    tally: Counts
    configs: list[str]
    """The configurations its rows also go to (:func:`config_values`, before any drop)."""
    checks: set[str]
    """Every check its verdicts hold (``drop_if`` names one of all the inputs' checks)."""
    note: str = ""
    """What the counts cannot say (the rows the stages changed, when their start is gone)."""


@dataclass
class _Split:
    """What the slices of one input file have given so far."""

    tables: list[pa.Table] = field(default_factory=list)
    """Each slice's published (or original) rows: the kept ones (all, for the reference)."""
    keep: list[np.ndarray] = field(default_factory=list)
    statuses: dict[int, str] = field(default_factory=dict)
    counted: dict[int, str] = field(default_factory=dict)
    failed: dict[int, list[str]] = field(default_factory=dict)
    changed: dict[int, list[str]] = field(default_factory=dict)
    """Sparse: most rows are as they were."""
    why: dict[int, str] = field(default_factory=dict)
    before: list[pa.Table] = field(default_factory=list)
    """The rows before the stages of the changed rows kept (``--annotate``), in order."""
    configs: set[str] = field(default_factory=set)
    checks: set[str] = field(default_factory=set)
    schema: pa.Schema | None = None
    """The layout's Arrow schema (:func:`layout_schema`), where known."""
    labels: dict[str, list[str]] = field(default_factory=dict)
    """The layout's ClassLabel columns (:func:`class_labels`)."""
    inserted: list[tuple[int, str]] = field(default_factory=list)
    """The record lines of the rejected rows published in place, each after the sample row
    it goes before (:meth:`Rejected.lines`)."""


def export_part(
    part: Part,
    policy: Policy,
    only: Sequence[str],
    annotate: bool,
    lines: BinaryIO,
    method: Method = FAST,
) -> PartExport:
    """The part's rows in its published layout under ``policy``, and what else is known.

    The input is read a slice at a time (with its original's same rows, see :mod:`._stream`):
    the rows a fix left alone go back through the table form of the inverse half at once;
    the others one by one through the row form and the preset's follow rule. One line per
    input row goes to ``lines`` (the record beside the data, UTF-8) as each slice is done.
    """
    current = open_input(part.path)
    own, originals, note = originals_of(part, current, policy, annotate)
    schema = layout_schema(part)
    labels = class_labels(part)
    # a file whose layout's types are not known is typed from all its rows at once
    rows = SLICE_ROWS if schema is not None else max(current.count, 1)
    # the rows rejected at conversion: their record lines go among the others, in place
    rejected = rejected_rows(part)
    fate = "dropped" if policy.drops_failing else "rejected"
    inserted = rejected.lines(
        RowLine(part.config, part.split), fate if rejected.publishable else "not published"
    )
    done = _Split(schema=schema, labels=labels, inserted=inserted)
    first = 0
    theirs = originals.slices(rows) if originals is not None else None
    for now in current.slices(rows):
        then = None if theirs is None else next(theirs)
        _export_slice(part, (policy, only, annotate, method, own), lines, done, first, now, then)
        first += now.num_rows
    count = first
    for before, text in inserted:  # the rejected rows after the last sample
        if before >= count:
            lines.write(text.encode("utf-8"))
    tally = Counts(rows_in=count)
    for outcome in done.counted.values():
        if outcome != "kept":
            setattr(tally, outcome, getattr(tally, outcome) + 1)
    tally.kept = count - tally.replaced - tally.dropped
    tally.refused = len(done.why)
    keep = np.concatenate(done.keep) if done.keep else np.ones(0, dtype=bool)
    table = pa.concat_tables(done.tables)
    if not method.in_place:  # the reference: every row copied into one chunk, then the kept
        table = table.combine_chunks().filter(pa.array(keep))
    if annotate:
        table = annotated(part, table, keep, done.statuses, done.failed, done.changed, done.before)
    values = sorted(done.configs)
    tally.rejected = len(rejected.rows)
    tally.rows_in += tally.rejected
    if rejected.rows and not policy.drops_failing:
        if rejected.publishable:
            table = with_rejected(part, table, rejected)
            values = config_values(part, table)
        else:
            tally.unpublished = tally.rejected
    return PartExport(table, tally, values, done.checks, note)


def _export_slice(
    part: Part,
    how: tuple[Policy, Sequence[str], bool, Method, bool],
    lines: BinaryIO,
    done: _Split,
    first: int,
    current: pa.Table,
    originals: pa.Table | None,
) -> None:
    """Export the rows ``first`` on of the part (``current``, before the stages ``originals``).

    ``how``: the policy, the checks that drop a row, ``annotate``, the method, and whether the
    file is its own original (a convert output).
    """
    policy, only, annotate, method, own = how
    count = current.num_rows
    schema, labels = done.schema, done.labels
    fast = np.zeros(count, dtype=bool)
    if not method.table_form or shuffled(current):
        pass  # every row through the row form (a shuffle moved derived columns' answers too)
    elif schema is not None and own:  # a convert output: every row as it was converted
        fast = np.ones(count, dtype=bool)
    elif schema is not None and originals is not None:
        fast = unchanged(current, originals)
    fast_rows = np.flatnonzero(fast)
    published_fast = None
    if len(fast_rows):
        chosen = current if fast.all() else current.take(fast_rows)
        published_fast = encode(part, chosen, schema, method.in_place)
        if published_fast is not None and part.preset is not None and part.preset.stale:
            stale = part.preset.stale(published_fast).to_numpy(zero_copy_only=False)
            if stale.any():  # edited by hand: through the follow rule, as a fix goes
                fast[fast_rows[stale]] = False
                published_fast = published_fast.filter(pa.array(~stale))
                fast_rows = fast_rows[~stale]
        if published_fast is None:
            fast[:], fast_rows = False, fast_rows[:0]
        else:  # rows as they were (a hand-edited file among them): refused, not published
            check_labels(part, labels, published_fast, fast_rows + first)
    slow_rows = np.flatnonzero(~fast)
    published_slow, before_slow, changed_slow, why_slow = _row_form(
        part, current, originals, slow_rows, labels, first
    )
    published = interleave(
        published_fast, layout_table(part, published_slow, schema), fast_rows, slow_rows
    )
    check_layout_columns(part, published)
    before_table = layout_table(part, before_slow, schema)
    changed: dict[int, list[str]] = {}  # by row of the slice; sparse
    why: dict[int, str] = {}
    for position, row in enumerate(slow_rows.tolist()):
        if changed_slow[position]:
            changed[row] = done.changed[first + row] = changed_slow[position]
        if why_slow[position]:
            why[row] = done.why[first + row] = why_slow[position]
    failed, seen = failing_rows(current, only)
    done.checks |= seen
    # the rows that are not plainly kept: their status, what this policy makes of them, lines
    special: dict[int, str] = {}
    keep = np.ones(count, dtype=bool)
    line = RowLine(part.config, part.split)
    inserted_before = [before for before, _ in done.inserted]
    for local in sorted({*failed, *changed, *why}):
        row = first + local
        status = DROP.outcome(local in failed, local in changed)
        kept_as = policy.outcome(local in failed, local in changed)
        done.statuses[row], done.counted[row] = status, kept_as
        if local in failed:
            done.failed[row] = failed[local]
        keep[local] = kept_as != "dropped"
        special[row] = line.line(
            published_row(row, inserted_before),
            kept_as,
            status,
            failed.get(local, []),
            changed.get(local, []),
            why.get(local, ""),
        )
    write_rows_among(lines, line, (first, count), special, done.inserted, not method.in_place)

    def before() -> pa.Table:
        return interleave(published_fast, before_table, fast_rows, slow_rows)

    table = before() if policy.publishes_original else published
    done.configs.update(config_values(part, table))
    if method.in_place and not keep.all():
        table = table.filter(pa.array(keep))
    done.tables.append(table)
    done.keep.append(keep)
    if annotate and changed:  # the changed rows' values before the stages, where kept
        kept = [p for p, row in enumerate(slow_rows.tolist()) if row in changed and keep[row]]
        done.before.append(before_table.take(pa.array(kept, pa.int64())))


def _row_form(
    part: Part,
    current: pa.Table,
    originals: pa.Table | None,
    rows: np.ndarray,
    labels: dict[str, list[str]],
    first: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[list[str]], list[str]]:
    """The row form for ``rows`` (of a slice starting at row ``first``).

    Each row's published values, its values before the stages, the changed columns and why
    a fix was not applied (or ``""``).
    """
    published: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []
    changed: list[list[str]] = []
    why: list[str] = []
    if not len(rows):
        return published, before, changed, why
    indices = pa.array(rows)
    mine = SampleSequence(current.take(indices), validate=False)
    theirs = None if originals is None else SampleSequence(originals.take(indices), validate=False)
    for position, sample in enumerate(mine):
        row = first + int(rows[position])
        now, reason = _publish(part, _without_order(sample), row, labels)
        before_sample = sample if theirs is None else theirs[position]
        if theirs is None and ORDER_KEY not in sample.extra:
            then = now
        else:  # before the stages, and before the shuffle: the source's own order
            then = _publish(part, unshuffled(before_sample), row, labels)[0]
        if reason:
            now = then
        published.append(now)
        before.append(then)
        changed.append([c for c in now if now[c] != then.get(c)])
        why.append(reason)
    return published, before, changed, why


def _without_order(sample: MultipleChoiceSample) -> MultipleChoiceSample:
    """The sample as published: the shuffle's record of the original order is not a column."""
    if ORDER_KEY not in sample.extra:
        return sample
    extra = {key: value for key, value in sample.extra.items() if key != ORDER_KEY}
    return sample.model_copy(update={"extra": extra})
