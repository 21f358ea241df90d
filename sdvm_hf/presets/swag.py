"""SWAG (``allenai/swag``, configuration ``regular``) as completion samples.

The context is ``startphrase`` (``sent1``, a space, then ``sent2``, the start of the next
sentence), so it ends mid-sentence by design; the choices are ``ending0``..``ending3``, which
continue ``sent2``; ``label`` is the answer index (a ``ClassLabel``, int64 in Parquet). The
test split withholds its labels (``-1`` in every row): such rows cannot be samples, and
converting them says so. ``video-id``, ``fold-ind``, ``sent1``, ``sent2`` and ``gold-source``
travel in ``extra`` under their published, hyphenated names.

The ``full`` configuration has no label column (the gold ending is a column of its own) and is
not a layout of this preset.
"""

from __future__ import annotations

from sdvm_hf.convert.mapping import MultipleChoiceMapping
from sdvm_hf.convert.preset import Preset

__all__ = ["PRESET", "SWAG"]

SWAG = MultipleChoiceMapping(
    dataset="swag",
    context="startphrase",
    choices=("ending0", "ending1", "ending2", "ending3"),
    answer="label",
    answer_format="index",
    style="continuation",
)
"""The swag mapping: ``SWAG.row``, ``.batch``, ``.table`` and ``.convert``."""

PRESET = Preset(
    name="swag",
    description="SWAG video caption stems (allenai/swag)",
    layouts={"swag": SWAG},
    hub="allenai/swag",
    licence="unknown",  # the card's license: unknown
    configs=("regular", "full"),
    config="regular",
    split="validation",
    conventions=(
        "SWAG: each context is a video caption sentence followed by the start of the next one"
        " (e.g. 'Students lower their eyes nervously. She'), so it ends mid-sentence by "
        "design; the correct choice continues it. Captions may start the second sentence in "
        "lowercase and call an unnamed person 'someone', as published."
    ),
)
"""Everything about swag."""
