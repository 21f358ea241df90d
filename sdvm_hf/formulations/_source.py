"""Where samples come from, for rendering: their rows in the published layout, and what they are.

A sample file (Parquet with a record, or JSON Lines with ``dataset=``), a ``load`` result
(``SampleSequence``) or a ``stream`` result (``StreamingSamples``) all give an iterator of
samples, their count when it is known, and the dataset, configuration and split their record
names. Each sample goes back to its published row exactly as ``export`` does it: the mapping's
inverse half (``encode``), then the preset's ``follow`` rule, so a fixed context reaches the
columns derived from it (HellaSwag's ``ctx_a`` / ``ctx_b``). Samples held as Arrow tables go
back a batch at a time through the table form of the inverse half (``published_table``); the
rows it cannot give exactly as the row form would (a derived column to follow) go through
the row form one by one, and rows are typed by the layout either way, as export types them.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyarrow as pa

from sdvm_hf.arrow import decode
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.inverse import published_table
from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset
from sdvm_hf.files import format_of, iter_jsonl, iter_parquet, iter_parquet_tables, not_a_file
from sdvm_hf.formulations._features import features_schema
from sdvm_hf.formulations._request import RenderError
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.record import Record, read_record
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.sources.streaming import StreamingSamples

__all__ = ["Samples", "Source", "open_source"]

BATCH_ROWS = 16_384
"""Rows given back through the table form at a time (their Python rows are held at once)."""

Samples = (
    SampleSequence
    | StreamingSamples
    | str
    | os.PathLike[str]
    | Sequence[MultipleChoiceSample]
    | Sequence[Mapping[str, Any]]
)
"""What :func:`~sdvm_hf.formulations.render_requests` renders: samples, or published rows."""


@dataclass
class Source:
    """Samples to render, their published rows and what their record says."""

    name: str
    """How messages name them (a path, or what built them)."""
    samples: Callable[[], Iterator[MultipleChoiceSample]]
    count: Callable[[], int]
    dataset: str | None
    config: str | None
    split: str | None
    preset: Preset | None
    mapping: MultipleChoiceMapping | None
    published: Sequence[Mapping[str, Any]] | None = None
    """Published rows given as they are (no samples to rebuild them from)."""
    columns: tuple[str, ...] = ()
    """The published columns in their order (the record's features or schema): a row rebuilt
    by ``encode`` is put back in it, as the dumps' documents show the source's rows."""
    tables: Callable[[], Iterator[pa.Table]] | None = None
    """The samples as sample tables, where they are held so (for the table form)."""
    schema: pa.Schema | None = None
    """The published layout's Arrow schema, where the record or the preset says it."""

    def rows(self) -> Iterator[dict[str, Any]]:
        """Each sample's published row (``encode`` + ``follow``), in order."""
        if self.published is not None:
            for row in self.published:
                yield dict(row)
            return
        if self.by_table():
            for published, fixed in self.published_batches():
                if published is None:
                    yield from fixed.values()
                    continue
                rows = published.to_pylist()
                for position, row in fixed.items():
                    rows[position] = row
                yield from rows
            return
        rows = self._sample_rows(self.samples(), 0)
        while batch := list(itertools.islice(rows, BATCH_ROWS)):
            yield from _typed(batch, self.schema)

    def by_table(self) -> bool:
        """Whether the samples are held as tables and the table form can stand for the row form.

        It gives a kept answer back as it was kept (the row form only while it still says the
        sample's answer), and follows nothing (a preset's ``stale`` check finds the rows to
        follow). Social IQa and Winogrande keep their answer: the row form.
        """
        mapping, preset = self.mapping, self.preset
        return (
            self.tables is not None
            and mapping is not None
            and mapping.answer not in mapping.keep
            and (preset is None or preset.follow is None or preset.stale is not None)
        )

    def published_batches(self) -> Iterator[tuple[pa.Table | None, dict[int, dict[str, Any]]]]:
        """The published rows a batch at a time (at most :data:`BATCH_ROWS`), as a table.

        Each batch is its published table with the rows the table form cannot say exactly
        (by their position in it) as the row form gives them; a batch the table form cannot
        give at all is ``None`` with every row so. Only where :meth:`by_table`.
        """
        assert self.tables is not None
        first = 0
        for table in self.tables():
            for start in range(0, table.num_rows, BATCH_ROWS):
                yield self._published(table.slice(start, BATCH_ROWS), first + start)
            first += table.num_rows

    def _published(
        self, table: pa.Table, first: int
    ) -> tuple[pa.Table | None, dict[int, dict[str, Any]]]:
        """One sample table's published table and the rows the row form must say."""
        assert self.mapping is not None
        published = published_table(self.mapping, table, self.schema)
        if published is None:  # the row form says each row, or its error
            rows = _typed(list(self._sample_rows(decode(table), first)), self.schema)
            return None, dict(enumerate(rows))
        slow = np.zeros(len(published), dtype=bool)
        if self.preset is not None and self.preset.stale is not None:
            slow = self.preset.stale(published).to_numpy(zero_copy_only=False)
        order = [c for c in self.columns if c in published.column_names]
        order += [c for c in published.column_names if c not in order]
        redo = np.flatnonzero(slow).tolist()
        fixed: dict[int, dict[str, Any]] = {}
        if redo:  # through the follow rule, as export publishes them
            again = list(self._sample_rows(decode(table.take(redo)), first, redo))
            fixed = dict(zip(redo, _typed(again, self.schema), strict=True))
        return published.select(order), fixed

    def _sample_rows(
        self,
        samples: Iterator[MultipleChoiceSample],
        first: int,
        positions: list[int] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """The row form: each sample through ``encode`` and the preset's ``follow`` rule."""
        for number, sample in enumerate(samples):
            position = first + (number if positions is None else positions[number])
            if self.mapping is None:
                yield sample.to_dict()
                continue
            try:  # a fix the layout cannot express leaves the row as export publishes it
                if self.preset is not None:
                    row, _ = self.preset.published_row(self.mapping, sample)
                else:
                    row = self.mapping.encode(sample)
            except ValueError as error:
                raise RenderError(f"{self.name} row {position}: {error}") from None
            if self.columns:
                ordered = {column: row[column] for column in self.columns if column in row}
                row = {**ordered, **row} if len(ordered) < len(row) else ordered
            yield row


def _typed(rows: list[dict[str, Any]], schema: pa.Schema | None) -> list[dict[str, Any]]:
    """Rows of the row form in the layout's types, as the table form gives them.

    As export publishes them: an int where the layout has text (HellaSwag's label read from the
    original JSON Lines) becomes its digits. A column that does not convert is left as it is.
    """
    if schema is None or not rows:
        return rows
    for field in schema:
        if not all(field.name in row for row in rows):
            continue
        values = [row[field.name] for row in rows]
        try:
            typed = pa.array(values, field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
                values = [str(v) if type(v) is int else v for v in values]
            try:
                typed = pa.array(values).cast(field.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                continue
        for row, value in zip(rows, typed.to_pylist(), strict=True):
            row[field.name] = value
    return rows


def open_source(
    samples: Samples, dataset: str | None, config: str | None, split: str | None
) -> Source:
    """The samples to render with what they are: the given names win over the record's."""
    if isinstance(samples, str | os.PathLike):
        path = Path(samples)
        if not path.is_file():
            raise not_a_file(path)
        record = read_record(path)
        kind = format_of(path)
        if kind == "parquet":
            import pyarrow.parquet as pq

            def iterate() -> Iterator[MultipleChoiceSample]:
                return iter(iter_parquet(path))

            def count() -> int:
                return int(pq.read_metadata(path).num_rows)

            def tables() -> Iterator[pa.Table]:
                return iter_parquet_tables(path)

            return _source(str(path), iterate, count, record, dataset, config, split, tables)
        else:

            def iterate() -> Iterator[MultipleChoiceSample]:
                return iter(iter_jsonl(path))

            def count() -> int:
                return sum(1 for _ in iter_jsonl(path))

        return _source(str(path), iterate, count, record, dataset, config, split)
    if isinstance(samples, SampleSequence):
        record = samples.provenance() if samples.provenance is not None else None
        if record is None and os.path.isfile(samples.source):
            record = read_record(samples.source)
        sequence = samples
        return _source(
            samples.source,
            lambda: iter(sequence),
            lambda: len(sequence),
            record,
            dataset,
            config,
            split,
            sequence.tables,
        )
    if isinstance(samples, StreamingSamples):
        record = samples.provenance() if samples.provenance is not None else None
        streamed = samples

        def counted() -> int:
            return sum(table.num_rows for table in streamed.tables())

        return _source(
            "stream", lambda: iter(streamed), counted, record, dataset, config, split,
            streamed.tables,
        )  # fmt: skip
    if isinstance(samples, Sequence) and all(
        isinstance(sample, MultipleChoiceSample) for sample in samples
    ):
        listed = cast(Sequence[MultipleChoiceSample], samples)
        return _source("samples", lambda: iter(listed), lambda: len(listed), None,
                       dataset, config, split)  # fmt: skip
    if isinstance(samples, Sequence) and all(isinstance(row, Mapping) for row in samples):
        if dataset is None:
            raise RenderError("published rows say nothing of their dataset: name it (dataset=)")
        rows = cast(Sequence[Mapping[str, Any]], samples)
        source = _source("rows", lambda: iter(()), lambda: len(rows), None, dataset, config, split)
        source.published, source.mapping = rows, None
        return source
    raise TypeError(
        "samples should be a sample file's path, a SampleSequence (load), a StreamingSamples "
        "(stream), a list of samples or a list of published rows (dicts), got "
        f"{type(samples).__name__}"
    )


def _source(
    name: str,
    iterate: Callable[[], Iterator[MultipleChoiceSample]],
    count: Callable[[], int],
    record: Record | None,
    dataset: str | None,
    config: str | None,
    split: str | None,
    tables: Callable[[], Iterator[pa.Table]] | None = None,
) -> Source:
    recorded = record or Record()
    for key, given in (("dataset", dataset), ("config", config), ("split", split)):
        said = getattr(recorded, key)
        if key == "split" and isinstance(said, str):
            said = said.split("[", 1)[0]
        if given is not None and said is not None and given != said:
            raise RenderError(f"{name}: its record says {key} {said!r}, but {given!r} was given")
    dataset = dataset or recorded.dataset
    preset = PRESETS.get(dataset) if dataset is not None else None
    mapping = None
    columns: tuple[str, ...] = ()
    layout = recorded.layout
    if preset is not None:
        layout = preset.export_layouts.get(layout or "", layout) or next(iter(preset.layouts))
        mapping = preset.layouts[layout]
        columns = tuple(preset.features.get(layout, {}))
    elif recorded.mapping is not None:
        mapping = MultipleChoiceMapping.from_description(recorded.mapping)
        layout = layout or mapping.dataset
    config = config or recorded.config or (preset.config if preset is not None else None)
    split = split or recorded.split
    if isinstance(split, str):
        split = split.split("[", 1)[0]
    features = recorded.published_features(layout) if layout else None
    schema = recorded.published_schema(layout) if layout else None
    if features is not None:
        columns = tuple(features)
    elif schema is not None:
        columns = tuple(schema.names)
    if features is None and schema is None and preset is not None and layout:
        features = preset.features.get(layout)
    if features is not None:
        schema = features_schema(features)
    return Source(
        name, iterate, count, dataset, config, split, preset, mapping,
        columns=columns, tables=tables, schema=schema,
    )  # fmt: skip
