"""Hugging Face multiple-choice datasets as typed SDVM samples.

Layers, bottom up: :mod:`sdvm_hf.samples` (the types and wire dict), :mod:`sdvm_hf.arrow`
(schema, tables, Parquet), :mod:`sdvm_hf.convert` (dataset mappings), :mod:`sdvm_hf.load`
(loaders), and the ``sdvm-hf`` command on top.
"""

from sdvm_hf.arrow.parquet import read_parquet, write_parquet
from sdvm_hf.arrow.schema import sample_features, sample_schema
from sdvm_hf.arrow.table import SampleSequence, samples_to_table, table_to_samples
from sdvm_hf.convert.hellaswag import HELLASWAG
from sdvm_hf.convert.mapping import Conversion, MultipleChoiceMapping
from sdvm_hf.convert.mmlu import LAYOUTS as MMLU_LAYOUTS
from sdvm_hf.convert.mmlu import detect_layout as detect_mmlu_layout
from sdvm_hf.errors import ConversionError, LayoutError, Problem, Reject, SampleTableError
from sdvm_hf.jsonl import iter_jsonl, read_jsonl, write_jsonl
from sdvm_hf.load.loaders import (
    StreamingSamples,
    load_hellaswag,
    load_mmlu,
    load_multiple_choice,
)
from sdvm_hf.samples import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
)

__all__ = [
    "HELLASWAG",
    "MMLU_LAYOUTS",
    "Conversion",
    "ConversionError",
    "LayoutError",
    "MultipleChoiceCompletionSample",
    "MultipleChoiceMapping",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
    "Problem",
    "Reject",
    "SampleSequence",
    "SampleTableError",
    "StreamingSamples",
    "detect_mmlu_layout",
    "iter_jsonl",
    "load_hellaswag",
    "load_mmlu",
    "load_multiple_choice",
    "read_jsonl",
    "read_parquet",
    "sample_features",
    "sample_schema",
    "samples_to_table",
    "table_to_samples",
    "write_jsonl",
    "write_parquet",
]
