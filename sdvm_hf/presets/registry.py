"""The registry of dataset presets: one line per dataset.

Adding a dataset is one new module in this folder (its mapping(s) and a :class:`Preset`) and
one line here; the loaders, the ``sdvm-hf`` command and the recipes find it by name.
"""

from __future__ import annotations

from sdvm_hf.convert.preset import Preset
from sdvm_hf.presets import hellaswag, mmlu

PRESETS: dict[str, Preset] = {
    "hellaswag": hellaswag.PRESET,
    "mmlu": mmlu.PRESET,
}
"""Every dataset this package knows, by name."""


def preset(name: str) -> Preset:
    """The preset called ``name``; ``KeyError`` listing the known names otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; presets known: {', '.join(PRESETS)}") from None
