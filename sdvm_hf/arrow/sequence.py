"""The lazy, Arrow-backed sequence of typed samples, and samples to a table and back."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, overload, runtime_checkable

import numpy as np
import pyarrow as pa

from sdvm_hf._wire import BLOCKS, shorten
from sdvm_hf.arrow._chunks import take
from sdvm_hf.arrow._codec import decode, encode
from sdvm_hf.arrow._concat import concatenate_tables
from sdvm_hf.arrow._validate import canonical, checked_table
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.schema import EXTRA_MISSING, sample_features
from sdvm_hf.errors import SampleTableError

if TYPE_CHECKING:
    import datasets

    from sdvm_hf.record import Record
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = [
    "SampleSequence",
    "arrow_table",
    "concatenate_samples",
    "samples_to_table",
    "table_to_samples",
]

_BATCH_ROWS = 8192


@runtime_checkable
class SampleBatches(Protocol):
    """What writers and jobs need of a sample collection, loaded whole or streamed.

    :class:`SampleSequence` and :class:`~sdvm_hf.StreamingSamples` both offer it, so a writer
    never asks which one it holds.
    """

    provenance: Callable[[], Record] | None
    rejects: Rejects

    def batches(self) -> Iterator[tuple[pa.Table, Rejects]]:
        """Each sample table with the rows of its source it rejected, in source order."""
        ...

    def tables(self) -> Iterator[pa.Table]:
        """The sample tables, gathering the rejects in :attr:`rejects`."""
        ...

    def __iter__(self) -> Iterator[MultipleChoiceSample]:
        """The typed samples."""
        ...


class SampleSequence(Sequence["MultipleChoiceSample"]):
    """Typed samples backed by an Arrow sample table, built lazily.

    ``len``, indexing (an int, a slice, a list or numpy array of ints), slicing and
    iteration give typed samples; nothing is turned into Python objects before it is asked
    for, and iteration decodes one batch at a time. ``table`` is the Arrow table, ``dataset``
    the same data as a ``datasets.Dataset`` in the sample features, and ``rejects`` the rows a
    conversion with ``on_error="skip"`` left out.

    ``data`` is a sample table, or a ``datasets.Dataset`` in the sample features (after
    ``shuffle``, ``select``, ``filter`` or ``train_test_split`` too: its indices mapping is
    applied, so the samples come in the dataset's own order).
    """

    provenance: Callable[[], Record] | None = None
    """Where the samples came from, for a sample file's record: set by the loaders, and
    ``None`` for samples built any other way (see :mod:`sdvm_hf.record`)."""

    def __init__(
        self,
        data: pa.Table | datasets.Dataset,
        *,
        rejects: Rejects | None = None,
        source: str = "table",
        validate: bool = True,
    ) -> None:
        """Wrap ``data``; with ``validate`` (default) check every row first."""
        table = arrow_table(data)
        self._table = checked_table(table, source) if validate else canonical(table)
        self.source = source
        """Where the samples were read from: a file's path, or what built them."""
        self.rejects: Rejects = Rejects() if rejects is None else rejects
        self._bytes: int | None = None
        self._fetched: pa.Table | None = None

    @classmethod
    def from_dataset(cls, dataset: datasets.Dataset, *, source: str = "dataset") -> SampleSequence:
        """The samples of a ``datasets.Dataset`` in the sample features, in its order."""
        return cls(dataset, source=source)

    def batches(self) -> Iterator[tuple[pa.Table, Rejects]]:
        """The sample table with the rows its conversion rejected: one batch."""
        yield self._table, self.rejects

    def tables(self) -> Iterator[pa.Table]:
        """The sample table, as the one batch a writer takes."""
        yield self._table

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
        return sample_features(self.extra_type, missing=EXTRA_MISSING in self._table.column_names)

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
    def __getitem__(self, index: int | np.integer[Any]) -> MultipleChoiceSample: ...
    @overload
    def __getitem__(self, index: slice | Sequence[int] | np.ndarray) -> SampleSequence: ...
    def __getitem__(
        self, index: int | np.integer[Any] | slice | Sequence[int] | np.ndarray
    ) -> MultipleChoiceSample | SampleSequence:
        length = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(length)
            if step == 1:
                return SampleSequence(
                    self._table.slice(start, max(stop - start, 0)), validate=False
                )
            return self._take(np.arange(start, stop, step, dtype=np.int64))
        if isinstance(index, int | np.integer) and not isinstance(index, bool):
            position = int(index) + length if index < 0 else int(index)
            if not 0 <= position < length:
                raise IndexError(f"sample index {index} out of range for {length} samples")
            return next(decode(self._table.slice(position, 1)))
        return SampleSequence(self._taken(self._positions(index)), validate=False)

    def __getitems__(self, indices: Sequence[int] | np.ndarray) -> list[MultipleChoiceSample]:
        """The samples at ``indices``, in that order: one Arrow ``take``, one decoding pass.

        PyTorch's batch fetch: a ``DataLoader`` with automatic batching hands a map-style
        dataset that has this method each batch's indices at once, rather than indexing it
        row by row. Indices are checked as :meth:`__getitem__` checks a list of ints.
        """
        if self._fetched is None:  # what decoding reads: no all-null block, no task_type
            table = self._table
            unread = {"task_type"} | {
                key for key in BLOCKS if table.column(key).null_count == table.num_rows
            }
            self._fetched = table.select([n for n in table.column_names if n not in unread])
        positions = self._positions(indices)
        return list(decode(take(self._fetched, positions, size=self._size())))

    def _positions(self, index: object) -> np.ndarray:
        """A list or 1-D array of ints as checked positions (negative ones counted back)."""
        length = len(self)
        positions = np.asarray(index)
        if positions.ndim != 1 or not (
            positions.size == 0 or np.issubdtype(positions.dtype, np.integer)
        ):
            raise TypeError(
                f"samples are indexed by an int, a slice, or a list or 1-D array of ints, "
                f"got {type(index).__name__} {shorten(repr(index), 60)}"
            )
        positions = positions.astype(np.int64, copy=False)
        if not positions.size or (positions.min() >= 0 and positions.max() < length):
            return positions  # the usual case, checked in two passes
        outside = (positions < -length) | (positions >= length)
        if outside.any():
            bad = int(positions[outside][0])
            raise IndexError(f"sample index {bad} out of range for {length} samples")
        return np.where(positions < 0, positions + length, positions)

    def _take(self, positions: np.ndarray) -> SampleSequence:
        return SampleSequence(self._taken(positions), validate=False)

    def _taken(self, positions: np.ndarray) -> pa.Table:
        """The rows at checked ``positions``."""
        return take(self._table, positions, size=self._size())

    def _size(self) -> int:
        """The table's bytes, measured once (it costs as much as taking a batch of rows)."""
        if self._bytes is None:
            self._bytes = int(self._table.nbytes)
        return self._bytes

    def __iter__(self) -> Iterator[MultipleChoiceSample]:
        for batch in self._table.to_batches(max_chunksize=_BATCH_ROWS):
            yield from decode(batch)

    def __repr__(self) -> str:
        return f"SampleSequence({len(self)} samples, {len(self.rejects)} rejects)"


def arrow_table(data: pa.Table | datasets.Dataset) -> pa.Table:
    """The Arrow table of a sample table or a ``datasets.Dataset``, in the dataset's order.

    A dataset's indices mapping (left by ``shuffle``, ``select``, ``filter``,
    ``train_test_split``) is applied, never ignored.
    """
    if isinstance(data, pa.Table):
        return data
    inner = getattr(data, "data", None)
    if inner is not None and hasattr(data, "_indices"):  # a datasets.Dataset
        table = inner.table
        indices = data._indices
        if indices is None:
            return table
        return take(table, np.asarray(indices.column(0).to_numpy(), np.int64))
    nested = getattr(data, "table", None)
    if isinstance(nested, pa.Table):  # a datasets.table.Table (no indices of its own)
        return nested
    raise TypeError(
        f"expected a pyarrow.Table or a datasets.Dataset of samples, got {type(data).__name__}"
    )


def table_to_samples(table: pa.Table | datasets.Dataset) -> list[MultipleChoiceSample]:
    """Every row of a sample table (or ``datasets.Dataset``, in its order) as a typed sample.

    Checked first.
    """
    return list(SampleSequence(table))


def samples_to_table(samples: Iterable[MultipleChoiceSample]) -> pa.Table:
    """A sample table holding ``samples``, in order (see :mod:`sdvm_hf.arrow.schema`).

    ``extra`` becomes a struct when it round-trips exactly as one, a JSON column otherwise.
    """
    if isinstance(samples, SampleSequence):
        return samples.table
    return encode(list(samples))


def concatenate_samples(*sequences: SampleSequence | pa.Table) -> SampleSequence:
    """One sequence holding every sample of ``sequences``, in order, each exactly as it was.

    Unlike ``datasets.concatenate_datasets``, which merges the extra structs so that a sample
    gains every other dataset's keys as ``None``, a key a sample did not have stays missing
    (see ``extra_missing`` in :mod:`sdvm_hf.arrow.schema`); ``extra.subject`` of MMLU and
    ``extra.ind`` of HellaSwag stay struct fields, queryable in place. Fields of the same name
    must have the same type (or be all null in one of them); otherwise ``extra`` becomes the
    JSON column. Rejects are joined.
    """
    parts = [s if isinstance(s, SampleSequence) else SampleSequence(s) for s in sequences]
    try:
        table = concatenate_tables([part.table for part in parts])
    except SampleTableError:  # a type conflict: the extras become JSON text, still exact
        table = encode([sample for part in parts for sample in part])
    rejects = Rejects.join(part.rejects for part in parts)
    return SampleSequence(table, rejects=rejects, validate=False)
