"""ARC (``allenai/ai2_arc``: ``ARC-Easy``, ``ARC-Challenge``) as question-answer samples.

The context is ``question``, a complete exam question (a few are stems the answer
completes; the style is ``qa`` as for MMLU). ``choices`` is a struct of two lists, ``text``
and ``label``: the choices are ``choices.text`` (3 to 5 of them), and the answer
``answerKey`` is matched against ``choices.label``, which holds letters (``"A"``..``"E"``) in
most rows and digits (``"1"``..``"5"``) in some (the NYSEDREGENTS questions), so the answer
is never read as a letter position. No split withholds its answers. ``id`` travels in
``extra``, and ``choices.label`` too (as the key ``choices.label``), so the export can give
``choices`` and ``answerKey`` back.
"""

from __future__ import annotations

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

__all__ = ["ARC", "PRESET"]

ARC = MultipleChoiceMapping(
    dataset="arc",
    context="question",
    choices="choices.text",
    answer="answerKey",
    answer_format="label",
    labels="choices.label",
    keep=("choices.label",),  # so the export gives choices.label and answerKey back
    style="qa",
)
"""The arc mapping: ``ARC.row``, ``.batch``, ``.table`` and ``.convert``."""

PRESET = Preset(
    name="arc",
    description="ARC science exam questions (allenai/ai2_arc)",
    layouts={"arc": ARC},
    hub="allenai/ai2_arc",
    licence="cc-by-sa-4.0",  # the card's license: cc-by-sa-4.0
    configs=("ARC-Challenge", "ARC-Easy"),
    config="ARC-Challenge",
    split="test",
    conventions=(
        "ARC: each context is a grade-school science exam question, usually complete and "
        "ending in '?'; a minority are sentence stems that the correct choice completes (e.g."
        " '... The process of cementation of these particles forms'), which is the dataset's "
        "convention."
    ),
)
"""Everything about arc."""
