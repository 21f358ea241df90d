"""HellaSwag (``Rowan/hellaswag`` and the original rowanz jsonl) as completion samples.

The context is ``ctx`` as published, the stem untouched (``"A woman applies mascara. she"``);
the choices are ``endings``; ``label`` is the answer index, the string ``"0".."3"`` on the Hub
and an int in the original jsonl. The test split's labels are withheld (``""`` on the Hub,
the key absent in the original files): such rows cannot be samples, and converting them says
so. Every other column (``ind``, ``activity_label``, ``ctx_a``, ``ctx_b``, ``source_id``,
``split``, ``split_type``) travels in ``extra`` with its Hub type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Unpack, cast

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert.mapping import MultipleChoiceMapping, OnError
from sdvm_hf.convert.preset import Bundled, Preset
from sdvm_hf.sources.loaders import SourceOptions, load_preset

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

__all__ = ["HELLASWAG", "PRESET", "load_hellaswag"]

HELLASWAG = MultipleChoiceMapping(
    dataset="hellaswag",
    context="ctx",
    choices="endings",
    answer="label",
    answer_format="index",
    style="continuation",
    # the published types, so a shard whose column is all null (split_type in a slice) still
    # gives the dataset's one schema
    types={
        "ind": pa.int32(),
        **{
            column: pa.string()
            for column in ("activity_label", "ctx_a", "ctx_b", "source_id", "split", "split_type")
        },
    },
    extra_order=("ind", "activity_label", "ctx_a", "ctx_b", "source_id", "split", "split_type"),
)
"""The HellaSwag mapping: ``HELLASWAG.row``, ``.batch``, ``.table`` and ``.convert``."""

FEATURES = {
    "ind": {"dtype": "int32", "_type": "Value"},
    "activity_label": {"dtype": "string", "_type": "Value"},
    "ctx_a": {"dtype": "string", "_type": "Value"},
    "ctx_b": {"dtype": "string", "_type": "Value"},
    "ctx": {"dtype": "string", "_type": "Value"},
    "endings": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
    "source_id": {"dtype": "string", "_type": "Value"},
    "split": {"dtype": "string", "_type": "Value"},
    "split_type": {"dtype": "string", "_type": "Value"},
    "label": {"dtype": "string", "_type": "Value"},
}
"""``Rowan/hellaswag``'s published features: the original JSON Lines' int ``label`` is a
string there."""


def follow(row: dict[str, Any], sample: MultipleChoiceSample) -> str | None:
    """A changed ``ctx`` is split back into ``ctx_a`` and ``ctx_b``, which lm-eval reads.

    ``ctx`` is ``ctx_a + " " + ctx_b`` (or ``ctx_a`` alone where ``ctx_b`` is empty) in every
    published row; the split keeps the old boundary where one of the two is unchanged. A fix
    that changed both parts cannot be split exactly (lm-eval capitalises ``ctx_b`` on its own),
    so the row keeps its original and says why, as Social IQa's does.
    """
    ctx, a, b = row["ctx"], row.get("ctx_a") or "", row.get("ctx_b") or ""
    if ctx == (f"{a} {b}" if b else a):
        return None
    if a and ctx.startswith(a + " "):
        row["ctx_b"] = ctx[len(a) + 1 :]
    elif b and ctx.endswith(" " + b):
        row["ctx_a"] = ctx[: -len(b) - 1]
    elif not b:  # one part only (every WikiHow row): the whole context is ctx_a
        row["ctx_a"] = ctx
    else:  # lm-eval capitalises ctx_b on its own: no split of the new text is exact
        return "the fix changed both ctx_a's and ctx_b's parts, which lm-eval reads apart"
    return None


def stale(table: pa.Table) -> pa.Array:
    """The rows whose ``ctx`` is not ``ctx_a`` and ``ctx_b`` joined (a hand edit of ``ctx``)."""
    a, b = (pc.fill_null(table.column(c), "") for c in ("ctx_a", "ctx_b"))
    joined = pc.if_else(pc.equal(b, ""), a, pc.binary_join_element_wise(a, b, " "))
    return pc.invert(pc.fill_null(pc.equal(table.column("ctx"), joined), False))


PRESET = Preset(
    name="hellaswag",
    stale=stale,
    features={"hellaswag": FEATURES},
    follow=follow,
    description="HellaSwag sentence stems (Rowan/hellaswag)",
    layouts={"hellaswag": HELLASWAG},
    hub="Rowan/hellaswag",
    licence="mit",  # the card's licensing section: MIT (its YAML names none)
    # ``main`` holds a loading script, which ``datasets`` >= 4 refuses; its Parquet
    # conversion lives at this revision.
    revision="refs/convert/parquet",
    split="validation",
    conventions=(
        "HellaSwag: each context is a sentence stem that ends mid-sentence by design; the "
        "correct choice continues it. After a period the stem continues in lowercase (e.g. "
        "'A woman applies mascara. she'), which is the dataset's convention, not a defect. "
        "WikiHow contexts carry [header], [title] and [step] markup by design."
    ),
    bundled=Bundled("hellaswag_validation.parquet", "validation"),
)
"""Everything about HellaSwag."""


def load_hellaswag(
    split: str = "validation",
    *,
    bundled: bool = False,
    on_error: OnError = "raise",
    **options: Unpack[SourceOptions],
) -> SampleSequence:
    """HellaSwag as :class:`~sdvm_hf.MultipleChoiceCompletionSample` s.

    From the Hub (``Rowan/hellaswag`` at ``refs/convert/parquet`` unless ``revision`` says
    otherwise), from ``data_files`` (the Hub's Parquet or the original jsonl, whose labels are
    ints), or with ``bundled=True`` from the slice of the validation split shipped in the
    package (no network). The test split's labels are withheld: its rows cannot be samples.
    The named form of ``load("hellaswag", None, split, ...)``: see :func:`~sdvm_hf.load`.
    """
    loaded = load_preset(PRESET, split=split, bundled=bundled, on_error=on_error, **options)
    return cast(SampleSequence, loaded)  # not streamed: a SampleSequence
