"""Where samples come from, for rendering: their rows in the published layout, and what they are.

A sample file (Parquet with a record, or JSON Lines with ``dataset=``), a ``load`` result
(``SampleSequence``) or a ``stream`` result (``StreamingSamples``) all give an iterator of
samples, their count when it is known, and the dataset, configuration and split their record
names. Each sample goes back to its published row exactly as ``export`` does it: the mapping's
inverse half (``encode``), then the preset's ``follow`` rule, so a fixed context reaches the
columns derived from it (HellaSwag's ``ctx_a`` / ``ctx_b``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset
from sdvm_hf.files import format_of, iter_jsonl, iter_parquet, not_a_file
from sdvm_hf.formulations._request import RenderError
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.record import Record, read_record
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.sources.streaming import StreamingSamples

__all__ = ["Samples", "Source", "open_source"]

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

    def rows(self) -> Iterator[tuple[dict[str, Any], MultipleChoiceSample | None]]:
        """Each sample's published row (``encode`` + ``follow``), with the sample."""
        if self.published is not None:
            for row in self.published:
                yield dict(row), None
            return
        for position, sample in enumerate(self.samples()):
            if self.mapping is None:
                yield sample.to_dict(), sample
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
            yield row, sample


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
        )
    if isinstance(samples, StreamingSamples):
        record = samples.provenance() if samples.provenance is not None else None
        streamed = samples

        def counted() -> int:
            return sum(table.num_rows for table in streamed.tables())

        return _source("stream", lambda: iter(streamed), counted, record, dataset, config, split)
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
    return Source(name, iterate, count, dataset, config, split, preset, mapping, columns=columns)
