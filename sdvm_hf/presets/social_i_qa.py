"""Social IQa (``allenai/social_i_qa``) as question-answer samples.

The context joins the situation and the question about it, ``context + " " + question``
(one space, as evaluations prompt it: "Sydney walked past ... Sydney felt bad afterwards. How
would you describe Sydney?"). The choices are ``answerA``, ``answerB``, ``answerC``; ``label``
is the one-based answer as a string (``"1"``..``"3"``). Whitespace around a label is ignored,
so ``"2"`` followed by a line break is the label ``"2"``: the raw label files end each line
with one, which copies built with ``datasets`` < 1.2 kept. Both source columns of the
context stay in ``extra`` so the join can be undone: ``question`` as it is and ``context``
under the key ``situation`` (``context`` is a wire key). The Hub publishes no test split.

The Hub's ``main`` branch holds a loading script, which ``datasets`` >= 4 refuses; the Parquet
conversion lives at the revision ``refs/convert/parquet``, which is the default here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["PRESET", "SOCIAL_I_QA"]

SOCIAL_I_QA = MultipleChoiceMapping(
    dataset="social_i_qa",
    context=("context", "question"),
    context_join=" ",
    choices=("answerA", "answerB", "answerC"),
    answer="label",
    answer_format="one_based",
    style="qa",
    keep=("context", "question", "label"),
    rename={"context": "situation"},
)
"""The social_i_qa mapping: ``SOCIAL_I_QA.row``, ``.batch``, ``.table`` and ``.convert``."""


def follow(row: dict[str, Any], sample: MultipleChoiceSample) -> str | None:
    """A changed context (``context + " " + question``) is split back into its two columns.

    The split keeps the old boundary, where the situation or the question is unchanged.
    """
    situation, question, joined = row["context"], row["question"], sample.context
    if joined == f"{situation} {question}":
        return None
    if joined.startswith(situation + " "):
        row["question"] = joined[len(situation) + 1 :]
    elif joined.endswith(" " + question):
        row["context"] = joined[: -len(question) - 1]
    else:
        return "the fix changed both the situation and the question, which one context joins"
    return None


PRESET = Preset(
    name="social_i_qa",
    follow=follow,
    description="Social IQa situations and questions (allenai/social_i_qa)",
    layouts={"social_i_qa": SOCIAL_I_QA},
    hub="allenai/social_i_qa",
    licence="unknown",  # the card states none
    # ``main`` holds a loading script, which ``datasets`` >= 4 refuses; its Parquet
    # conversion lives at this revision.
    revision="refs/convert/parquet",
    split="validation",
    conventions=(
        "Social IQa: each context is a short situation followed by one question about it, "
        "joined with a space (e.g. '... Sydney felt bad afterwards. How would you describe "
        "Sydney?'). Names stand for people of any gender; choices are short phrases, often "
        "lowercase and without a final period, by design."
    ),
)
"""Everything about social_i_qa."""
