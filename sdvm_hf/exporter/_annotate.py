"""``--annotate``'s columns: each kept row's status, failing checks and values before the stages."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sdvm_hf.exporter._layout import with_hf_features
from sdvm_hf.exporter._types import ExportError, Part
from sdvm_hf.record import hf_features

__all__ = ["annotated"]


def annotated(
    part: Part,
    table: pa.Table,
    keep: np.ndarray,
    statuses: dict[int, str],
    failed: dict[int, list[str]],
    changed: dict[int, list[str]],
    before: list[pa.Table],
) -> pa.Table:
    """``table`` (the kept rows) with ``sdvm_status``, ``sdvm_failing``, ``original_<column>``.

    ``original_<column>`` holds the value before the stages in the rows where that column
    changed, and null in the others (and in a split where it changed nowhere). ``before``
    holds the changed rows that were kept, as they were before the stages, in order.
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
        originals = pa.concat_tables(before)
        published_at = np.cumsum(keep) - 1  # each input row's place among the kept rows
        rows = [row for row in sorted(changed) if keep[row]]  # originals' rows, in order
        for column in columns:
            at = np.full(len(kept), -1, dtype=np.int64)
            for index, row in enumerate(rows):
                if column in changed[row]:
                    at[published_at[row]] = index
            picks = pa.array(at, mask=at < 0)  # a null pick: null (no original to give)
            values = originals.column(column).take(picks).combine_chunks()
            # typed as the published column's values are (a list's item named as they name it)
            published = table.column(column)
            kind = published.chunk(0).type if published.num_chunks else published.type
            table = table.append_column(pa.field(f"original_{column}", kind), values)
        features = hf_features(table.schema)
        if features is not None:  # an original is typed as its column: MMLU's ClassLabel too
            originals_typed = {f"original_{c}": features[c] for c in columns if c in features}
            table = with_hf_features(table, {**features, **originals_typed})
    return table
