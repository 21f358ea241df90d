"""SciQ (``allenai/sciq``) as question-answer samples.

The context is ``question``, a complete science exam question. SciQ keeps its correct answer
in a column of its own, ``correct_answer``, beside three wrong ones, ``distractor1`` ..
``distractor3`` (published in the order ``question, distractor3, distractor1, distractor2,
correct_answer, support``). The choices are the three distractors and then the correct
answer, ``[distractor1, distractor2, distractor3, correct_answer]``: the order of
lm-evaluation-harness's ``sciq`` task (``doc_to_choice``, target 3) and of OLMES
(``gold: 3``). The answer index is derived, not read: it is the position of the text of
``correct_answer`` among the choices, 3 unless a distractor is spelled exactly like the
correct answer (then the first of the equal choices, whose text is the same). ``support``
(the paragraph the question was written from, ``""`` in about one row in nine) travels in
``extra``. No split withholds its answers; the configuration is ``default``.

The way back: the choices go back to their four columns, and ``correct_answer`` is the text
of the sample's answer. A fix that moves the answer to another choice is expressed exactly,
since in SciQ the position of a choice carries nothing but its role: the newly correct text
goes to ``correct_answer`` and the text that was correct takes the distractor column the new
answer leaves, so lm-eval's target (always ``correct_answer``) is the fixed answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["FEATURES", "PRESET", "SCIQ"]

DISTRACTORS = ("distractor1", "distractor2", "distractor3")
"""The wrong answers' columns, in the order the choices take them."""

SCIQ = MultipleChoiceMapping(
    dataset="sciq",
    context="question",
    choices=(*DISTRACTORS, "correct_answer"),
    answer="correct_answer",
    answer_format="text",
    style="qa",
)
"""The sciq mapping: ``SCIQ.row``, ``.batch``, ``.table`` and ``.convert``."""

FEATURES = {
    name: {"dtype": "string", "_type": "Value"}
    for name in (
        "question",
        "distractor3",
        "distractor1",
        "distractor2",
        "correct_answer",
        "support",
    )
}
"""``allenai/sciq``'s published features, in its column order (every column a string)."""


def follow(row: dict[str, Any], sample: MultipleChoiceSample) -> str | None:
    """A moved answer swaps columns: the old correct text takes the new answer's column.

    The inverse half has put each choice in its column and the answer's text in
    ``correct_answer``; where the answer is not the last choice, the last choice (the text
    that was correct) goes to the distractor column that held the answer.
    """
    answer = sample.answer_index
    if answer < len(DISTRACTORS):
        row[DISTRACTORS[answer]] = sample.choices[len(DISTRACTORS)]
    return None


PRESET = Preset(
    name="sciq",
    follow=follow,
    features={"sciq": FEATURES},
    description="SciQ crowd-sourced science exam questions (allenai/sciq)",
    layouts={"sciq": SCIQ},
    hub="allenai/sciq",
    licence="cc-by-nc-3.0",  # the card's license: cc-by-nc-3.0
    split="validation",
    conventions=(
        "SciQ: each context is a complete science exam question (physics, chemistry, biology,"
        " earth science); the choices are short answers, often a single lowercase word or "
        "term without a final period, and the last choice is the correct one by the "
        "dataset's layout. A supporting paragraph, when there is one, is in extra['support']"
        " (empty for some questions, by design)."
    ),
)
"""Everything about sciq."""
