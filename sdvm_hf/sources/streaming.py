"""``StreamingSamples``: typed samples from a split streamed batch by batch (``stream(...)``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from sdvm_hf.arrow import DECODE_ROWS, decode, shuffled, taken
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.schema import sample_schema
from sdvm_hf.convert.mapping import OnError
from sdvm_hf.errors import InputError
from sdvm_hf.sources._convert import MappingChoice, Selection, conversions

if TYPE_CHECKING:
    import datasets

    from sdvm_hf.record import Record
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["STREAM_ROWS", "StreamingSamples"]


STREAM_ROWS = 16_384
"""Rows converted at a time when streaming: memory stays flat at a few such batches (1M and
5M HellaSwag rows peak within a few percent of 100k; 65,536-row batches cost 1.4x)."""


class StreamingSamples:
    """Typed samples yielded batch by batch from a streamed split (:func:`sdvm_hf.stream`).

    ``rejects`` fills up as the stream goes (with ``on_error="skip"``). ``shuffle`` and
    ``take`` give new streams; ``dataset`` is the stream as a ``datasets.IterableDataset`` in
    the sample features, which a PyTorch ``DataLoader`` takes as it is (it is a torch
    ``IterableDataset`` when torch is installed).
    """

    provenance: Callable[[], Record] | None = None
    """Where the samples come from, for a sample file's record (set by the loaders)."""

    def __init__(
        self,
        batches: Callable[[], Iterator[tuple[int, pa.Table]]],
        mapping: MappingChoice,
        split: str,
        on_error: OnError,
        select: Selection | None = None,
        total: int | None = None,
        steps: tuple[tuple[str, int, int | None], ...] = (),
    ) -> None:
        """Wrap a function that streams the source batch by batch (numbered by first row)."""
        self._batches = batches
        self._mapping = mapping
        self._split = split
        self._on_error: OnError = on_error
        self._select = select
        self._total = total
        self._steps = steps
        self.rejects = Rejects()

    def _then(self, step: tuple[str, int, int | None]) -> StreamingSamples:
        steps = (*self._steps, step)
        return StreamingSamples(
            self._batches,
            self._mapping,
            self._split,
            self._on_error,
            self._select,
            self._total,
            steps,
        )

    def shuffle(self, buffer_size: int = 1000, seed: int | None = None) -> StreamingSamples:
        """The stream in a random order: each sample is drawn from a buffer of ``buffer_size``.

        The same ``seed`` gives the same order on every pass; ``None`` a new one each time.
        """
        if buffer_size < 1:
            raise InputError(f"buffer_size must be at least 1, got {buffer_size}")
        return self._then(("shuffle", buffer_size, seed))

    def take(self, n: int) -> StreamingSamples:
        """The first ``n`` samples of the stream (the source is read no further)."""
        if n < 0:
            raise InputError(f"take needs a count of at least 0, got {n}")
        return self._then(("take", n, None))

    def batches(self) -> Iterator[tuple[pa.Table, Rejects]]:
        """Each converted batch with the rows of it that were rejected, in source order.

        Unlike :meth:`tables`, the rejects are handed over, not gathered in :attr:`rejects`,
        so memory stays flat however many rows are rejected (this is how ``sdvm-hf convert``
        writes both files). A shuffled or cut stream has no source order: it is refused.
        """
        if self._steps:
            raise InputError(
                "batches() gives the source's batches in order; call it before shuffle() "
                "or take(), or use tables()"
            )
        return self._converted()

    def _converted(self) -> Iterator[tuple[pa.Table, Rejects]]:
        """The source's batches converted, in order (before ``shuffle`` and ``take``)."""
        select = None if self._select is None else self._select.fresh()
        for result in conversions(
            self._batches(), self._mapping, self._split, self._on_error, select, self._total
        ):
            yield result.table, result.rejects

    def tables(self) -> Iterator[pa.Table]:
        """The stream as sample tables, batch by batch (after ``shuffle`` and ``take``)."""
        self.rejects = Rejects()

        def converted() -> Iterator[pa.Table]:
            for table, rejects in self._converted():
                self.rejects = Rejects.join([self.rejects, rejects])
                yield table

        stream: Iterator[pa.Table] = converted()
        for name, first, second in self._steps:
            if name == "shuffle":
                stream = shuffled(stream, first, np.random.default_rng(second))
            else:
                stream = taken(stream, first)
        yield from stream

    def __iter__(self) -> Iterator[MultipleChoiceSample]:
        for table in self.tables():
            for batch in table.to_batches(max_chunksize=DECODE_ROWS):
                yield from decode(batch)  # a few thousand Python samples alive at a time

    @property
    def dataset(self) -> datasets.IterableDataset:
        """The stream as a ``datasets.IterableDataset`` of rows in the sample features.

        Learning the features reads the first batch of the source once.
        """
        import datasets

        first = next(self.tables(), None)
        schema = sample_schema() if first is None else first.schema
        features = datasets.Features.from_arrow_schema(schema)

        def rows() -> Iterator[dict[str, object]]:
            for table in self.tables():
                if table.schema != schema:  # every batch of one mapping has one schema
                    table = table.cast(schema)
                yield from table.to_pylist()

        return datasets.IterableDataset.from_generator(rows, features=features)
