"""The lazy, Arrow-backed sequence of typed samples, and samples to a table and back."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, overload

import pyarrow as pa

from sdvm_hf.arrow._codec import decode, encode
from sdvm_hf.arrow._validate import canonical, checked_table
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.schema import sample_features
from sdvm_hf.samples import MultipleChoiceSample

if TYPE_CHECKING:
    import datasets

_BATCH_ROWS = 8192


class SampleSequence(Sequence[MultipleChoiceSample]):
    """Typed samples backed by an Arrow sample table, built lazily.

    ``len``, indexing, slicing and iteration give typed samples; nothing is turned into
    Python objects before it is asked for. ``table`` is the Arrow table, ``dataset`` the same
    data as a ``datasets.Dataset`` in the sample features, and ``rejects`` the rows a
    conversion with ``on_error="skip"`` left out.
    """

    def __init__(
        self,
        table: pa.Table,
        *,
        rejects: Rejects | None = None,
        source: str = "table",
        validate: bool = True,
    ) -> None:
        """Wrap ``table``; with ``validate`` (default) check every row first."""
        self._table = checked_table(table, source) if validate else canonical(table)
        self.rejects: Rejects = Rejects() if rejects is None else rejects

    @property
    def table(self) -> pa.Table:
        """The sample table (see :mod:`sdvm_hf.arrow.schema`)."""
        return self._table

    @property
    def extra_type(self) -> pa.DataType:
        """The Arrow type of the ``extra`` column."""
        return self._table.schema.field("extra").type

    @property
    def features(self) -> datasets.Features:
        """The ``datasets.Features`` of this table."""
        return sample_features(self.extra_type)

    @property
    def dataset(self) -> datasets.Dataset:
        """The samples as a ``datasets.Dataset`` in the sample features (shares the memory)."""
        import datasets
        from datasets.table import InMemoryTable

        info = datasets.DatasetInfo(features=self.features)
        return datasets.Dataset(InMemoryTable(self._table), info=info)

    def __len__(self) -> int:
        return int(self._table.num_rows)

    @overload
    def __getitem__(self, index: int) -> MultipleChoiceSample: ...
    @overload
    def __getitem__(self, index: slice) -> SampleSequence: ...
    def __getitem__(self, index: int | slice) -> MultipleChoiceSample | SampleSequence:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                part = self._table.slice(start, max(stop - start, 0))
            else:
                part = self._table.take(pa.array(range(start, stop, step), pa.int64()))
            return SampleSequence(part, validate=False)
        length = len(self)
        position = index + length if index < 0 else index
        if not 0 <= position < length:
            raise IndexError(f"sample index {index} out of range for {length} samples")
        return next(decode(self._table.slice(position, 1)))

    def __iter__(self) -> Iterator[MultipleChoiceSample]:
        for batch in self._table.to_batches(max_chunksize=_BATCH_ROWS):
            yield from decode(batch)

    def __repr__(self) -> str:
        return f"SampleSequence({len(self)} samples, {len(self.rejects)} rejects)"


def table_to_samples(table: pa.Table) -> list[MultipleChoiceSample]:
    """Every row of a sample table as a typed sample (checked first)."""
    return list(SampleSequence(table))


def samples_to_table(samples: Iterable[MultipleChoiceSample]) -> pa.Table:
    """A sample table holding ``samples``, in order (see :mod:`sdvm_hf.arrow.schema`).

    ``extra`` becomes a struct when it round-trips exactly as one, a JSON column otherwise.
    """
    if isinstance(samples, SampleSequence):
        return samples.table
    return encode(list(samples))
