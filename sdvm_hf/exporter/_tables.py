"""The table form of an export's slice: which rows are as they were, and putting rows back."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.convert.inverse import published_table
from sdvm_hf.exporter._types import Part
from sdvm_hf.shuffle import ORDER_KEY

__all__ = ["encode", "interleave", "shuffled", "unchanged"]


def encode(
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


def unchanged(now: pa.Table, then: pa.Table) -> np.ndarray:
    """The rows whose context, choices and answer are what they were."""
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


def shuffled(samples: pa.Table) -> bool:
    """Whether the samples' choices were shuffled (their ``extra`` keeps the original order)."""
    extra = samples.schema.field("extra").type
    if pa.types.is_struct(extra):
        return bool(extra.get_field_index(ORDER_KEY) >= 0)
    found = pc.match_substring(samples["extra"], f'"{ORDER_KEY}"')  # JSON text
    return bool(pc.any(found).as_py())


def interleave(
    fast: pa.Table | None, slow: pa.Table, fast_rows: np.ndarray, slow_rows: np.ndarray
) -> pa.Table:
    """The rows of both tables back in their input order."""
    if fast is None or not len(fast_rows):
        return slow
    if not len(slow_rows):
        return fast
    order = np.argsort(np.concatenate([fast_rows, slow_rows]), kind="stable")
    return pa.concat_tables([fast, slow.cast(fast.schema)]).take(pa.array(order))
