"""``StreamingSamples``: typed samples from a split streamed batch by batch (``stream(...)``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from sdvm_hf.arrow import DECODE_ROWS, decode, shuffled, taken
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.schema import sample_schema
from sdvm_hf.convert.mapping import OnError
from sdvm_hf.errors import InputError
from sdvm_hf.sources._convert import MappingChoice, Selection, conversions
from sdvm_hf.sources._parts import WHOLE, Part, plan

if TYPE_CHECKING:
    import datasets

    from sdvm_hf.record import Record
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["PART_ROWS", "STREAM_ROWS", "WHOLE", "Part", "StreamingSamples"]


STREAM_ROWS = 65_536
"""Rows converted at a time when streaming, at most (a batch is also cut at
:data:`~sdvm_hf.arrow.BATCH_BYTES`): memory stays flat at a few such batches. Fewer, bigger
batches spread the per-batch work: 1.4M MMLU rows convert in 1.10x a plain pyarrow stream's
time, 1.35x with 16,384-row batches; HellaSwag's wider rows stop at about 29,000 a batch."""

PART_ROWS = 4_096
"""Rows read at a time by readers that share a source batch by batch (fewer shards than
readers): smaller batches, so that a split of a few thousand rows still gives each one work."""


class StreamingSamples:
    """Typed samples yielded batch by batch from a streamed split (:func:`sdvm_hf.stream`).

    ``rejects`` fills up as the stream goes (with ``on_error="skip"``). ``shuffle``, ``take``
    and ``shard`` give new streams; ``dataset`` is the stream as a ``datasets.IterableDataset``
    in the sample features, with as many shards as the source (:attr:`n_shards`).

    A stream made once torch is imported is a torch ``IterableDataset`` (registered as one;
    this module never imports torch), and a ``DataLoader`` takes it as it is: iterated in
    ``DataLoader`` workers, or in the ranks of an initialized ``torch.distributed`` process
    group, each reader gets its own part of the rows and together they get every row exactly
    once (see :meth:`shard`). ``shuffle`` and ``take`` then apply to each reader's part.
    """

    provenance: Callable[[], Record] | None = None
    """Where the samples come from, for a sample file's record (set by the loaders)."""

    def __init__(
        self,
        batches: Callable[[Part], Iterator[tuple[int, pa.Table]]],
        mapping: MappingChoice,
        split: str,
        on_error: OnError,
        select: Selection | None = None,
        total: int | None = None,
        steps: tuple[tuple[str, int, int | None], ...] = (),
        shards: Callable[[], int] | None = None,
        node: tuple[int, int] | None = None,
    ) -> None:
        """Wrap a function that streams a part of the source batch by batch.

        ``batches(part)`` yields the batches of ``part.shards`` (all for ``None``), each with
        the split's number of its first row; ``shards()`` says how many shards the source has
        (default 1); ``node`` is an explicit ``(index, count)`` split (:meth:`shard`).
        """
        self._batches = batches
        self._mapping = mapping
        self._split = split
        self._on_error: OnError = on_error
        self._select = select
        self._total = total
        self._steps = steps
        self._shards = shards
        self._node = node
        self.rejects = Rejects()
        _register_with_torch()

    def _then(
        self, step: tuple[str, int, int | None] | None, node: tuple[int, int] | None = None
    ) -> StreamingSamples:
        return StreamingSamples(
            self._batches,
            self._mapping,
            self._split,
            self._on_error,
            self._select,
            self._total,
            self._steps if step is None else (*self._steps, step),
            self._shards,
            self._node if node is None else node,
        )

    @property
    def n_shards(self) -> int:
        """How many parts of the source can be read on their own.

        The row groups of local Parquet files, the files of other local formats, else 1
        (and 1 when a configuration is picked out of local files by a column, as MMLU's
        subjects are: every reader then reads the rows and converts its own batches).
        """
        if self._select is not None or self._shards is None:
            return 1
        return self._shards()

    def shard(self, num_shards: int, index: int) -> StreamingSamples:
        """Part ``index`` of ``num_shards`` of the stream: for one of several machines or ranks.

        The parts are whole shards of the source when it has at least ``num_shards`` of them
        (:attr:`n_shards`), else every ``num_shards``-th batch; together they hold every row
        exactly once. An explicit split replaces the automatic one by
        ``torch.distributed`` rank (``shard(1, 0)``: every rank reads every row); DataLoader
        workers still share the part given.
        """
        for name, value in (("num_shards", num_shards), ("index", index)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"shard: {name} should be an int, got {value!r}")
        if not 0 <= index < num_shards:
            raise ValueError(
                f"shard: index should be in 0..{num_shards - 1} for {num_shards} shards, "
                f"got {index}"
            )
        return self._then(None, (index, num_shards))

    def _part(self, rank: tuple[int, int] = (0, 1), worker: tuple[int, int] = (0, 1)) -> Part:
        """The part of ``worker`` (index, count) of ``rank``, or of the explicit :meth:`shard`."""
        node_index, node_count = self._node or rank
        index, count = worker
        return plan(self.n_shards, node_index * count + index, node_count * count)

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
        return self._converted([self._part()])

    def _converted(self, parts: Sequence[Part] = (WHOLE,)) -> Iterator[tuple[pa.Table, Rejects]]:
        """The batches of ``parts`` converted, in order (before ``shuffle`` and ``take``).

        A part's other batches are read but not converted (a configuration's selection
        still counts their rows, so a slice of it and its checks see the whole split).
        """
        for part in parts:
            select = None if self._select is None else self._select.fresh()
            total = self._total if part == WHOLE else None
            for result in conversions(
                self._batches(part if select is None else Part(None, part.index, part.count)),
                self._mapping,
                self._split,
                self._on_error,
                select,
                total,
                keep=None if part.count == 1 else part.keeps,
            ):
                yield result.table, result.rejects

    def tables(self) -> Iterator[pa.Table]:
        """The stream as sample tables, batch by batch (after ``shuffle`` and ``take``).

        Only an explicit :meth:`shard` splits them: a writer in a DataLoader worker or a
        distributed rank gets every row.
        """
        return self._tables([self._part()])

    def _tables(self, parts: Sequence[Part]) -> Iterator[pa.Table]:
        self.rejects = Rejects()

        def converted() -> Iterator[pa.Table]:
            for table, rejects in self._converted(parts):
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
        """The typed samples; in a DataLoader worker or a distributed rank, its part of them."""
        for table in self._tables([self._part(*_reader())]):
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
        part = self._part()
        # one generator argument per shard: datasets shares them out among workers and ranks
        shards = range(self.n_shards) if part == WHOLE else part.shards
        parts = [part] if shards is None else [Part((shard,)) for shard in shards]

        def rows(parts: list[Part]) -> Iterator[dict[str, object]]:
            for table in self._tables(parts):
                if table.schema != schema:  # every batch of one mapping has one schema
                    table = table.cast(schema)
                yield from table.to_pylist()

        return datasets.IterableDataset.from_generator(
            rows, features=features, gen_kwargs={"parts": parts}
        )


def _reader() -> tuple[tuple[int, int], tuple[int, int]]:
    """The rank and the DataLoader worker of the running process, each as (index, count).

    Read from torch when the process has imported it (never imported here: without torch
    there are no workers). Ranks count only in an initialized ``torch.distributed`` process
    group: ``RANK`` and ``WORLD_SIZE`` alone are not enough, as launchers set them for
    processes that read all rows too (use :meth:`StreamingSamples.shard` then).
    """
    rank, worker = (0, 1), (0, 1)
    distributed = sys.modules.get("torch.distributed")
    if distributed is not None and distributed.is_available() and distributed.is_initialized():
        rank = distributed.get_rank(), distributed.get_world_size()
    data = sys.modules.get("torch.utils.data")
    info = None if data is None else data.get_worker_info()
    if info is not None:
        worker = info.id, info.num_workers
    return rank, worker


def _register_with_torch() -> None:
    """Make streams torch ``IterableDataset`` instances, once torch is imported."""
    data = sys.modules.get("torch.utils.data")
    iterable = getattr(data, "IterableDataset", None)
    if iterable is not None and not issubclass(StreamingSamples, iterable):
        iterable.register(StreamingSamples)
