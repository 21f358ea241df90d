"""HellaSwag (``Rowan/hellaswag`` and the original rowanz jsonl) as completion samples.

The context is ``ctx`` as published, the stem untouched (``"A woman applies mascara. she"``);
the choices are ``endings``; ``label`` is the answer index, the string ``"0".."3"`` on the Hub
and an int in the original jsonl. The test split's labels are withheld (``""`` on the Hub,
the key absent in the original files): such rows cannot be samples, and converting them says
so. Every other column (``ind``, ``activity_label``, ``ctx_a``, ``ctx_b``, ``source_id``,
``split``, ``split_type``) travels in ``extra`` with its Hub type.
"""

from __future__ import annotations

import pyarrow as pa

from sdvm_hf.convert.mapping import MultipleChoiceMapping

HELLASWAG = MultipleChoiceMapping(
    name="hellaswag",
    context="ctx",
    choices="endings",
    answer="label",
    answer_format="index",
    style="continuation",
    types={"ind": pa.int32()},
    extra_order=("ind", "activity_label", "ctx_a", "ctx_b", "source_id", "split", "split_type"),
)
"""The HellaSwag mapping: ``HELLASWAG.row``, ``.batch``, ``.table`` and ``.convert``."""

HUB_PATH = "Rowan/hellaswag"
HUB_REVISION = "refs/convert/parquet"
"""``main`` of ``Rowan/hellaswag`` holds a loading script, which ``datasets`` >= 4 refuses;
its Parquet conversion lives at this revision."""

CONVENTIONS = (
    "HellaSwag: each context is a sentence stem that ends mid-sentence by design; the correct "
    "choice continues it. After a period the stem continues in lowercase (e.g. 'A woman "
    "applies mascara. she'), which is the dataset's convention, not a defect. WikiHow "
    "contexts carry [header], [title] and [step] markup by design."
)
"""The default ``conventions`` text for the SDVM audit of HellaSwag samples."""
