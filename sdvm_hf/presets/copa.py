"""COPA (SuperGLUE's ``copa``, ``aps/super_glue``) as question-answer samples.

Each row is a premise and two alternatives, one its more plausible cause or effect:
``question`` says which (``"cause"`` or ``"effect"``). The context is ``premise``, a complete
sentence ("The man turned on the faucet."); the choices are ``choice1`` and ``choice2``,
complete sentences too; ``label`` is the answer index (a ``ClassLabel`` named ``choice1``,
``choice2``; int64 in Parquet). ``question`` and ``idx`` (int32) travel in ``extra``, so the
relation asked for stays with the sample and the export gives the row back.

The style is ``qa``: the premise is not the start of the choices' sentence but a complete
statement the choices answer ("What was the cause?"); lm-eval's ``copa`` task builds its
prompt from it (the premise without its period, then " because" or " therefore", then each
choice lowercased), which the export keeps working since it gives ``premise``, ``choice1``,
``choice2`` and ``question`` back as published.

The test split withholds its labels (``-1`` in every row): such rows cannot be samples, and
converting them says so. The Hub id is the one lm-evaluation-harness 0.4.13 reads,
``aps/super_glue`` (Parquet, one folder per configuration), with the configuration ``copa``;
``super_glue`` itself holds a loading script, which ``datasets`` >= 4 refuses. SuperGLUE's
original JSON Lines files (``COPA/val.jsonl``: an int ``label``, ``idx`` last) load too, with
``idx`` cast to the Hub's int32, and export with the Hub's features.
"""

from __future__ import annotations

import pyarrow as pa

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

__all__ = ["COPA", "FEATURES", "PRESET"]

COPA = MultipleChoiceMapping(
    dataset="copa",
    context="premise",
    choices=("choice1", "choice2"),
    answer="label",
    answer_format="index",
    style="qa",
    types={"idx": pa.int32()},  # the Hub's type, also for the original JSON Lines' ints
)
"""The copa mapping: ``COPA.row``, ``.batch``, ``.table`` and ``.convert``."""

FEATURES = {
    "premise": {"dtype": "string", "_type": "Value"},
    "choice1": {"dtype": "string", "_type": "Value"},
    "choice2": {"dtype": "string", "_type": "Value"},
    "question": {"dtype": "string", "_type": "Value"},
    "idx": {"dtype": "int32", "_type": "Value"},
    "label": {"names": ["choice1", "choice2"], "_type": "ClassLabel"},
}
"""``aps/super_glue``'s published ``copa`` features: ``label`` a ClassLabel, ``idx`` int32."""

PRESET = Preset(
    name="copa",
    features={"copa": FEATURES},
    description="COPA causal premises and two alternatives (aps/super_glue, copa)",
    layouts={"copa": COPA},
    hub="aps/super_glue",
    licence="other",  # super_glue's card: license: other
    configs=("copa",),
    config="copa",
    split="validation",
    conventions=(
        "COPA: each context is a complete premise sentence; extra['question'] says whether "
        "the two choices are its possible causes ('cause') or effects ('effect'), and the "
        "correct choice is the more plausible one. Premises and choices are short, simple "
        "past-tense sentences about everyday events, often with 'I' or an unnamed 'the man',"
        " 'the woman', by design; both choices are usually plausible sentences on their own."
    ),
)
"""Everything about copa."""
