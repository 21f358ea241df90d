"""Loaders: a split of any source to typed samples, through a mapping or a dataset preset.

Each returns the typed samples as a :class:`~sdvm_hf.arrow.sequence.SampleSequence` (lazy,
Arrow-backed, with ``.dataset`` and ``.rejects``), or with ``streaming=True`` a
:class:`StreamingSamples` that yields typed samples without loading the split.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TypedDict, Unpack

import pyarrow as pa

from sdvm_hf.arrow import bounded
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert import check_on_error
from sdvm_hf.convert.mapping import MultipleChoiceMapping, OnError
from sdvm_hf.convert.preset import Preset
from sdvm_hf.errors import InputError
from sdvm_hf.sources._ahead import read_ahead
from sdvm_hf.sources._convert import MappingChoice, Selection, convert_handed
from sdvm_hf.sources._csv import CsvLayout
from sdvm_hf.sources._origin import Origin
from sdvm_hf.sources._parts import WHOLE, Part, shard_batches, shard_count
from sdvm_hf.sources._split import parse_split
from sdvm_hf.sources.source import (
    DataFiles,
    Source,
    bundled_file,
    load_table,
    source_length,
    whole,
)
from sdvm_hf.sources.streaming import PART_ROWS, STREAM_ROWS, StreamingSamples

__all__ = ["HUB_MIRROR", "SourceOptions", "load_mapping", "load_preset"]


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


def _load(
    source: Source,
    mapping: MappingChoice,
    streaming: bool,
    on_error: OnError,
    select: Selection | None = None,
    origin: Origin | None = None,
) -> SampleSequence | StreamingSamples:
    check_on_error(on_error)  # now, not at the first batch of a stream
    split = source.spec.name
    origin = origin or Origin(None, source)
    if select is not None and source.spec.sliced:
        # the slice counts the configuration's rows, as on the Hub: read the whole split
        select = replace(select, window=source.spec)
        source = whole(source)
    if streaming:
        _bound(select, (batch for _, batch in _rows(source)))  # a counting pass if need be
        streamed = StreamingSamples(  # partials, not closures: a stream pickles (spawn)
            partial(_watched_rows, origin, source),
            mapping,
            split,
            on_error,
            select,
            source_length(source) if select is None else None,
            shards=partial(shard_count, source),
        )
        streamed.provenance = origin.record
        return streamed
    loaded = load_table(source)
    # Hashed in a thread once the read is done, beside the conversion and the writer: the
    # read keeps every core busy, they keep one (1M MMLU rows from CSV on two cores: the
    # load took 1.20x pyarrow's read + write when the hash began with the read, 1.11x now).
    origin.hash_files()
    origin.schema = loaded.table.schema
    _bound(select, [loaded.table])  # counted in the table read, not in a second read
    handed, first_row = [loaded.table], loaded.first_row
    del loaded  # the conversion holds the only reference: it frees the source as it goes
    samples = convert_handed(handed, mapping, split, on_error, select, first_row)
    samples.provenance = origin.record
    return samples


def _bound(select: Selection | None, tables: Iterable[pa.Table]) -> None:
    """Set a sliced selection's rows, counting the matching ones only if the slice needs it."""
    if select is None or select.window is None:
        return
    counting = select.fresh()
    needs = select.window.needs_length
    select.bound(sum(int(counting.matches(table).sum()) for table in tables) if needs else None)


def _pick(origin: Origin, layout: str | None, columns: Sequence[str]) -> MultipleChoiceMapping:
    assert origin.preset is not None
    chosen = origin.preset.layout_of(columns) if layout is None else layout
    mapping = origin.preset.mapping(columns, chosen)
    origin.read_as(chosen, mapping)  # the layout handed to the record, once it is known
    return mapping


def _watched_rows(origin: Origin, source: Source, part: Part) -> Iterator[tuple[int, pa.Table]]:
    return origin.watch(_rows(source, part))


def _rows(source: Source, part: Part = WHOLE) -> Iterator[tuple[int, pa.Table]]:
    """The batches of ``part``'s shards; smaller ones when its readers share them batch-wise."""
    size = STREAM_ROWS if part.count == 1 else PART_ROWS
    # at most BATCH_BYTES a batch too: wide rows (long texts) come a few hundred at a time
    read = bounded(shard_batches(source, size, part.shards))
    # local files: the next batch is read while this one is converted and written
    return read_ahead(read) if source.files is not None else read


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


_SPLIT_NAMES = frozenset({"train", "validation", "test", "dev", "val"})
"""Names that are splits, not configurations, in every dataset this package knows."""


def _check_arguments(dataset: str, config: object, split: object, bundled: object) -> None:
    """``TypeError``/``ValueError`` for arguments that cannot mean what load takes them for."""
    for name, value in (("config", config), ("split", split)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{dataset}: {name} should be a string, got {value!r}")
    if split is not None and not str(split).strip():
        raise InputError(f"{dataset}: split={split!r} names no split; give one, or None")
    if not isinstance(bundled, bool):
        raise TypeError(f"{dataset}: bundled should be True or False, got {bundled!r}")


def _check_config(preset: Preset, config: str | None, local: bool) -> None:
    """A configuration the dataset has; with local files, the only check there is."""
    if config is None or config in preset.configs:
        return
    known = ", ".join(preset.known_configs)
    if preset.config_column:
        known += f", or any {preset.config_column}"
    if config in _SPLIT_NAMES or "[" in config:
        raise InputError(
            f"{preset.name} has no configuration {config!r} (its configurations: {known}); "
            f"load's arguments are (dataset, config, split): to name a split, pass "
            f"split={config!r}"
        )
    if local and not preset.config_column and config not in preset.known_configs:
        raise InputError(
            f"{preset.name} has no configuration {config!r}; its configurations: {known} "
            "(local files cannot show which one they hold: the one named is recorded)"
        )


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
    files = options.get("data_files")
    if files is not None and not isinstance(files, (str, os.PathLike, list, tuple, dict)):
        raise TypeError(
            "data_files should be a path, a glob or a folder, a list of them, or "
            f"{{split: files}}, got {type(files).__name__} {files!r}"
        )
    local = files is not None
    for option in ("hub", "revision"):
        if local and options.get(option) is not None:
            raise InputError(
                f"data_files names local files, {option}= a Hub dataset: give one of the two"
            )
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


def load_mapping(
    mapping: MultipleChoiceMapping,
    config: str | None = None,
    split: str | None = None,
    *,
    streaming: bool = False,
    on_error: OnError = "raise",
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples:
    """Load any multiple-choice split with a :class:`MultipleChoiceMapping`.

    From the Hub dataset ``hub`` (with ``config``, ``split`` and the ``revision`` and
    ``token`` options), or from ``data_files``. ``split`` defaults to ``"train"``.
    """
    _check_arguments(mapping.dataset, config, split, False)
    if options.get("hub") is None and options.get("data_files") is None:
        raise InputError(
            f"the {mapping.dataset} mapping is not told where its rows are: give "
            "hub='OWNER/NAME' (or a local folder laid out as a Hub repository) or data_files"
        )
    source = _source(options, hub=None, name=config, split=split or mapping.split or "train")
    origin = Origin(None, source, config, mapping.dataset, mapping)
    return _load(source, mapping, streaming, on_error, None, origin)


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
    _check_arguments(preset.name, config, split, bundled)
    split = split or preset.split
    if bundled:
        hub_options = [name for name in ("hub", "revision", "token") if options.get(name)]
        if hub_options:
            raise InputError(
                f"bundled=True reads the {preset.name} slice shipped in the package; "
                f"{hub_options[0]}= is for the Hub: give one of the two"
            )
        if options.get("data_files") is not None:
            raise InputError(
                f"give bundled=True or data_files, not both: the bundled {preset.name} slice "
                "is a file of its own"
            )
        if preset.bundled is None:
            raise InputError(f"no slice of {preset.name} is bundled in the package")
        if parse_split(split).name != preset.bundled.split:
            raise InputError(
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

    _check_config(preset, config, local=source.files is not None)
    origin = Origin(preset, source, config or preset.config)

    pick = partial(_pick, origin, layout)  # a partial, not a closure: a stream pickles
    select = None
    local = source.files is not None
    if local and config is not None and config != preset.config and preset.config_column:
        select = Selection(preset.name, preset.config_column, config)
    return _load(source, pick, streaming, on_error, select, origin)
