"""``load_hellaswag``, ``load_mmlu`` and the generic ``load_multiple_choice``.

Each returns the typed samples as a :class:`~sdvm_hf.arrow.table.SampleSequence` (lazy,
Arrow-backed, with ``.dataset`` and ``.rejects``), or with ``streaming=True`` a
:class:`StreamingSamples` that yields typed samples without loading the split.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Literal, TypedDict, Unpack, overload

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.arrow.table import SampleSequence, build_samples
from sdvm_hf.convert import hellaswag, mmlu
from sdvm_hf.convert.mapping import Conversion, MultipleChoiceMapping, OnError
from sdvm_hf.errors import Reject
from sdvm_hf.load.sources import (
    DataFiles,
    Source,
    builder_for,
    bundled_file,
    expand,
    load_table,
    stream_batches,
)
from sdvm_hf.samples import MultipleChoiceSample

MappingChoice = MultipleChoiceMapping | Callable[[Sequence[str]], MultipleChoiceMapping]
"""A mapping, or a function that picks one from the source's column names."""

BATCH_ROWS = 65_536

BUNDLED = {
    "hellaswag": ("hellaswag_validation.parquet", "validation"),
    "mmlu": ("mmlu_test.parquet", "test"),
}
"""The small real slices shipped in the package (``bundled=True``): file name and split."""


class StreamingSamples:
    """Typed samples yielded batch by batch from a streamed split (``streaming=True``).

    ``rejects`` fills up as the stream goes (with ``on_error="skip"``).
    """

    def __init__(
        self,
        batches: Callable[[], Iterator[pa.Table]],
        mapping: MappingChoice,
        split: str,
        on_error: OnError,
        subject: str | None = None,
    ) -> None:
        """Wrap a function that streams the source batch by batch."""
        self._batches = batches
        self._mapping = mapping
        self._split = split
        self._on_error: OnError = on_error
        self._subject = subject
        self.rejects: list[Reject] = []

    def __iter__(self) -> Iterator[MultipleChoiceSample]:
        self.rejects = []
        batches = (_only_subject(batch, self._subject) for batch in self._batches())
        for result in _conversions(batches, self._mapping, self._split, self._on_error):
            self.rejects.extend(result.rejects)
            yield from build_samples(result.table)


def _conversions(
    batches: Iterable[pa.Table], mapping: MappingChoice, split: str, on_error: OnError
) -> Iterator[Conversion]:
    """Convert batch by batch, numbering rows across the batches."""
    offset = 0
    for batch in batches:
        resolved = _resolve(mapping, batch.column_names)
        yield resolved.convert(batch, split=split, on_error=on_error, row_offset=offset)
        offset += batch.num_rows


def _resolve(mapping: MappingChoice, columns: Sequence[str]) -> MultipleChoiceMapping:
    return mapping if isinstance(mapping, MultipleChoiceMapping) else mapping(columns)


def _only_subject(table: pa.Table, subject: str | None) -> pa.Table:
    if subject is None or subject == "all" or "subject" not in table.column_names:
        return table
    return table.filter(pc.equal(table.column("subject"), subject))


def convert_table(
    table: pa.Table, mapping: MappingChoice, split: str = "", on_error: OnError = "raise"
) -> SampleSequence:
    """Convert a whole source table in batches; rows are numbered across the table."""
    resolved = _resolve(mapping, table.column_names)
    batches = table.to_batches(max_chunksize=BATCH_ROWS)
    results = list(_conversions(batches, resolved, split, on_error))
    rejects = [reject for result in results for reject in result.rejects]
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
    subject: str | None = None,
) -> SampleSequence | StreamingSamples:
    if streaming:
        return StreamingSamples(
            lambda: stream_batches(source, BATCH_ROWS), mapping, source.split, on_error, subject
        )
    table = load_table(source)
    return convert_table(_only_subject(table, subject), mapping, source.split, on_error)


class SourceOptions(TypedDict, total=False):
    """The options every loader takes besides its own."""

    data_files: DataFiles | None
    """Local Parquet, JSON Lines (also ``.gz``), JSON or CSV files: paths, globs or a folder."""
    revision: str | None
    """The Hub revision (a branch, tag or commit)."""
    cache_dir: str | None
    """The ``datasets`` cache folder."""
    token: str | bool | None
    """The Hub token, for gated or private datasets."""
    on_error: OnError
    """``"raise"`` (default): stop at the first bad row; ``"skip"``: leave it out, report it."""


def _source(
    options: SourceOptions,
    *,
    hub: str | None,
    name: str | None = None,
    split: str,
    revision: str | None = None,
    csv_columns: tuple[str, ...] | None = None,
) -> tuple[Source, OnError]:
    unknown = set(options) - set(SourceOptions.__annotations__)
    if unknown:
        raise TypeError(
            f"unexpected option {sorted(unknown)[0]!r}; the options are "
            f"{', '.join(SourceOptions.__annotations__)}"
        )
    local = options.get("data_files") is not None
    source = Source(
        path=None if local else hub,
        name=None if local else name,
        split=split,
        data_files=options.get("data_files"),
        revision=options.get("revision") or revision,
        cache_dir=options.get("cache_dir"),
        token=options.get("token"),
        csv_columns=csv_columns,
    )
    return source, options.get("on_error", "raise")


@overload
def load_multiple_choice(
    path: str | None,
    mapping: MappingChoice,
    *,
    name: str | None = ...,
    split: str = ...,
    streaming: Literal[False] = ...,
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
    **options: Unpack[SourceOptions],
) -> StreamingSamples: ...
def load_multiple_choice(
    path: str | None,
    mapping: MappingChoice,
    *,
    name: str | None = None,
    split: str = "train",
    streaming: bool = False,
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples:
    """Load any multiple-choice split with a :class:`MultipleChoiceMapping`.

    ``path`` is a Hub dataset id (with ``name``, ``split`` and the ``revision`` and ``token``
    options), or ``None`` with ``data_files``. See :class:`SourceOptions` for the options.
    """
    source, on_error = _source(options, hub=path, name=name, split=split)
    return _load(source, mapping, streaming, on_error)


def _bundled(dataset: str, split: str, options: SourceOptions) -> SourceOptions:
    file, bundled_split = BUNDLED[dataset]
    if split != bundled_split:
        raise ValueError(
            f"the bundled {dataset} slice holds the {bundled_split!r} split only, got "
            f"split={split!r}"
        )
    return {**options, "data_files": str(bundled_file(file))}


@overload
def load_hellaswag(
    split: str = ...,
    *,
    bundled: bool = ...,
    streaming: Literal[False] = ...,
    **options: Unpack[SourceOptions],
) -> SampleSequence: ...
@overload
def load_hellaswag(
    split: str = ...,
    *,
    bundled: bool = ...,
    streaming: Literal[True],
    **options: Unpack[SourceOptions],
) -> StreamingSamples: ...
def load_hellaswag(
    split: str = "validation",
    *,
    bundled: bool = False,
    streaming: bool = False,
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples:
    """HellaSwag as :class:`~sdvm_hf.MultipleChoiceCompletionSample` s.

    From the Hub (``Rowan/hellaswag`` at ``refs/convert/parquet`` unless ``revision`` says
    otherwise), from ``data_files`` (the Hub's Parquet or the original jsonl, whose labels are
    ints), or with ``bundled=True`` from the slice of the validation split shipped in the
    package (no network). The test split's labels are withheld: its rows cannot be samples.
    See :class:`SourceOptions` for the other options.
    """
    if bundled:
        options = _bundled("hellaswag", split, options)
    source, on_error = _source(
        options, hub=hellaswag.HUB_PATH, split=split, revision=hellaswag.HUB_REVISION
    )
    return _load(source, hellaswag.HELLASWAG, streaming, on_error)


@overload
def load_mmlu(
    subject: str = ...,
    split: str = ...,
    *,
    layout: str | None = ...,
    bundled: bool = ...,
    streaming: Literal[False] = ...,
    **options: Unpack[SourceOptions],
) -> SampleSequence: ...
@overload
def load_mmlu(
    subject: str = ...,
    split: str = ...,
    *,
    layout: str | None = ...,
    bundled: bool = ...,
    streaming: Literal[True],
    **options: Unpack[SourceOptions],
) -> StreamingSamples: ...
def load_mmlu(
    subject: str = "all",
    split: str = "test",
    *,
    layout: str | None = None,
    bundled: bool = False,
    streaming: bool = False,
    **options: Unpack[SourceOptions],
) -> SampleSequence | StreamingSamples:
    """MMLU as :class:`~sdvm_hf.MultipleChoiceQuestionAnswerSample` s, in any known layout.

    From the Hub (``cais/mmlu``, configuration ``subject``), from ``data_files`` in any layout
    of :mod:`sdvm_hf.convert.mmlu` (recognised from the columns, or named by ``layout``; the
    original headerless CSV files take their subject from the file name), or with
    ``bundled=True`` from the slice of the test split shipped in the package. With local files,
    a ``subject`` other than ``"all"`` keeps that subject's rows. See :class:`SourceOptions`
    for the other options.
    """
    if bundled:
        options = _bundled("mmlu", split, options)
    data_files = options.get("data_files")
    if data_files is not None and layout is None and _headerless_csv(data_files):
        layout = "hendrycks_csv"
    csv_columns = mmlu.HENDRYCKS_COLUMNS if layout == "hendrycks_csv" else None
    source, on_error = _source(
        options, hub="cais/mmlu", name=subject, split=split, csv_columns=csv_columns
    )

    def pick(columns: Sequence[str]) -> MultipleChoiceMapping:
        return mmlu.mmlu_mapping(columns, layout)

    local_subject = subject if data_files is not None else None
    return _load(source, pick, streaming, on_error, local_subject)


def _headerless_csv(data_files: DataFiles) -> bool:
    """Whether these are CSV files whose first line is data, not column names."""
    files = expand(data_files)
    if builder_for(files) != "csv":
        return False
    with open(files[0], encoding="utf-8") as first:
        header = first.readline()
    known = {"question", "Question", "input", "A", "option_a", "choices"}
    return not known & {field.strip().strip('"') for field in header.split(",")}
