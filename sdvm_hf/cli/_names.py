"""The data the parsers are built from: ``--help`` imports no pyarrow, pydantic or datasets.

Each name is a copy of a constant defined where it is used (the modules named below import
pyarrow); ``tests/test_startup.py`` pins every copy to its original, so they cannot drift apart.
"""

from __future__ import annotations

import sys

PRESET_NAMES: tuple[str, ...] = (
    "hellaswag",
    "mmlu",
    "arc",
    "openbookqa",
    "commonsense_qa",
    "piqa",
    "social_i_qa",
    "winogrande",
    "swag",
    "truthfulqa",
    "sciq",
    "copa",
)
"""``tuple(sdvm_hf.presets.registry.PRESETS)`` as the registry defines it."""

_REGISTRY = "sdvm_hf.presets.registry"


def preset_names() -> tuple[str, ...]:
    """The presets known now: :data:`PRESET_NAMES`, or the registry's once it is imported.

    A preset registered at run time (``PRESETS[name] = ...``) was registered through the
    imported registry, so the command offers it as it offers the published ones.
    """
    registry = sys.modules.get(_REGISTRY)
    return PRESET_NAMES if registry is None else tuple(registry.PRESETS)


ANSWER_FORMATS: tuple[str, ...] = ("index", "one_based", "letter", "text", "label", "one_hot")
"""``sdvm_hf.convert._answers.ANSWER_FORMATS``."""

FORMATS: tuple[str, ...] = ("parquet", "jsonl", "jsonl.gz")
"""``sdvm_hf.files.FORMATS``."""

TOP_GROUPS = 100
"""``sdvm_hf.summary.TOP_GROUPS``."""

EXAMPLES = 5
"""``sdvm_hf.summary.EXAMPLES``."""

STAGES: tuple[str, ...] = ("audit", "fix", "refine")
"""``sdvm_hf.service.roundtrip.STAGES``."""

MAX_BATCH = 100
"""``sdvm_hf.service.MAX_BATCH``."""

POLICIES: tuple[str, ...] = ("replace", "drop", "original")
"""``sdvm_hf.exporter.POLICIES``."""
