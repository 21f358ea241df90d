"""Hugging Face multiple-choice datasets as typed SDVM samples.

Layers, bottom up (imports flow one way, down; ``docs/design.md`` has the table and
``tests/test_layers.py`` checks both): the errors, wire rules, :mod:`sdvm_hf.record` and
:mod:`sdvm_hf.verdicts` -> :mod:`sdvm_hf.samples` -> :mod:`sdvm_hf.arrow` -> :mod:`sdvm_hf.convert`
-> :mod:`sdvm_hf.sources` -> :mod:`sdvm_hf.presets` -> :mod:`sdvm_hf.files`,
:mod:`sdvm_hf.summary`, :mod:`sdvm_hf.engines` -> :mod:`sdvm_hf.diff`, :mod:`sdvm_hf.shuffle`
-> :mod:`sdvm_hf.render` -> :mod:`sdvm_hf.report` -> :mod:`sdvm_hf.jobs`,
:mod:`sdvm_hf.service`, :mod:`sdvm_hf.exporter` -> :mod:`sdvm_hf.cli`.

Glossary (each word has this one meaning in code, docs and messages):

sample   a typed multiple-choice item (:class:`MultipleChoiceSample` and its two classes)
block    what the service writes on a sample: ``audit``, ``fix``, ``reaudit`` (opaque JSON)
stage    one trip through the service: ``audit``, ``fix`` or ``refine``
mapping  where a source keeps context, choices and answer (:class:`MultipleChoiceMapping`)
form     one of a mapping's three converters: row, batch (``Dataset.map``), table (Arrow)
format   a sample file's encoding: ``parquet``, ``jsonl``, ``jsonl.gz``
layout   one published arrangement of a dataset's columns (MMLU has eight)
preset   everything known about one dataset: its layouts, Hub id, conventions (:class:`Preset`)
source   where a split's rows come from: the Hub, or local Parquet, JSON Lines, JSON, CSV
row      a row's number in its source, 0-based
problem  one rule a row breaks: row, path, expected, got (:class:`Problem`)
reject   a row a conversion with ``on_error="skip"`` left out, with its problem (:class:`Reject`)
"""

import importlib as _importlib
import sys as _sys
import types as _types
import typing as _typing

if _typing.TYPE_CHECKING:
    from sdvm_hf.arrow.rejects import Rejects
    from sdvm_hf.arrow.sequence import SampleSequence
    from sdvm_hf.convert.mapping import Conversion, MultipleChoiceMapping
    from sdvm_hf.convert.preset import Preset
    from sdvm_hf.errors import ConversionError, LayoutError, Problem, Reject, SampleTableError
    from sdvm_hf.exporter import export
    from sdvm_hf.files import (
        read_jsonl,
        read_parquet,
        read_samples,
        write_jsonl,
        write_parquet,
        write_samples,
    )
    from sdvm_hf.formulations import render_requests
    from sdvm_hf.presets.hellaswag import load_hellaswag
    from sdvm_hf.presets.mmlu import load_mmlu
    from sdvm_hf.presets.registry import PRESETS, load, stream
    from sdvm_hf.samples import (
        MultipleChoiceCompletionSample,
        MultipleChoiceQuestionAnswerSample,
        MultipleChoiceSample,
    )
    from sdvm_hf.shuffle import shuffle_choices
    from sdvm_hf.sources.streaming import StreamingSamples
    from sdvm_hf.summary import Summary, summarize

_HOMES = {
    "PRESETS": "sdvm_hf.presets.registry",
    "Conversion": "sdvm_hf.convert.mapping",
    "ConversionError": "sdvm_hf.errors",
    "LayoutError": "sdvm_hf.errors",
    "MultipleChoiceCompletionSample": "sdvm_hf.samples",
    "MultipleChoiceMapping": "sdvm_hf.convert.mapping",
    "MultipleChoiceQuestionAnswerSample": "sdvm_hf.samples",
    "MultipleChoiceSample": "sdvm_hf.samples",
    "Preset": "sdvm_hf.convert.preset",
    "Problem": "sdvm_hf.errors",
    "Reject": "sdvm_hf.errors",
    "Rejects": "sdvm_hf.arrow.rejects",
    "SampleSequence": "sdvm_hf.arrow.sequence",
    "SampleTableError": "sdvm_hf.errors",
    "StreamingSamples": "sdvm_hf.sources.streaming",
    "Summary": "sdvm_hf.summary",
    "export": "sdvm_hf.exporter",
    "load": "sdvm_hf.presets.registry",
    "load_hellaswag": "sdvm_hf.presets.hellaswag",
    "load_mmlu": "sdvm_hf.presets.mmlu",
    "read_jsonl": "sdvm_hf.files",
    "render_requests": "sdvm_hf.formulations",
    "read_parquet": "sdvm_hf.files",
    "read_samples": "sdvm_hf.files",
    "shuffle_choices": "sdvm_hf.shuffle",
    "stream": "sdvm_hf.presets.registry",
    "summarize": "sdvm_hf.summary",
    "write_jsonl": "sdvm_hf.files",
    "write_parquet": "sdvm_hf.files",
    "write_samples": "sdvm_hf.files",
}
"""Where each top-level name is defined. ``import sdvm_hf`` imports none of them: each module
is imported on the first use of one of its names (``sdvm-hf --help`` imports no pyarrow, and
a user of the loaders never imports the exporter, the report or the service)."""


def __getattr__(name: str) -> _typing.Any:
    """A top-level name, imported from its module on first use (then a plain attribute)."""
    if name == "__version__":
        from importlib.metadata import version

        value: _typing.Any = version("sdvm-hf")
    elif name in _HOMES:
        value = getattr(_importlib.import_module(_HOMES[name]), name)
    else:
        raise AttributeError(f"module 'sdvm_hf' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES, "__version__"})


class _Package(_types.ModuleType):
    """The package's module type: a ``__dict__`` with every top-level name, imported on demand.

    ``vars(sdvm_hf)`` (``inspect``, doctest) sees the package as if each name were imported
    eagerly; attribute access stays lazy.
    """

    @property
    def __dict__(self) -> dict[str, _typing.Any]:  # type: ignore[override]
        namespace: dict[str, _typing.Any] = _MODULE_DICT.__get__(self)
        for name in _HOMES:
            if name not in namespace:
                __getattr__(name)
        return namespace


_MODULE_DICT: _typing.Any = vars(_types.ModuleType)["__dict__"]
_sys.modules[__name__].__class__ = _Package

__all__ = [
    "PRESETS",
    "Conversion",
    "ConversionError",
    "LayoutError",
    "MultipleChoiceCompletionSample",
    "MultipleChoiceMapping",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
    "Preset",
    "Problem",
    "Reject",
    "Rejects",
    "SampleSequence",
    "SampleTableError",
    "StreamingSamples",
    "Summary",
    "export",
    "load",
    "load_hellaswag",
    "load_mmlu",
    "read_jsonl",
    "read_parquet",
    "read_samples",
    "render_requests",
    "shuffle_choices",
    "stream",
    "summarize",
    "write_jsonl",
    "write_parquet",
    "write_samples",
]
