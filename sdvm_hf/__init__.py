"""Hugging Face multiple-choice datasets as typed SDVM samples.

Layers, bottom up: :mod:`sdvm_hf.samples` (the types and wire dict), :mod:`sdvm_hf.arrow`
(schema, tables, Parquet), :mod:`sdvm_hf.convert` (dataset mappings), :mod:`sdvm_hf.load`
(loaders), and the ``sdvm-hf`` command on top.
"""

from sdvm_hf.arrow.parquet import read_parquet, write_parquet
from sdvm_hf.arrow.schema import sample_features, sample_schema
from sdvm_hf.arrow.table import SampleSequence, samples_to_table, table_to_samples
from sdvm_hf.errors import ConversionError, Problem, Reject, SampleTableError
from sdvm_hf.jsonl import iter_jsonl, read_jsonl, write_jsonl
from sdvm_hf.samples import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
)

__all__ = [
    "ConversionError",
    "MultipleChoiceCompletionSample",
    "MultipleChoiceQuestionAnswerSample",
    "MultipleChoiceSample",
    "Problem",
    "Reject",
    "SampleSequence",
    "SampleTableError",
    "iter_jsonl",
    "read_jsonl",
    "read_parquet",
    "sample_features",
    "sample_schema",
    "samples_to_table",
    "table_to_samples",
    "write_jsonl",
    "write_parquet",
]
