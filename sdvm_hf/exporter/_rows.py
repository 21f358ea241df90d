"""Each row back in its layout: the inverse half, the preset's follow rule, the policies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.inverse import EncodeError, published_table
from sdvm_hf.exporter._layout import (
    check_labels,
    check_layout_columns,
    class_labels,
    config_values,
    label_problem,
    layout_schema,
    layout_table,
    with_hf_features,
)
from sdvm_hf.exporter._lines import RowLine, write_lines, write_lines_by_row
from sdvm_hf.exporter._rejected import rejected_rows, with_rejected
from sdvm_hf.exporter._types import Counts, ExportError, Part
from sdvm_hf.exporter.policy import DROP, Policy
from sdvm_hf.files import read_samples
from sdvm_hf.record import content_hash, hf_features
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.shuffle import ORDER_KEY, unshuffled
from sdvm_hf.verdicts import failing_rows


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


def export_part(
    part: Part,
    policy: Policy,
    only: Sequence[str],
    annotate: bool,
    lines: BinaryIO,
    method: Method = FAST,
) -> PartExport:
    """The part's rows in its published layout under ``policy``, and what else is known.

    The rows a fix left alone go back through the table form of the inverse half at once;
    the others one by one through the row form and the preset's follow rule. One line per
    input row goes to ``lines`` (the record beside the data, UTF-8).
    """
    current = read_samples(part.path)
    own, originals, note = _originals(part, current, policy, annotate)
    count = len(current)
    schema = layout_schema(part)
    labels = class_labels(part)
    fast = np.zeros(count, dtype=bool)
    if not method.table_form or _shuffled(current):
        pass  # every row through the row form (a shuffle moved derived columns' answers too)
    elif schema is not None and own:  # a convert output: every row as it was converted
        fast = np.ones(count, dtype=bool)
    elif schema is not None and originals is not None:
        fast = _unchanged(current, originals)
    fast_rows = np.flatnonzero(fast)
    published_fast = None
    if len(fast_rows):
        chosen = current.table if fast.all() else current.table.take(fast_rows)
        published_fast = _encode(part, chosen, schema, method.in_place)
        if published_fast is not None and part.preset is not None and part.preset.stale:
            stale = part.preset.stale(published_fast).to_numpy(zero_copy_only=False)
            if stale.any():  # edited by hand: through the follow rule, as a fix goes
                fast[fast_rows[stale]] = False
                published_fast = published_fast.filter(pa.array(~stale))
                fast_rows = fast_rows[~stale]
        if published_fast is None:
            fast[:], fast_rows = False, fast_rows[:0]
        else:  # rows as they were (a hand-edited file among them): refused, not published
            check_labels(part, labels, published_fast, fast_rows)
    slow_rows = np.flatnonzero(~fast)
    published_slow, before_slow, changed_slow, why_slow = _row_form(
        part, current, originals, slow_rows, labels
    )
    published = _interleave(
        published_fast, layout_table(part, published_slow, schema), fast_rows, slow_rows
    )
    check_layout_columns(part, published)
    before_table = layout_table(part, before_slow, schema)
    changed: dict[int, list[str]] = {}  # sparse: most rows are as they were
    why: dict[int, str] = {}
    for position, row in enumerate(slow_rows.tolist()):
        if changed_slow[position]:
            changed[row] = changed_slow[position]
        if why_slow[position]:
            why[row] = why_slow[position]
    failed, seen_checks = failing_rows(current.table, only)
    # the rows that are not plainly kept: their status, what this policy makes of them, lines
    statuses: dict[int, str] = {}
    counted: dict[int, str] = {}
    special: dict[int, str] = {}
    for row in sorted({*failed, *changed, *why}):
        status = DROP.outcome(row in failed, row in changed)
        kept_as = policy.outcome(row in failed, row in changed)
        statuses[row], counted[row] = status, kept_as
        special[row] = RowLine(part.config, part.split).line(
            row, kept_as, status, failed.get(row, []), changed.get(row, []), why.get(row, "")
        )
    (write_lines if method.in_place else write_lines_by_row)(
        lines, RowLine(part.config, part.split), count, special
    )
    tally = Counts(rows_in=count)
    for outcome in counted.values():
        if outcome != "kept":
            setattr(tally, outcome, getattr(tally, outcome) + 1)
    tally.kept = count - tally.replaced - tally.dropped
    tally.refused = len(why)
    dropped = [row for row, outcome in counted.items() if outcome == "dropped"]
    keep = np.ones(count, dtype=bool)
    keep[dropped] = False

    def before() -> pa.Table:
        return _interleave(published_fast, before_table, fast_rows, slow_rows)

    table = before() if policy.publishes_original else published
    values = config_values(part, table)
    if dropped or not method.in_place:
        table = table.filter(pa.array(keep))
    if annotate:
        table = _annotated(part, table, keep, statuses, failed, changed, before)
    rejected = rejected_rows(part)
    tally.rejected = len(rejected.rows)
    tally.rows_in += tally.rejected
    if rejected.rows and not policy.drops_failing:
        if rejected.publishable:
            table = with_rejected(part, table, rejected)
            values = config_values(part, table)
        else:
            tally.unpublished = tally.rejected
    return PartExport(table, tally, values, seen_checks, note)


def _encode(
    part: Part, table: pa.Table, schema: pa.Schema | None, in_place: bool
) -> pa.Table | None:
    """:func:`published_table` batch by batch: each batch's columns are read in place, not copied.

    Every reason the table form gives ``None`` is a row's (or a type's, the same in every
    batch), so the batches give ``None`` exactly where the whole table would.
    """
    batches = table.to_batches()
    if len(batches) <= 1 or not in_place:
        return published_table(part.mapping, table, schema)
    pieces = []
    for batch in batches:
        piece = published_table(part.mapping, pa.Table.from_batches([batch]), schema)
        if piece is None:
            return None
        pieces.append(piece)
    return pa.concat_tables(pieces)


def _annotated(
    part: Part,
    table: pa.Table,
    keep: np.ndarray,
    statuses: dict[int, str],
    failed: dict[int, list[str]],
    changed: dict[int, list[str]],
    before: Callable[[], pa.Table],
) -> pa.Table:
    """``table`` (the kept rows) with ``sdvm_status``, ``sdvm_failing``, ``original_<column>``.

    ``original_<column>`` holds the value before the stages in the rows where that column
    changed, and null in the others (and in a split where it changed nowhere).
    """
    columns = dict.fromkeys(name for names in changed.values() for name in names)
    for name in ("sdvm_status", "sdvm_failing", *(f"original_{column}" for column in columns)):
        if name in table.column_names:
            raise ExportError(
                f"{part.path}: --annotate would add the column {name!r}, which the "
                f"{part.layout} layout already has; export without --annotate"
            )
    kept = np.flatnonzero(keep).tolist()
    table = table.append_column("sdvm_status", pa.array([statuses.get(r, "kept") for r in kept]))
    table = table.append_column(
        "sdvm_failing", pa.array([failed.get(r, []) for r in kept], pa.list_(pa.string()))
    )
    if columns:
        originals = before()
        for column in columns:
            where = np.zeros(len(keep), dtype=bool)
            where[[row for row, names in changed.items() if column in names]] = True
            values = originals.column(column).filter(pa.array(keep))
            unchanged = pa.scalar(None, values.type)
            table = table.append_column(
                f"original_{column}", pc.if_else(pa.array(where[keep]), values, unchanged)
            )
        features = hf_features(table.schema)
        if features is not None:  # an original is typed as its column: MMLU's ClassLabel too
            originals_typed = {f"original_{c}": features[c] for c in columns if c in features}
            table = with_hf_features(table, {**features, **originals_typed})
    return table


def _originals(
    part: Part, current: SampleSequence, policy: Policy, annotate: bool
) -> tuple[bool, SampleSequence | None, str]:
    """Whether the file is its own original (a convert output); else its original rows.

    The original rows are those before the stages, or ``None`` when they are not found; then
    a note says the counts cannot tell the changed rows (a file with stages).
    """
    original_path = None if part.record is None else part.record.convert_output(part.path)
    if original_path is not None and original_path.resolve() == part.path.resolve():
        return True, None, ""
    staged = part.record is not None and len(part.record.stages) > 1
    unknown = (
        f"{part.name}: the rows its stages changed are not known (the convert output they "
        "started from is gone or was made again): its rows are published as the file holds "
        "them, all counted as kept"
        if staged
        else ""
    )
    if original_path is None:
        if policy.publishes_original or annotate:
            raise ExportError(
                f"{part.path}: the original rows are not found (its record names no convert "
                "output that still exists), so the original policy and --annotate cannot run"
            )
        return False, None, unknown
    originals = read_samples(original_path)
    read = part.record.stages[1].input_hash if part.record and len(part.record.stages) > 1 else None
    if read is not None and content_hash(originals.table) != read:
        if not (policy.publishes_original or annotate):
            return False, None, unknown  # neither published nor compared: said, not hidden
        raise ExportError(
            f"{original_path} is not the file the stages of {part.path} started from (its "
            "content hash differs from what the first stage read: it was made again or "
            "edited since), so its rows cannot be published or compared as the originals; "
            "export with the replace or drop policy and no --annotate, or run the stages again"
        )
    if len(originals) != len(current):
        raise ExportError(
            f"{part.path} has {len(current)} rows, its original {original_path} "
            f"{len(originals)}: a stage must keep every row"
        )
    return False, originals, ""


def _unchanged(current: SampleSequence, originals: SampleSequence) -> np.ndarray:
    """The rows whose context, choices and answer are what they were."""
    now, then = current.table, originals.table
    same = pc.and_(
        pc.equal(now.column("context"), then.column("context")),
        pc.equal(now.column("answer_index"), then.column("answer_index")),
    )
    for table in (now, then):
        if table.column("choices").null_count:
            return np.zeros(len(now), dtype=bool)
    joined = [pc.binary_join(t.column("choices"), "\x1f") for t in (now, then)]
    counts = [pc.list_value_length(t.column("choices")) for t in (now, then)]
    same = pc.and_(same, pc.and_(pc.equal(*joined), pc.equal(*counts)))
    return np.asarray(pc.fill_null(same, False).to_numpy(zero_copy_only=False), dtype=bool)


def _row_form(
    part: Part,
    current: SampleSequence,
    originals: SampleSequence | None,
    rows: np.ndarray,
    labels: dict[str, list[str]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[list[str]], list[str]]:
    """The row form for ``rows``: published, before, the changed columns and the reasons."""
    published: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []
    changed: list[list[str]] = []
    why: list[str] = []
    if not len(rows):
        return published, before, changed, why
    indices = pa.array(rows)
    mine = SampleSequence(current.table.take(indices), validate=False)
    theirs = (
        None if originals is None else SampleSequence(originals.table.take(indices), validate=False)
    )
    for position, sample in enumerate(mine):
        row = int(rows[position])
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


def _shuffled(samples: SampleSequence) -> bool:
    """Whether the samples' choices were shuffled (their ``extra`` keeps the original order)."""
    extra = samples.table.schema.field("extra").type
    if pa.types.is_struct(extra):
        return bool(extra.get_field_index(ORDER_KEY) >= 0)
    found = pc.match_substring(samples.table["extra"], f'"{ORDER_KEY}"')  # JSON text
    return bool(pc.any(found).as_py())


def _without_order(sample: MultipleChoiceSample) -> MultipleChoiceSample:
    """The sample as published: the shuffle's record of the original order is not a column."""
    if ORDER_KEY not in sample.extra:
        return sample
    extra = {key: value for key, value in sample.extra.items() if key != ORDER_KEY}
    return sample.model_copy(update={"extra": extra})


def _interleave(
    fast: pa.Table | None, slow: pa.Table, fast_rows: np.ndarray, slow_rows: np.ndarray
) -> pa.Table:
    """The rows of both tables back in their input order."""
    if fast is None or not len(fast_rows):
        return slow
    if not len(slow_rows):
        return fast
    order = np.argsort(np.concatenate([fast_rows, slow_rows]), kind="stable")
    return pa.concat_tables([fast, slow.cast(fast.schema)]).take(pa.array(order))
