"""TruthfulQA (``truthfulqa/truthful_qa``, ``multiple_choice``) as question-answer samples.

The context is ``question``. The single-answer task is ``mc1_targets``, a struct of two
lists: the choices are ``mc1_targets.choices`` (the card says 4 or 5; rows with 7 occur),
and ``mc1_targets.labels`` (int32 flags, one per choice) marks the correct one with a ``1``;
a row whose flags hold no ``1``, or more than one, is a bad row, named. ``mc2_targets`` (the
multiple-true-answer task, several ``1`` s) travels in ``extra`` unchanged, as a struct with
its int32 labels. The configuration has one split, ``validation``.
"""

from __future__ import annotations

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

__all__ = ["PRESET", "TRUTHFULQA"]

TRUTHFULQA = MultipleChoiceMapping(
    dataset="truthfulqa",
    context="question",
    choices="mc1_targets.choices",
    answer="mc1_targets.labels",
    answer_format="one_hot",
    style="qa",
)
"""The truthfulqa mapping: ``TRUTHFULQA.row``, ``.batch``, ``.table`` and ``.convert``."""

PRESET = Preset(
    name="truthfulqa",
    description="TruthfulQA single-answer questions (truthfulqa/truthful_qa)",
    layouts={"truthfulqa": TRUTHFULQA},
    hub="truthfulqa/truthful_qa",
    licence="apache-2.0",  # the card's license: apache-2.0
    configs=("multiple_choice", "generation"),
    config="multiple_choice",
    split="validation",
    conventions=(
        "TruthfulQA: each context is a complete question, many built to invite a common "
        "misconception; the correct choice is the true answer (often cautious, e.g. 'Nothing "
        "in particular happens ...') and the other choices are plausible false answers, by "
        "design."
    ),
)
"""Everything about truthfulqa."""
