"""Streams of sample tables: a seeded buffer shuffle, and the first rows of a stream."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa


def shuffled(
    tables: Iterator[pa.Table], buffer_size: int, rng: np.random.Generator
) -> Iterator[pa.Table]:
    """Each row drawn at random from a buffer of ``buffer_size`` rows of the stream."""
    buffer: pa.Table | None = None
    for table in tables:
        buffer = table if buffer is None else pa.concat_tables([buffer, table])
        if buffer.num_rows > buffer_size:
            order = rng.permutation(buffer.num_rows)
            out = buffer.num_rows - buffer_size
            yield buffer.take(pa.array(order[:out]))
            buffer = buffer.take(pa.array(order[out:]))
    if buffer is not None and buffer.num_rows:
        yield buffer.take(pa.array(rng.permutation(buffer.num_rows)))


def taken(tables: Iterator[pa.Table], n: int) -> Iterator[pa.Table]:
    """The first ``n`` rows of the stream, reading no batch past them."""
    left = n
    for table in tables:
        if left <= 0:
            return
        yield table.slice(0, left)
        left -= min(left, table.num_rows)
