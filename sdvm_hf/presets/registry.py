"""The registry of dataset presets (one line per dataset) and :func:`load`, the front door.

Adding a dataset is one new module in this folder (its mapping(s) and a :class:`Preset`) and
one line here; :func:`load`, the ``sdvm-hf`` command and the recipes find it by name.
"""

from __future__ import annotations

from typing import Unpack, cast

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import MultipleChoiceMapping, OnError
from sdvm_hf.convert.preset import Preset
from sdvm_hf.errors import InputError
from sdvm_hf.presets import (
    arc,
    commonsense_qa,
    copa,
    hellaswag,
    mmlu,
    openbookqa,
    piqa,
    sciq,
    social_i_qa,
    swag,
    truthfulqa,
    winogrande,
)
from sdvm_hf.sources.loaders import SourceOptions, load_mapping, load_preset
from sdvm_hf.sources.streaming import StreamingSamples

__all__ = ["PRESETS", "load", "preset", "stream"]

PRESETS: dict[str, Preset] = {
    "hellaswag": hellaswag.PRESET,
    "mmlu": mmlu.PRESET,
    "arc": arc.PRESET,
    "openbookqa": openbookqa.PRESET,
    "commonsense_qa": commonsense_qa.PRESET,
    "piqa": piqa.PRESET,
    "social_i_qa": social_i_qa.PRESET,
    "winogrande": winogrande.PRESET,
    "swag": swag.PRESET,
    "truthfulqa": truthfulqa.PRESET,
    "sciq": sciq.PRESET,
    "copa": copa.PRESET,
}
"""Every dataset this package knows, by name."""


def preset(name: str) -> Preset:
    """The preset called ``name``; ``KeyError`` listing the known names otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; presets known: {', '.join(PRESETS)}") from None


Dataset = str | Preset | MultipleChoiceMapping
"""What :func:`load` reads: a preset's name, a :class:`Preset`, or a mapping of one's own."""


def load(
    dataset: Dataset,
    config: str | None = None,
    split: str | None = None,
    *,
    layout: str | None = None,
    bundled: bool = False,
    on_error: OnError = "raise",
    **options: Unpack[SourceOptions],
) -> SampleSequence:
    """Load one split of a dataset as typed samples.

    ``dataset`` is a preset's name (``"hellaswag"``, ``"mmlu"``, ``"arc"``, ... see
    :data:`PRESETS`), a :class:`Preset`, or a :class:`MultipleChoiceMapping` of your own (then
    ``hub=`` or ``data_files=`` says where its rows are). Every argument means the same for
    every dataset:

    - ``config``: the Hub configuration (``"ARC-Easy"``, an MMLU subject); the preset's default
      when ``None``. With local files, a preset that keeps it in a column (MMLU's
      ``subject``) keeps that configuration's rows.
    - ``split``: a split, or a slice of one (``"test[:100]"``, ``"validation[10%:]"``); the
      preset's default when ``None`` (``"train"`` for a mapping of your own).
    - ``layout``: one of the preset's published layouts (MMLU has eight); recognised from
      the columns when ``None``.
    - ``bundled=True``: the small real slice shipped in the package (no network).
    - ``on_error``: ``"raise"`` stops at the first bad row; ``"skip"`` leaves it out and
      reports it in ``.rejects``.
    - ``**options``: where the rows are read from (:class:`SourceOptions`: ``data_files``,
      ``revision``, ``cache_dir``, ``token``, ``hub``).

    :func:`stream` takes the same arguments and converts batch by batch in flat memory.

    >>> samples = load("hellaswag", split="validation", bundled=True)
    >>> samples[0].style
    'continuation'
    """
    loaded = _opened(dataset, config, split, layout, bundled, False, on_error, options)
    return cast(SampleSequence, loaded)  # not streamed: a SampleSequence


def stream(
    dataset: Dataset,
    config: str | None = None,
    split: str | None = None,
    *,
    layout: str | None = None,
    bundled: bool = False,
    on_error: OnError = "raise",
    **options: Unpack[SourceOptions],
) -> StreamingSamples:
    """One split of a dataset as typed samples converted batch by batch, in flat memory.

    The arguments are :func:`load`'s; iterating (or writing) the result reads the source
    again, a batch at a time, and ``.rejects`` fills as it goes.

    >>> [sample.style for sample in stream("hellaswag", split="validation[:2]", bundled=True)]
    ['continuation', 'continuation']
    """
    streamed = _opened(dataset, config, split, layout, bundled, True, on_error, options)
    return cast(StreamingSamples, streamed)


def _opened(
    dataset: Dataset,
    config: str | None,
    split: str | None,
    layout: str | None,
    bundled: bool,
    streaming: bool,
    on_error: OnError,
    options: SourceOptions,
) -> SampleSequence | StreamingSamples:
    if not isinstance(dataset, str | Preset | MultipleChoiceMapping):
        raise TypeError(
            "dataset should be a preset's name (one of "
            f"{', '.join(PRESETS)}), a Preset or a MultipleChoiceMapping, got {dataset!r}"
        )
    if isinstance(dataset, MultipleChoiceMapping):
        if layout is not None or bundled:
            raise InputError(
                f"layout and bundled are a preset's; the {dataset.dataset} mapping has one layout "
                "and no bundled slice"
            )
        return load_mapping(
            dataset, config, split, streaming=streaming, on_error=on_error, **options
        )
    return load_preset(
        preset(dataset) if isinstance(dataset, str) else dataset,
        config,
        split,
        layout=layout,
        bundled=bundled,
        streaming=streaming,
        on_error=on_error,
        **options,
    )
