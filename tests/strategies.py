"""Hypothesis strategies for samples with arbitrary unicode, JSON extras and stage blocks."""

from typing import Any

from hypothesis import strategies as st

from sdvm_hf import MultipleChoiceSample
from sdvm_hf.samples import class_for_style

# The wire format's reserved keys (../shared/docs/sdvm-wire-format.md)
RESERVED_KEYS = frozenset(
    ("task_type", "context", "choices", "answer_index", "style", "audit", "fix", "reaudit")
)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=8,
)
# Blocks are opaque to us (carried, never read): small objects are enough to pin the round trip.
json_objects = st.dictionaries(st.text(max_size=8), json_scalars, max_size=3)
extra_keys = st.text().filter(lambda key: key not in RESERVED_KEYS)


@st.composite
def samples(
    draw: st.DrawFn, extra: st.SearchStrategy[dict[str, Any]] | None = None, blocks: bool = True
) -> MultipleChoiceSample:
    choices = draw(st.lists(st.text(), min_size=2, max_size=6))
    cls = class_for_style(draw(st.sampled_from(["continuation", "qa"])))
    return cls(
        context=draw(st.text(min_size=1).filter(lambda text: text.strip() != "")),
        choices=choices,
        answer_index=draw(st.integers(0, len(choices) - 1)),
        extra=draw(
            extra if extra is not None else st.dictionaries(extra_keys, json_values, max_size=5)
        ),
        audit=draw(st.none() | json_objects) if blocks else None,
        fix=draw(st.none() | json_objects) if blocks else None,
        reaudit=draw(st.none() | json_objects) if blocks else None,
    )


@st.composite
def uniform_batches(draw: st.DrawFn) -> list[MultipleChoiceSample]:
    """Samples whose extras share keys and scalar types, as a dataset conversion gives."""
    keys = draw(st.lists(extra_keys, min_size=1, max_size=4, unique=True))
    kinds = [
        draw(
            st.sampled_from(
                [
                    st.integers(-(2**63), 2**63 - 1),
                    st.text(),
                    st.booleans(),
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.lists(st.text(), max_size=3),
                ]
            )
        )
        for _ in keys
    ]
    extra = st.fixed_dictionaries(dict(zip(keys, kinds, strict=True)))
    return draw(st.lists(samples(extra=extra, blocks=False), min_size=1, max_size=4))
