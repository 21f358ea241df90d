"""CommonsenseQA (``tau/commonsense_qa``) as question-answer samples.

The context is ``question``; ``choices`` is a struct of two lists whose fields come in the
order ``label``, ``text`` (the reverse of ARC's): the choices are ``choices.text`` (always 5)
and the answer ``answerKey`` (``"A"``..``"E"``) is matched against ``choices.label``. The test
split withholds its answers (``answerKey`` is ``""`` in every row): such rows cannot be
samples, and converting them says so. ``id`` and ``question_concept`` travel in ``extra``.
"""

from __future__ import annotations

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

__all__ = ["COMMONSENSE_QA", "PRESET"]

COMMONSENSE_QA = MultipleChoiceMapping(
    dataset="commonsense_qa",
    context="question",
    choices="choices.text",
    answer="answerKey",
    answer_format="label",
    labels="choices.label",
    keep=("choices.label",),  # so the export gives choices.label and answerKey back
    style="qa",
)
"""The commonsense_qa mapping: ``COMMONSENSE_QA.row``, ``.batch``, ``.table`` and ``.convert``."""

PRESET = Preset(
    name="commonsense_qa",
    description="CommonsenseQA questions (tau/commonsense_qa)",
    layouts={"commonsense_qa": COMMONSENSE_QA},
    hub="tau/commonsense_qa",
    licence="unknown",  # the card's license: unknown
    split="validation",
    conventions=(
        "CommonsenseQA: each context is a complete question, usually ending in '?'; some are "
        "fill-in questions phrased around 'what' (e.g. '... they seemed to what the efforts "
        "the school had made to change?'), which is the dataset's convention. Choices are "
        "short lowercase phrases."
    ),
)
"""Everything about commonsense_qa."""
