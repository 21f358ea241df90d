"""Hugging Face multiple-choice datasets as typed SDVM samples.

Layers, bottom up (imports flow one way, down): :mod:`sdvm_hf.samples` (the types and the wire
dict) -> :mod:`sdvm_hf.arrow` (the sample table: schema, checks, the lazy sequence) ->
:mod:`sdvm_hf.convert` (the generic mapping and the preset type) -> :mod:`sdvm_hf.sources`
(sources and loaders) -> :mod:`sdvm_hf.presets` (one module per dataset, and the registry) ->
:mod:`sdvm_hf.files`, :mod:`sdvm_hf.summary`, :mod:`sdvm_hf.report`, :mod:`sdvm_hf.jobs`,
:mod:`sdvm_hf.engines`, :mod:`sdvm_hf.service` -> :mod:`sdvm_hf.cli`.

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

from importlib.metadata import version as _version

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
from sdvm_hf.presets.hellaswag import load_hellaswag
from sdvm_hf.presets.mmlu import load_mmlu
from sdvm_hf.presets.registry import PRESETS, load
from sdvm_hf.samples import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
)
from sdvm_hf.shuffle import shuffle_choices
from sdvm_hf.sources.streaming import StreamingSamples
from sdvm_hf.summary import Summary, summarize

__version__ = _version("sdvm-hf")

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
    "shuffle_choices",
    "summarize",
    "write_jsonl",
    "write_parquet",
    "write_samples",
]
