"""The registry of dataset presets: one line per dataset.

Adding a dataset is one new module in this folder (its mapping(s) and a :class:`Preset`) and
one line here; the loaders, the ``sdvm-hf`` command and the recipes find it by name.
"""

from __future__ import annotations

from sdvm_hf.convert.preset import Preset
from sdvm_hf.presets import (
    arc,
    commonsense_qa,
    hellaswag,
    mmlu,
    openbookqa,
    piqa,
    social_i_qa,
    swag,
    truthfulqa,
    winogrande,
)

PRESETS: dict[str, Preset] = {
    "hellaswag": hellaswag.PRESET,
    "mmlu": mmlu.PRESET,
    "arc": arc.PRESET,
    "openbookqa": openbookqa.PRESET,
    "commonsense_qa": commonsense_qa.PRESET,
    "piqa": piqa.PRESET,
    "social_i_qa": social_i_qa.PRESET,
    "winogrande": winogrande.PRESET,
    "swag": swag.PRESET,
    "truthfulqa": truthfulqa.PRESET,
}
"""Every dataset this package knows, by name."""


def preset(name: str) -> Preset:
    """The preset called ``name``; ``KeyError`` listing the known names otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; presets known: {', '.join(PRESETS)}") from None
