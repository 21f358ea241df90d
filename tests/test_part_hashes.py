"""Issue #27, point 5: a part's hashes hold a slice of its rows at a time, not the whole answer.

The round trip hashes each finished batch (its input rows and its own content) as the JSON of
its rows; a batch of large samples was turned into Python rows and one JSON text whole (three
times its size). Now the JSON is hashed slice by slice, and the digests are the very ones the
parts on disk already record, so a run resumed across the change reuses them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pyarrow as pa
import pytest

import sdvm_hf.service._parts as parts
from sdvm_hf import load_hellaswag


def _whole_rows_hash(batch: pa.Table) -> str:
    """The hash as it was first written: the whole batch as one JSON text."""
    schema = batch.schema.remove_metadata()
    rows = json.dumps(batch.to_pylist(), ensure_ascii=False, default=repr)
    return hashlib.sha256(f"{schema}\n{rows}".encode()).hexdigest()


def _whole_content_hash(part: pa.Table) -> str:
    rows = json.dumps(part.to_pylist(), ensure_ascii=False, default=repr)
    return hashlib.sha256(rows.encode()).hexdigest()


@pytest.fixture
def samples() -> pa.Table:
    """HellaSwag's bundled samples, one context made 200 KB long (a large answer's sample)."""
    table = load_hellaswag(bundled=True).table.slice(0, 60)
    contexts = table.column("context").to_pylist()
    contexts[7] = "a long context, ü " * 12_000
    return table.set_column(table.schema.get_field_index("context"), "context", pa.array(contexts))


def test_the_hashes_are_those_parts_already_record(
    samples: pa.Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parts, "HASH_BYTES", 20_000)  # many slices
    for table in (samples, samples.slice(0, 0), samples.slice(7, 1), samples.slice(5, 30)):
        assert parts.rows_hash(table) == _whole_rows_hash(table)
        assert parts.content_hash(table) == _whole_content_hash(table)
    contexts = samples.column("context").to_pylist()
    contexts[40] += "."
    at = samples.schema.get_field_index("context")
    changed = samples.set_column(at, "context", pa.array(contexts))
    assert parts.content_hash(changed) != parts.content_hash(samples)


def test_a_part_is_hashed_a_slice_of_rows_at_a_time(
    samples: pa.Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parts, "HASH_BYTES", 20_000)
    sizes: list[int] = []
    real = json.dumps

    def dumps(value: Any, **options: Any) -> str:
        sizes.append(len(value))
        return real(value, **options)

    monkeypatch.setattr(json, "dumps", dumps)  # the module _parts calls
    parts.content_hash(samples)
    assert sum(sizes) == samples.num_rows
    assert max(sizes) < samples.num_rows / 3  # never the whole part at once
