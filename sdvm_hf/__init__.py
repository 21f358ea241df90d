"""Hugging Face multiple-choice datasets as typed SDVM samples.

Layers, bottom up (imports flow one way, down): :mod:`sdvm_hf.samples` (the types and the wire
dict) -> :mod:`sdvm_hf.arrow` (the sample table: schema, checks, the lazy sequence) ->
:mod:`sdvm_hf.convert` (the generic mapping and the preset type) -> :mod:`sdvm_hf.load`
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
from sdvm_hf.arrow.schema import sample_features, sample_schema
from sdvm_hf.arrow.sequence import (
    SampleSequence,
    concatenate_samples,
    samples_to_table,
    table_to_samples,
)
from sdvm_hf.convert.mapping import REJECT_COLUMN, Conversion, MultipleChoiceMapping, split_rejects
from sdvm_hf.convert.preset import Preset
from sdvm_hf.engines import (
    FILE_COLUMN,
    FILE_ROW_KEY,
    ROW_COLUMN,
    init_ray,
    read_keyed,
    reject_rows,
    sample_rows,
)
from sdvm_hf.errors import ConversionError, LayoutError, Problem, Reject, SampleTableError
from sdvm_hf.files import (
    iter_jsonl,
    iter_parquet,
    read_jsonl,
    read_parquet,
    read_samples,
    write_jsonl,
    write_parquet,
    write_samples,
)
from sdvm_hf.jobs import convert_to_files, inspect_file, report_file, validate_file
from sdvm_hf.load.loaders import load_multiple_choice, load_preset
from sdvm_hf.load.streaming import StreamingSamples
from sdvm_hf.presets.arc import ARC, load_arc
from sdvm_hf.presets.commonsense_qa import COMMONSENSE_QA, load_commonsense_qa
from sdvm_hf.presets.hellaswag import HELLASWAG, load_hellaswag
from sdvm_hf.presets.mmlu import MMLU_LAYOUTS, detect_mmlu_layout, load_mmlu
from sdvm_hf.presets.openbookqa import OPENBOOKQA, load_openbookqa
from sdvm_hf.presets.piqa import PIQA, load_piqa
from sdvm_hf.presets.registry import PRESETS
from sdvm_hf.presets.social_i_qa import SOCIAL_I_QA, load_social_i_qa
from sdvm_hf.presets.swag import SWAG, load_swag
from sdvm_hf.presets.truthfulqa import TRUTHFULQA, load_truthfulqa
from sdvm_hf.presets.winogrande import WINOGRANDE, load_winogrande
from sdvm_hf.report import report_html
from sdvm_hf.samples import (
    MultipleChoiceCompletionSample,
    MultipleChoiceQuestionAnswerSample,
    MultipleChoiceSample,
)
from sdvm_hf.service.roundtrip import Retry, ServiceError, run_stage
from sdvm_hf.summary import Summary, Tally, summarize

__version__ = _version("sdvm-hf")

__all__ = [
    "ARC",
    "COMMONSENSE_QA",
    "FILE_COLUMN",
    "FILE_ROW_KEY",
    "HELLASWAG",
    "MMLU_LAYOUTS",
    "OPENBOOKQA",
    "PIQA",
    "PRESETS",
    "REJECT_COLUMN",
    "ROW_COLUMN",
    "SOCIAL_I_QA",
    "SWAG",
    "TRUTHFULQA",
    "WINOGRANDE",
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
    "Retry",
    "SampleSequence",
    "SampleTableError",
    "ServiceError",
    "StreamingSamples",
    "Summary",
    "Tally",
    "concatenate_samples",
    "convert_to_files",
    "detect_mmlu_layout",
    "init_ray",
    "inspect_file",
    "iter_jsonl",
    "iter_parquet",
    "load_arc",
    "load_commonsense_qa",
    "load_hellaswag",
    "load_mmlu",
    "load_multiple_choice",
    "load_openbookqa",
    "load_piqa",
    "load_preset",
    "load_social_i_qa",
    "load_swag",
    "load_truthfulqa",
    "load_winogrande",
    "read_jsonl",
    "read_keyed",
    "read_parquet",
    "read_samples",
    "reject_rows",
    "report_file",
    "report_html",
    "run_stage",
    "sample_features",
    "sample_rows",
    "sample_schema",
    "samples_to_table",
    "split_rejects",
    "summarize",
    "table_to_samples",
    "validate_file",
    "write_jsonl",
    "write_parquet",
    "write_samples",
]
