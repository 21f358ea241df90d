"""MMLU in each published layout, as question-answer samples.

Each layout is a :class:`~sdvm_hf.convert.mapping.MultipleChoiceMapping`;
:func:`detect_mmlu_layout` recognises one from its columns.

============================  ====================================================================
layout                        columns
============================  ====================================================================
``cais``                      ``cais/mmlu``: question, subject, choices, answer (ClassLabel A-D)
``auxiliary_train``           ``cais/mmlu`` ``auxiliary_train``: one struct column ``train``
``hendrycks_csv``             the original headerless CSV: question, A-D, answer letter (subject
                              from the file name, added by the loader)
``lukaemon``                  ``lukaemon/mmlu``: input, A-D, target letter
``mmlu_pro``                  ``TIGER-Lab/MMLU-Pro``: options (1-10 items), answer_index, ...
``mmmlu``                     ``openai/MMMLU``: Question, A-D, Answer letter, Subject
``global_mmlu``               ``CohereForAI/Global-MMLU``: question, option_a..option_d, answer
                              letter and metadata columns
``mmlu_redux``                ``edinburgh-dawg/mmlu-redux``: question, choices, answer, error_type
============================  ====================================================================
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack, cast

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import LETTERS
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import MultipleChoiceMapping, OnError
from sdvm_hf.convert.preset import Bundled, Preset, Publication
from sdvm_hf.sources.loaders import SourceOptions, load_preset

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["MMLU_LAYOUTS", "PRESET", "detect_mmlu_layout", "load_mmlu"]

MMLU_LAYOUTS: dict[str, MultipleChoiceMapping] = {
    "cais": MultipleChoiceMapping(
        dataset="mmlu", context="question", choices="choices", answer="answer"
    ),
    "auxiliary_train": MultipleChoiceMapping(
        dataset="mmlu auxiliary_train",
        context="question",
        choices="choices",
        answer="answer",
        unnest="train",
    ),
    "hendrycks_csv": MultipleChoiceMapping(
        dataset="mmlu",
        context="question",
        choices=("A", "B", "C", "D"),
        answer="answer",
        answer_format="letter",
    ),
    "lukaemon": MultipleChoiceMapping(
        dataset="lukaemon/mmlu",
        context="input",
        choices=("A", "B", "C", "D"),
        answer="target",
        answer_format="letter",
    ),
    "mmlu_pro": MultipleChoiceMapping(
        dataset="mmlu-pro", context="question", choices="options", answer="answer_index"
    ),
    "mmmlu": MultipleChoiceMapping(
        dataset="mmmlu",
        context="Question",
        choices=("A", "B", "C", "D"),
        answer="Answer",
        answer_format="letter",
    ),
    "global_mmlu": MultipleChoiceMapping(
        dataset="global-mmlu",
        context="question",
        choices=("option_a", "option_b", "option_c", "option_d"),
        answer="answer",
        answer_format="letter",
    ),
    "mmlu_redux": MultipleChoiceMapping(
        dataset="mmlu-redux", context="question", choices="choices", answer="answer"
    ),
}
"""Every MMLU layout this package knows, by name."""

# Most specific first: the columns that identify each layout.
_SIGNATURES: tuple[tuple[str, frozenset[str]], ...] = (
    ("auxiliary_train", frozenset({"train"})),
    ("mmlu_pro", frozenset({"question_id", "question", "options", "answer_index"})),
    ("mmlu_redux", frozenset({"question", "choices", "answer", "error_type"})),
    ("global_mmlu", frozenset({"question", "option_a", "option_b", "option_c", "option_d"})),
    ("mmmlu", frozenset({"Question", "A", "B", "C", "D", "Answer"})),
    ("lukaemon", frozenset({"input", "A", "B", "C", "D", "target"})),
    ("hendrycks_csv", frozenset({"question", "A", "B", "C", "D", "answer"})),
    ("cais", frozenset({"question", "choices", "answer"})),
)


def _subject(file: str) -> dict[str, str]:
    """The original files are named ``<subject>_<split>.csv``."""
    return {"subject": re.sub(r"_(dev|val|test|train)$", "", Path(file).name.split(".")[0])}


CAIS_FEATURES = {
    "question": {"dtype": "string", "_type": "Value"},
    "subject": {"dtype": "string", "_type": "Value"},
    "choices": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
    "answer": {"names": ["A", "B", "C", "D"], "_type": "ClassLabel"},
}
"""``cais/mmlu``'s published features: ``answer`` is a ClassLabel over A-D."""


def follow(row: dict[str, Any], sample: MultipleChoiceSample) -> str | None:
    """MMLU-Pro keeps the answer twice: ``answer`` (a letter) follows ``answer_index``."""
    if "answer_index" in row and "answer" in row and "options" in row:
        row["answer"] = LETTERS[row["answer_index"]]
    return None


def stale(table: pa.Table) -> pa.Array:
    """MMLU-Pro's rows whose ``answer`` letter is not their ``answer_index``'s (a hand edit)."""
    if "answer_index" not in table.column_names or "options" not in table.column_names:
        return pa.nulls(table.num_rows, pa.bool_()).fill_null(False)
    letters = pa.array(list(LETTERS))
    index = pc.fill_null(table.column("answer_index"), 0).combine_chunks()
    index = pc.if_else(pc.less(index, len(letters)), index, 0)
    want = letters.take(index)
    return pc.invert(pc.fill_null(pc.equal(table.column("answer"), want), False))


PRESET = Preset(
    name="mmlu",
    stale=stale,
    features={"cais": CAIS_FEATURES},
    publications={  # each card's license: line; configurations as the upstream names them
        "mmlu_pro": Publication(
            "TIGER-Lab/MMLU-Pro",
            "mit",
            config="default",
            columns=(
                *("question_id", "question", "options", "answer", "answer_index"),
                *("cot_content", "category", "src"),
            ),
        ),
        "mmmlu": Publication("openai/MMMLU", "mit", config="default"),
        "global_mmlu": Publication("CohereForAI/Global-MMLU", "apache-2.0"),
        "mmlu_redux": Publication("edinburgh-dawg/mmlu-redux", "cc-by-4.0"),
        "lukaemon": Publication("lukaemon/mmlu", "unknown"),
    },
    export_layouts={"hendrycks_csv": "cais"},
    follow=follow,
    description="MMLU questions, in any of its published layouts (cais/mmlu by default)",
    layouts=MMLU_LAYOUTS,
    hub="cais/mmlu",
    licence="mit",  # cais/mmlu's card: license: mit
    config="all",
    split="test",
    signatures=_SIGNATURES,
    config_column="subject",
    headerless_csv="hendrycks_csv",
    file_columns=_subject,
    conventions=(
        "MMLU: each context is a complete exam question; a truncated or malformed question is "
        "a defect. Some questions end with a blank (e.g. '____') or a colon that the correct "
        "choice fills, which is the dataset's convention."
    ),
    bundled=Bundled("mmlu_test.parquet", "test"),
)
"""Everything about MMLU."""


def detect_mmlu_layout(columns: Sequence[str]) -> str:
    """The name of the MMLU layout with these columns; :class:`LayoutError` if none fits."""
    return PRESET.layout_of(columns)


def load_mmlu(
    subject: str = "all",
    split: str = "test",
    *,
    layout: str | None = None,
    bundled: bool = False,
    on_error: OnError = "raise",
    **options: Unpack[SourceOptions],
) -> SampleSequence:
    """MMLU as :class:`~sdvm_hf.MultipleChoiceQuestionAnswerSample` s, in any known layout.

    From the Hub (``cais/mmlu``, configuration ``subject``), from ``data_files`` in any layout
    of :data:`MMLU_LAYOUTS` (recognised from the columns, or named by ``layout``; the
    original headerless CSV files take their subject from the file name), or with
    ``bundled=True`` from the slice of the test split shipped in the package. With local files,
    a ``subject`` other than ``"all"`` keeps that subject's rows. The named form of
    ``load("mmlu", subject, split, ...)``: see :func:`~sdvm_hf.load` for the options.
    """
    loaded = load_preset(
        PRESET, subject, split, layout=layout, bundled=bundled, on_error=on_error, **options
    )
    return cast(SampleSequence, loaded)  # not streamed: a SampleSequence
