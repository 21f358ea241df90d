"""Loaders: a split of any source to typed samples, through a mapping or a dataset preset.

Each returns the typed samples as a :class:`~sdvm_hf.arrow.sequence.SampleSequence` (lazy,
Arrow-backed, with ``.dataset`` and ``.rejects``), or with ``streaming=True`` a
:class:`StreamingSamples` that yields typed samples without loading the split.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._progress import bar
from sdvm_hf.arrow._codec import decode
from sdvm_hf.arrow._stream import shuffled, taken
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.schema import sample_schema
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import Conversion, MultipleChoiceMapping, OnError
from sdvm_hf.convert.preset import Preset
from sdvm_hf.errors import LayoutError
from sdvm_hf.load._csv import CsvLayout
from sdvm_hf.load._split import parse_split
from sdvm_hf.load.sources import (
    DataFiles,
    Source,
    bundled_file,
    load_table,
    source_length,
    stream_batches,
)
from sdvm_hf.samples import MultipleChoiceSample

if TYPE_CHECKING:
    import datasets

MappingChoice = MultipleChoiceMapping | Callable[[Sequence[str]], MultipleChoiceMapping]
"""A mapping, or a function that picks one from the source's column names."""

BATCH_ROWS = 65_536
"""Rows converted at a time."""


class SourceOptions(TypedDict, total=False):
    """Where to read a split from, besides the Hub id: the options every loader takes."""

    data_files: DataFiles | None
    """Local Parquet, JSON Lines (also ``.gz``), JSON or CSV files: paths, globs or a folder,
    or ``{split: files}`` (the entry for ``split`` is read), as ``datasets.load_dataset``
    takes them."""
    revision: str | None
    """The Hub revision (a branch, tag or commit)."""
    cache_dir: str | None
    """The ``datasets`` cache folder."""
    token: str | bool | None
    """The Hub token, for gated or private datasets."""
    hub: str | None
    """In place of the Hub id: another id, or a local folder laid out as a Hub repository
    (read through the same ``datasets.load_dataset`` call, configuration and revision)."""


@dataclass
class _Selection:
    """Keep the rows whose ``column`` holds ``value`` (a configuration of local files)."""

    dataset: str
    column: str
    value: str
    seen: set[str] = field(default_factory=set)
    matched: int = 0

    def mask(self, batch: pa.Table) -> np.ndarray:
        if self.column not in batch.column_names:
            raise LayoutError(
                f"{self.dataset}: the source has no {self.column!r} column, so "
                f"{self.column}={self.value!r} cannot select its rows; columns seen: "
                f"{', '.join(batch.column_names)}"
            )
        column = batch.column(self.column)
        self.seen.update(str(value) for value in pc.unique(column).to_pylist())
        mask = np.asarray(pc.fill_null(pc.equal(column, self.value), False), dtype=bool)
        self.matched += int(mask.sum())
        return mask

    def check(self) -> None:
        if not self.matched:
            raise ValueError(
                f"{self.dataset}: no row has {self.column}={self.value!r}; "
                f"{self.column} values seen: {', '.join(sorted(self.seen)) or '(none)'}"
            )


class StreamingSamples:
    """Typed samples yielded batch by batch from a streamed split (``streaming=True``).

    ``rejects`` fills up as the stream goes (with ``on_error="skip"``). ``shuffle`` and
    ``take`` give new streams; ``dataset`` is the stream as a ``datasets.IterableDataset`` in
    the sample features, which a PyTorch ``DataLoader`` takes as it is (it is a torch
    ``IterableDataset`` when torch is installed).
    """

    def __init__(
        self,
        batches: Callable[[], Iterator[tuple[int, pa.Table]]],
        mapping: MappingChoice,
        split: str,
        on_error: OnError,
        select: _Selection | None = None,
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
            raise ValueError(f"buffer_size must be at least 1, got {buffer_size}")
        return self._then(("shuffle", buffer_size, seed))

    def take(self, n: int) -> StreamingSamples:
        """The first ``n`` samples of the stream (the source is read no further)."""
        if n < 0:
            raise ValueError(f"take needs a count of at least 0, got {n}")
        return self._then(("take", n, None))

    def tables(self) -> Iterator[pa.Table]:
        """The stream as sample tables, batch by batch (after ``shuffle`` and ``take``)."""
        self.rejects = Rejects()
        select = None if self._select is None else replace(self._select, seen=set(), matched=0)
        conversions = _conversions(
            self._batches(), self._mapping, self._split, self._on_error, select, self._total
        )

        def converted() -> Iterator[pa.Table]:
            for result in conversions:
                self.rejects = Rejects.join([self.rejects, result.rejects])
                yield result.table

        stream: Iterator[pa.Table] = converted()
        for name, first, second in self._steps:
            if name == "shuffle":
                stream = shuffled(stream, first, np.random.default_rng(second))
            else:
                stream = taken(stream, first)
        yield from stream

    def __iter__(self) -> Iterator[MultipleChoiceSample]:
        for table in self.tables():
            yield from decode(table)

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


def _conversions(
    batches: Iterable[tuple[int, pa.Table]],
    mapping: MappingChoice,
    split: str,
    on_error: OnError,
    select: _Selection | None = None,
    total: int | None = None,
) -> Iterator[Conversion]:
    """Convert batch by batch; rows keep their numbers in the split, selected or not.

    Each batch comes with the split's number of its first row. A progress bar counts the rows
    on a terminal (see :mod:`sdvm_hf._progress`).
    """
    with bar(total, f"converting {split}") as progress:
        for first_row, batch in batches:
            rows = np.arange(first_row, first_row + batch.num_rows, dtype=np.int64)
            size = batch.num_rows
            if select is not None:
                mask = select.mask(batch)
                batch, rows = batch.filter(pa.array(mask)), rows[mask]
            resolved = _resolve(mapping, batch.column_names)
            yield resolved.convert(batch, split=split, on_error=on_error, rows=rows)
            progress.update(size)
    if select is not None:
        select.check()


def _regrouped(table: pa.Table, first_row: int, rows: int) -> Iterator[tuple[int, pa.Table]]:
    """``table`` in slices of ``rows`` rows, each one chunk.

    Small chunks (``datasets`` stores 1,000 rows a chunk) are combined, so the conversion
    runs on big batches.
    """
    for offset in range(0, table.num_rows, rows):
        part = table.slice(offset, rows)
        if part.column(0).num_chunks > 1 if part.num_columns else False:
            part = part.combine_chunks()
        yield first_row + offset, part


def _resolve(mapping: MappingChoice, columns: Sequence[str]) -> MultipleChoiceMapping:
    return mapping if isinstance(mapping, MultipleChoiceMapping) else mapping(columns)


def convert_table(
    table: pa.Table,
    mapping: MappingChoice,
    split: str = "",
    on_error: OnError = "raise",
    select: _Selection | None = None,
    first_row: int = 0,
) -> SampleSequence:
    """Convert a whole source table in batches.

    Rows are numbered across the table from ``first_row`` (a slice keeps its split's numbers).
    """
    resolved = _resolve(mapping, table.column_names)
    batches = _regrouped(table, first_row, BATCH_ROWS)
    results = list(_conversions(batches, resolved, split, on_error, select, table.num_rows))
    rejects = Rejects.join(result.rejects for result in results)
    if results:
        converted = pa.concat_tables([result.table for result in results])
    else:
        converted = resolved.schema(table.schema, split).empty_table()
    return SampleSequence(converted, rejects=rejects, validate=False)


def _load(
    source: Source,
    mapping: MappingChoice,
    streaming: bool,
    on_error: OnError,
    select: _Selection | None = None,
) -> SampleSequence | StreamingSamples:
    split = source.spec.name
    if streaming:
        return StreamingSamples(
            lambda: stream_batches(source, BATCH_ROWS),
            mapping,
            split,
            on_error,
            select,
            source_length(source) if select is None else None,
        )
    loaded = load_table(source)
    return convert_table(loaded.table, mapping, split, on_error, select, loaded.first_row)


HUB_MIRROR = "SDVM_HF_HUB_MIRROR"
"""An environment variable naming a folder of local copies of Hub dataset repositories."""


def _mirrored(hub: str | None) -> str | None:
    """``hub``, or its copy under ``$SDVM_HF_HUB_MIRROR/OWNER/NAME`` when there is one.

    A mirror (repositories cloned for an air-gapped machine, or the tests' Hub-layout folder)
    is read through the very same ``datasets.load_dataset`` call as the Hub: configuration,
    split and data files are resolved from the repository's layout and README.
    """
    root = os.environ.get(HUB_MIRROR)
    if hub is None or not root or os.path.isdir(hub):
        return hub
    copy = Path(root) / hub
    return str(copy) if copy.is_dir() else hub


def _source(
    options: SourceOptions,
    *,
    hub: str | None,
    name: str | None = None,
    split: str,
    revision: str | None = None,
    csv: CsvLayout = CsvLayout(),
) -> Source:
    unknown = set(options) - set(SourceOptions.__annotations__)
    if unknown:
        raise TypeError(
            f"unexpected option {sorted(unknown)[0]!r}; the options are "
            f"{', '.join(SourceOptions.__annotations__)}"
        )
    local = options.get("data_files") is not None
    return Source(
        path=None if local else _mirrored(options.get("hub") or hub),
        name=None if local else name,
        split=split,
        data_files=options.get("data_files"),
        revision=options.get("revision") or revision,
        cache_dir=options.get("cache_dir"),
        token=options.get("token"),
        csv=csv,
    )


@overload
def load_multiple_choice(
    path: str | None,
    mapping: MappingChoice,
    *,
    name: str | None = ...,
    split: str = ...,
    streaming: Literal[False] = ...,
    on_error: OnError = ...,
    **options: Unpack[SourceOptions],
) -> SampleSequence: ...
@overload
def load_multiple_choice(
    path: str | None,
    mapping: MappingChoice,
    *,
    name: str | None = ...,
    split: str = ...,
    streaming: Literal[True],
    on_error: OnError = ...,
    **options: Unpack[SourceOptions],
) -> StreamingSamples: ...
def load_multiple_choice(
    path: str | None,
    mapping: MappingChoice,
    *,
    name: str | None = None,
    split: str = "train",
    streaming: bool = False,
    on_error: OnError = "raise",
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples:
    """Load any multiple-choice split with a :class:`MultipleChoiceMapping`.

    ``path`` is a Hub dataset id (with ``name``, ``split`` and the ``revision`` and ``token``
    options), or ``None`` with ``data_files``. ``on_error="raise"`` (default) stops at the
    first bad row; ``"skip"`` leaves it out and reports it in ``.rejects``. See
    :class:`SourceOptions` for the other options.
    """
    source = _source(options, hub=path, name=name, split=split)
    return _load(source, mapping, streaming, on_error)


@overload
def load_preset(
    preset: Preset,
    config: str | None = ...,
    split: str | None = ...,
    *,
    layout: str | None = ...,
    bundled: bool = ...,
    streaming: Literal[False] = ...,
    on_error: OnError = ...,
    **options: Unpack[SourceOptions],
) -> SampleSequence: ...
@overload
def load_preset(
    preset: Preset,
    config: str | None = ...,
    split: str | None = ...,
    *,
    layout: str | None = ...,
    bundled: bool = ...,
    streaming: Literal[True],
    on_error: OnError = ...,
    **options: Unpack[SourceOptions],
) -> StreamingSamples: ...
@overload
def load_preset(
    preset: Preset,
    config: str | None = ...,
    split: str | None = ...,
    *,
    layout: str | None = ...,
    bundled: bool = ...,
    streaming: bool = ...,
    on_error: OnError = ...,
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples: ...
def load_preset(
    preset: Preset,
    config: str | None = None,
    split: str | None = None,
    *,
    layout: str | None = None,
    bundled: bool = False,
    streaming: bool = False,
    on_error: OnError = "raise",
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples:
    """Load a split of the dataset ``preset`` describes (see :mod:`sdvm_hf.presets`).

    From the Hub (the preset's id, ``config`` or its default configuration, its revision
    unless ``revision`` says otherwise), from ``data_files`` in any of its layouts
    (recognised from the columns, or named by ``layout``), or with ``bundled=True`` from the
    slice shipped in the package. With local files, a ``config`` keeps the rows whose
    :attr:`~Preset.config_column` holds it.
    """
    split = split or preset.split
    if bundled:
        if options.get("data_files") is not None:
            raise ValueError(
                f"give bundled=True or data_files, not both: the bundled {preset.name} slice "
                "is a file of its own"
            )
        if preset.bundled is None:
            raise ValueError(f"no slice of {preset.name} is bundled in the package")
        if parse_split(split).name != preset.bundled.split:
            raise ValueError(
                f"the bundled {preset.name} slice holds the {preset.bundled.split!r} split "
                f"only, got split={split!r}"
            )
        options = {**options, "data_files": str(bundled_file(preset.bundled.file))}
    source = _source(
        options,
        hub=preset.hub,
        name=config or preset.config,
        split=split,
        revision=preset.revision,
        csv=CsvLayout(header=preset.csv_header, file_columns=preset.file_columns),
    )

    def pick(columns: Sequence[str]) -> MultipleChoiceMapping:
        return preset.mapping(columns, layout)

    select = None
    local = source.files is not None
    if local and config is not None and config != preset.config and preset.config_column:
        select = _Selection(preset.name, preset.config_column, config)
    return _load(source, pick, streaming, on_error, select)
