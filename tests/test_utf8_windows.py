"""Text that is not UTF-8 is found wherever it is, each chunk's window of a child read once.

A Parquet reader's batches of a list or struct column are windows on one child array; the
row check validates each window, not the whole child once per chunk (eight times over for a
million HellaSwag rows), and still finds a bad byte in any window, at its row.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from sdvm_hf.arrow._validate import checked_table
from sdvm_hf.errors import SampleTableError


@pytest.mark.parametrize("bad", [0, 5, 11])
@pytest.mark.parametrize("where", ["choices", "extra"])
def test_text_that_is_not_utf8_is_found_in_any_window_of_a_shared_child(
    bad: int, where: str
) -> None:
    """Chunks that are windows on one child array, as a Parquet reader's batches are.

    Each chunk validates its own window of the child (not the whole child once per chunk),
    and a bad byte in any window is still found, at its row.
    """
    rows = 12
    texts = [b"\xff\xfe" if row == bad else f"t{row}".encode() for row in range(rows)]
    choices = pa.array([[text, b"b"] for text in texts], pa.list_(pa.binary()))
    choices = choices.view(pa.list_(pa.string()))
    extra = pa.array([{"note": text} for text in texts], pa.struct([("note", pa.binary())])).view(
        pa.struct([("note", pa.string())])
    )
    if where == "choices":
        extra = pa.array([{"note": "n"}] * rows)
    else:
        choices = pa.array([["a", "b"]] * rows)
    whole = pa.table(
        {
            "task_type": ["multiple_choice"] * rows,
            "style": ["qa"] * rows,
            "context": ["Why?"] * rows,
            "choices": choices,
            "answer_index": pa.array([0] * rows, pa.int64()),
            "extra": extra,
            "audit": pa.nulls(rows, pa.string()),
            "fix": pa.nulls(rows, pa.string()),
            "reaudit": pa.nulls(rows, pa.string()),
        }
    )
    windows = pa.concat_tables([whole.slice(start, 4) for start in range(0, rows, 4)])
    assert windows.column(where).num_chunks == 3
    if where == "choices":  # each window holds the whole child, as a reader's batches do
        assert len(windows.column("choices").chunk(2).values) == 2 * rows
    path = ("choices",) if where == "choices" else ("extra",)
    with pytest.raises(SampleTableError) as raised:
        checked_table(windows, "t")
    assert str(raised.value) == (
        f"t has rows that are not valid samples: row {bad}, column {path[0]!r}: expected UTF-8 "
        "text, got bytes that are not UTF-8"
    )
    good = whole.filter(pa.array([row != bad for row in range(rows)]))
    checked_table(pa.concat_tables([good.slice(0, 4), good.slice(4)]), "t")
