"""OpenBookQA (``allenai/openbookqa``: ``main``, ``additional``) as completion samples.

The context is ``question_stem``; the choices are ``choices.text`` (always 4) and the answer
``answerKey`` (``"A"``..``"D"``) is matched against ``choices.label``, exactly as published
(a label with stray whitespace would be a bad row, named, not silently accepted; none has
been seen). Every split, test included, has its answers. ``id`` travels in ``extra``, and in
``additional`` also ``fact1``, ``humanScore`` and ``clarity`` (float32, as published) and
``turkIdAnonymized``.

The style is ``continuation``, chosen for the whole dataset because a sample has one style:
most stems are sentence beginnings that the correct choice completes ("... they decide the
best way to save money is to", "Predators eat", "There is most likely going to be fog
around:"), and only a minority (about one in six in the rows examined) are complete questions
ending in "?". Marked ``qa``, most samples would be judged truncated questions; marked
``continuation``, the few complete questions are only judged as stems, which loses nothing
(a complete question is a valid stem for the answer that follows it). That is the safer
error, and it matches how evaluations feed the stem (raw, with no "Question:" wrapper).
"""

from __future__ import annotations

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

__all__ = ["OPENBOOKQA", "PRESET"]

OPENBOOKQA = MultipleChoiceMapping(
    dataset="openbookqa",
    context="question_stem",
    choices="choices.text",
    answer="answerKey",
    answer_format="label",
    labels="choices.label",
    keep=("choices.label",),  # so the export gives choices.label and answerKey back
    style="continuation",
)
"""The openbookqa mapping: ``OPENBOOKQA.row``, ``.batch``, ``.table`` and ``.convert``."""

PRESET = Preset(
    name="openbookqa",
    description="OpenBookQA science stems (allenai/openbookqa)",
    layouts={"openbookqa": OPENBOOKQA},
    hub="allenai/openbookqa",
    licence="unknown",  # the card's license: unknown
    configs=("main", "additional"),
    config="main",
    split="test",
    conventions=(
        "OpenBookQA: most contexts are sentence stems that the correct choice completes (e.g."
        " '... the best way to save money is to'), some end with a colon, and a minority are "
        "complete questions ending in '?'; all of these are by design."
    ),
)
"""Everything about openbookqa."""
