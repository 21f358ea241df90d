"""MMLU in each published layout, as question-answer samples.

Each layout is a :class:`~sdvm_hf.convert.mapping.MultipleChoiceMapping`;
:func:`detect_layout` recognises one from its columns.

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

from collections.abc import Sequence

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.errors import LayoutError

HENDRYCKS_COLUMNS = ("question", "A", "B", "C", "D", "answer")
"""The columns of the original headerless CSV files, in order."""

LAYOUTS: dict[str, MultipleChoiceMapping] = {
    "cais": MultipleChoiceMapping(
        name="mmlu", context="question", choices="choices", answer="answer"
    ),
    "auxiliary_train": MultipleChoiceMapping(
        name="mmlu auxiliary_train",
        context="question",
        choices="choices",
        answer="answer",
        unnest="train",
    ),
    "hendrycks_csv": MultipleChoiceMapping(
        name="mmlu",
        context="question",
        choices=("A", "B", "C", "D"),
        answer="answer",
        answer_format="letter",
    ),
    "lukaemon": MultipleChoiceMapping(
        name="lukaemon/mmlu",
        context="input",
        choices=("A", "B", "C", "D"),
        answer="target",
        answer_format="letter",
    ),
    "mmlu_pro": MultipleChoiceMapping(
        name="mmlu-pro", context="question", choices="options", answer="answer_index"
    ),
    "mmmlu": MultipleChoiceMapping(
        name="mmmlu",
        context="Question",
        choices=("A", "B", "C", "D"),
        answer="Answer",
        answer_format="letter",
    ),
    "global_mmlu": MultipleChoiceMapping(
        name="global-mmlu",
        context="question",
        choices=("option_a", "option_b", "option_c", "option_d"),
        answer="answer",
        answer_format="letter",
    ),
    "mmlu_redux": MultipleChoiceMapping(
        name="mmlu-redux", context="question", choices="choices", answer="answer"
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
    ("hendrycks_csv", frozenset(HENDRYCKS_COLUMNS)),
    ("cais", frozenset({"question", "choices", "answer"})),
)

CONVENTIONS = (
    "MMLU: each context is a complete exam question; a truncated or malformed question is a "
    "defect. Some questions end with a blank (e.g. '____') or a colon that the correct choice "
    "fills, which is the dataset's convention."
)
"""The default ``conventions`` text for the SDVM audit of MMLU samples."""


def detect_layout(columns: Sequence[str]) -> str:
    """The name of the MMLU layout with these columns; :class:`LayoutError` if none fits."""
    present = set(columns)
    for name, needed in _SIGNATURES:
        if needed <= present:
            return name
    raise LayoutError(
        f"unknown MMLU layout: columns seen: {', '.join(columns)}; layouts known: "
        + "; ".join(f"{name} ({', '.join(sorted(needed))})" for name, needed in _SIGNATURES)
    )


def mmlu_mapping(columns: Sequence[str], layout: str | None = None) -> MultipleChoiceMapping:
    """The mapping for ``layout`` (by name), or for the layout these columns show."""
    if layout is None:
        layout = detect_layout(columns)
    try:
        return LAYOUTS[layout]
    except KeyError:
        raise LayoutError(
            f"unknown MMLU layout {layout!r}; layouts known: {', '.join(LAYOUTS)}"
        ) from None
