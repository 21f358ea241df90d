"""Winogrande (``allenai/winogrande``) as completion samples.

Configurations ``winogrande_xs`` .. ``winogrande_xl`` and ``winogrande_debiased`` differ in
their training split only. Each ``sentence`` has one blank ``_`` that ``option1`` or
``option2`` fills. A sample has one context, so the sentence is split at its blank: the
context is the text before the blank (trailing whitespace removed) and each choice is the
option followed by the rest of the sentence, its spacing kept::

    "Ian volunteered ... because _ despised eating intestine."  options "Ian", "Dennis"
    context  "Ian volunteered ... because"
    choices  ["Ian despised eating intestine.", "Dennis despised eating intestine."]

The style is ``continuation``: the context ends mid-sentence by design. A sentence that opens
with its blank leaves no context, and a sentence without exactly one blank cannot be split:
both are bad rows, named. ``answer`` is one-based (``"1"``, ``"2"``); the test split withholds
it (``""``): such rows cannot be samples, and converting them says so. The raw columns
``sentence``, ``option1``, ``option2`` and ``answer`` all stay in ``extra``, so lm-eval's
partial scoring (one context per option, ``sentence[:i] + option``, and the shared rest) can
be rebuilt from a sample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["PRESET", "WINOGRANDE"]

WINOGRANDE = MultipleChoiceMapping(
    dataset="winogrande",
    context="sentence",
    blank="_",
    choices=("option1", "option2"),
    answer="answer",
    answer_format="one_based",
    style="continuation",
    keep=("sentence", "option1", "option2", "answer"),
)
"""The winogrande mapping: ``WINOGRANDE.row``, ``.batch``, ``.table`` and ``.convert``."""


def follow(row: dict[str, Any], sample: MultipleChoiceSample) -> str | None:
    """``sentence``, ``option1`` and ``option2`` follow the context and the choices.

    Each choice is its option followed by the sentence's rest after the blank, which both share.
    """
    sentence = row["sentence"]
    blank = sentence.index("_")
    before, tail = sentence[:blank], sentence[blank + 1 :]
    gap = before[len(before.rstrip()) :]
    first, second = sample.choices
    if not (first.endswith(tail) and second.endswith(tail)):
        return (
            "the fix changed the rest of the sentence differently in the two choices, which "
            "Winogrande's one sentence with one blank cannot hold"
        )
    cut = len(first) - len(tail), len(second) - len(tail)
    row["option1"], row["option2"] = first[: cut[0]], second[: cut[1]]
    row["sentence"] = f"{sample.context}{gap}_{tail}"
    return None


PRESET = Preset(
    name="winogrande",
    follow=follow,
    description="Winogrande fill-in-the-blank sentences (allenai/winogrande)",
    layouts={"winogrande": WINOGRANDE},
    hub="allenai/winogrande",
    licence="unknown",  # the card states none
    configs=tuple(f"winogrande_{size}" for size in ("xs", "s", "m", "l", "xl", "debiased")),
    config="winogrande_xl",
    split="validation",
    conventions=(
        "Winogrande: each context is the part of a sentence before its blank, so it ends mid-"
        "sentence by design; each choice is one of two candidates (usually names or nouns "
        "from the context) followed by the rest of the sentence, so the two choices differ "
        "only in the candidate. The rest of the sentence may begin with punctuation."
    ),
)
"""Everything about winogrande."""
