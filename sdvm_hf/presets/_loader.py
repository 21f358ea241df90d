"""The named loader of a preset (``load_arc``, ``load_swag``, ...): ``load_preset`` bound to it."""

from __future__ import annotations

from typing import Literal, Unpack, overload

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import OnError
from sdvm_hf.convert.preset import Preset
from sdvm_hf.load.loaders import SourceOptions, load_preset
from sdvm_hf.load.streaming import StreamingSamples


class PresetLoader:
    """``load_<name>(config=None, split=None, *, streaming=False, on_error="raise", ...)``.

    Loads a split of the preset's dataset (see :func:`~sdvm_hf.load.loaders.load_preset` for
    the sources and options); ``config`` and ``split`` default to the preset's.
    """

    def __init__(self, preset: Preset, summary: str) -> None:
        """Bind ``preset``; ``summary`` opens the loader's docstring."""
        self.preset = preset
        self.__doc__ = f"{summary}\n\n{PresetLoader.__doc__}"
        self.__name__ = f"load_{preset.name}"

    @overload
    def __call__(
        self,
        config: str | None = ...,
        split: str | None = ...,
        *,
        streaming: Literal[False] = ...,
        on_error: OnError = ...,
        **options: Unpack[SourceOptions],
    ) -> SampleSequence: ...
    @overload
    def __call__(
        self,
        config: str | None = ...,
        split: str | None = ...,
        *,
        streaming: Literal[True],
        on_error: OnError = ...,
        **options: Unpack[SourceOptions],
    ) -> StreamingSamples: ...
    @overload
    def __call__(
        self,
        config: str | None = ...,
        split: str | None = ...,
        *,
        streaming: bool = ...,
        on_error: OnError = ...,
        **options: Unpack[SourceOptions],
    ) -> SampleSequence | StreamingSamples: ...
    def __call__(
        self,
        config: str | None = None,
        split: str | None = None,
        *,
        streaming: bool = False,
        on_error: OnError = "raise",
        **options: Unpack[SourceOptions],
    ) -> SampleSequence | StreamingSamples:
        return load_preset(
            self.preset, config, split, streaming=streaming, on_error=on_error, **options
        )

    def __repr__(self) -> str:
        return f"<loader {self.__name__}>"
