"""PIQA (``ybisk/piqa``) as question-answer samples.

The context is ``goal``; the choices are ``sol1`` and ``sol2``; ``label`` is the answer index
(a ``ClassLabel``, int64 in Parquet). The test split withholds its labels (``-1`` in every
row): such rows cannot be samples, and converting them says so. No column is left for
``extra``. Solutions keep their published spacing (trailing and doubled spaces occur).

The style is ``qa``: a goal is the task the solution answers ("How do I ready a guinea pig
cage for it's new occupants?"), not the start of the solution's sentence; some goals are
bare phrases ("dresser") and a few end in a phrase that the solution completes ("..., you
can"), which the conventions text tells the audit.

The Hub's ``main`` branch holds a loading script, which ``datasets`` >= 4 refuses; the Parquet
conversion lives at the revision ``refs/convert/parquet``, which is the default here. Its
folder has been named ``plain_text`` and later ``default``; pass ``config=`` (``--config``) if the
Hub asks for a configuration.
"""

from __future__ import annotations

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

__all__ = ["PIQA", "PRESET"]

PIQA = MultipleChoiceMapping(
    dataset="piqa",
    context="goal",
    choices=("sol1", "sol2"),
    answer="label",
    answer_format="index",
    style="qa",
)
"""The piqa mapping: ``PIQA.row``, ``.batch``, ``.table`` and ``.convert``."""

PRESET = Preset(
    name="piqa",
    description="PIQA physical commonsense goals (ybisk/piqa)",
    layouts={"piqa": PIQA},
    hub="ybisk/piqa",
    licence="unknown",  # the card's license: unknown
    configs=("plain_text", "default"),
    # ``main`` holds a loading script, which ``datasets`` >= 4 refuses; its Parquet
    # conversion lives at this revision.
    revision="refs/convert/parquet",
    split="validation",
    conventions=(
        "PIQA: each context is a goal: a question ('How do I ...?'), an instruction, a phrase"
        " that the solution completes (e.g. '..., you can') or a bare word (e.g. 'dresser'); "
        "all are by design. The two solutions often differ in a single word, and may carry "
        "trailing or doubled spaces as published."
    ),
)
"""Everything about piqa."""
