"""Samples to Arrow columns and back: the encoder and the decoder of the sample table.

The encoder stores ``extra`` as a struct when that round-trips exactly, as JSON text
otherwise; the decoder builds samples from a table the checks in :mod:`._validate` accepted,
without running pydantic again on every row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from sdvm_hf._frozen import FrozenList, frozen_copy
from sdvm_hf._wire import BLOCKS, STYLES, TASK_TYPE
from sdvm_hf.arrow._validate import is_list, json_type_problem
from sdvm_hf.arrow.schema import JSON_EXTRA, sample_schema
from sdvm_hf.samples import MultipleChoiceSample, class_for_style

# -- encoding ------------------------------------------------------------------------------


def json_text(value: Any) -> str:
    """``value`` as JSON text, exactly (no NaN, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down, dict keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


def _may_lose(dtype: pa.DataType, top: bool = False) -> bool:
    """Whether Arrow's inference could have changed a value of this type.

    Ints are widened under a floating type, and differing nested dicts are merged into one
    struct. Mixed bool/int/str values and out-of-range ints make inference fail instead, so
    other types need no value check.
    """
    if pa.types.is_floating(dtype):
        return True
    if pa.types.is_struct(dtype):
        return not top or any(_may_lose(child.type) for child in dtype)
    if is_list(dtype):
        return _may_lose(dtype.value_type)
    return False


def struct_extra(extras: list[dict[str, Any]]) -> pa.Array | None:
    """The extras as a struct array when that round-trips exactly, else ``None``.

    Exact means: every sample has the same keys in the same order, Arrow infers one type per
    key, and reading the array back gives the very same Python values and types (no int
    widened to float, no nested dict given another's keys).
    """
    if not extras or not extras[0]:
        return None
    keys = list(extras[0])
    if any(list(extra) != keys for extra in extras):
        return None
    try:
        array = pa.array(extras)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        return None
    if json_type_problem(array.type, "extra"):
        return None
    if _may_lose(array.type, top=True) and not all(map(_same, array.to_pylist(), extras)):
        return None
    return array


def changeable_columns(samples: Sequence[MultipleChoiceSample]) -> dict[str, pa.Array]:
    """The columns a service stage may change: context, choices, answer and the blocks.

    Blocks become JSON text, null when absent.
    """
    columns = {
        "context": pa.array([s.context for s in samples], pa.string()),
        "choices": pa.array([s.choices for s in samples], pa.list_(pa.string())),
        "answer_index": pa.array([s.answer_index for s in samples], pa.int64()),
    }
    for key in BLOCKS:
        blocks = (getattr(sample, key) for sample in samples)
        texts = [None if block is None else json_text(block) for block in blocks]
        columns[key] = pa.array(texts, pa.string())
    return columns


def encode(samples: Sequence[MultipleChoiceSample]) -> pa.Table:
    """A sample table holding ``samples``, in order."""
    extras = [sample.extra for sample in samples]
    extra = struct_extra(extras)
    if extra is None:
        extra = pa.array([json_text(value) for value in extras], JSON_EXTRA)
    columns: dict[str, Any] = {
        "task_type": [TASK_TYPE] * len(samples),
        "style": [sample.style for sample in samples],
        **changeable_columns(samples),
        "extra": extra,
    }
    return pa.Table.from_pydict(columns, schema=sample_schema(extra.type))


# -- decoding ------------------------------------------------------------------------------

_FIELDS_SET = frozenset(MultipleChoiceSample.model_fields)


def _trusted(cls: type[MultipleChoiceSample], fields: dict[str, Any]) -> MultipleChoiceSample:
    """A sample from values a vectorised check already accepted (``model_construct``'s way)."""
    sample = cls.__new__(cls)
    object.__setattr__(sample, "__dict__", fields)
    object.__setattr__(sample, "__pydantic_fields_set__", set(_FIELDS_SET))
    object.__setattr__(sample, "__pydantic_extra__", None)
    object.__setattr__(sample, "__pydantic_private__", None)
    return sample


def _blocks(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    if column.null_count == len(column):
        return [None] * len(column)
    return [None if text is None else frozen_copy(json.loads(text)) for text in column.to_pylist()]


def decode(batch: pa.Table | pa.RecordBatch) -> Iterator[MultipleChoiceSample]:
    """Typed samples of a checked, canonical batch, column by column."""
    extra_column = batch.column("extra")
    if pa.types.is_struct(extra_column.type):
        extras = [frozen_copy(value) for value in extra_column.to_pylist()]
    else:
        extras = [frozen_copy(json.loads(text)) for text in extra_column.to_pylist()]
    classes = {style: class_for_style(style) for style in STYLES}
    for style, context, choices, answer, extra, audit, fix, reaudit in zip(
        batch.column("style").to_pylist(),
        batch.column("context").to_pylist(),
        batch.column("choices").to_pylist(),
        batch.column("answer_index").to_pylist(),
        extras,
        *(_blocks(batch.column(key)) for key in BLOCKS),
        strict=True,
    ):
        yield _trusted(
            classes[style],
            {
                "context": context,
                "choices": FrozenList(choices),
                "answer_index": answer,
                "style": style,
                "extra": extra,
                "audit": audit,
                "fix": fix,
                "reaudit": reaudit,
            },
        )
