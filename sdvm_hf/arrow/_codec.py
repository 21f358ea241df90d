"""Samples to Arrow columns and back: the encoder and the decoder of the sample table.

The encoder stores ``extra`` as a struct of the union of the keys (with the keys each sample
lacks beside it) when that round-trips exactly, as JSON text otherwise; the decoder builds
samples from a table the checks in :mod:`._validate` accepted, without running pydantic again
on every row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sdvm_hf._frozen import FrozenList, frozen_copy
from sdvm_hf._wire import BLOCKS, STYLES, TASK_TYPE
from sdvm_hf.arrow._rules import is_list
from sdvm_hf.arrow._validate import json_type_problem
from sdvm_hf.arrow.schema import EXTRA_MISSING, EXTRA_MISSING_TYPE, JSON_EXTRA, sample_schema

if TYPE_CHECKING:
    from sdvm_hf.samples import MultipleChoiceSample

# -- encoding ------------------------------------------------------------------------------

DECODE_ROWS = 8_192
"""Rows turned into Python samples at a time while streaming."""


_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def json_text(value: Any) -> str:
    """``value`` as JSON text, exactly (no NaN, non-ASCII kept)."""
    return _JSON.encode(value)


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down, dict keys in the same order."""
    if _kind(a) is not _kind(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


def _kind(value: Any) -> type:
    """The JSON kind of ``value``: a read-only dict or list counts as a plain one."""
    return dict if isinstance(value, dict) else list if isinstance(value, list) else type(value)


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


def struct_extra(extras: list[dict[str, Any]]) -> tuple[pa.Array, pa.Array | None] | None:
    """The extras as a struct array (and the keys each row lacks), when that is exact.

    The struct holds the union of the keys, in first-seen order; the second array is the
    :data:`~sdvm_hf.arrow.schema.EXTRA_MISSING` column, or ``None`` when every sample has every
    key. Exact means: each sample's keys come in the union's order, Arrow infers one type per
    key, and reading the array back gives the very same Python values and types (no int
    widened to float, no nested dict given another's keys). Otherwise ``None``.
    """
    union: dict[str, int] = {}
    for extra in extras:
        for key in extra:
            union.setdefault(key, len(union))
    if not union:
        return None
    lacking = len(union) * len(extras) != sum(map(len, extras))
    if not all(_in_order([union[key] for key in extra]) for extra in extras):
        return None
    try:
        array = pa.array(extras)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        return None
    if [child.name for child in array.type] != list(union):
        return None
    if json_type_problem(array.type, "extra"):
        return None
    if _may_lose(array.type, top=True) or lacking:
        back = [_only(value, extra) for value, extra in zip(array.to_pylist(), extras, strict=True)]
        if not all(map(_same, back, extras)):
            return None
    if not lacking:
        return array, None
    missing = [[key for key in union if key not in extra] or None for extra in extras]
    return array, pa.array(missing, EXTRA_MISSING_TYPE)


def _in_order(positions: list[int]) -> bool:
    return all(a < b for a, b in pairwise(positions))


def _only(value: dict[str, Any], like: dict[str, Any]) -> dict[str, Any]:
    """``value`` restricted to the keys of ``like``."""
    return {key: item for key, item in value.items() if key in like}


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
    struct = struct_extra(extras)
    if struct is None:
        extra, missing = pa.array([json_text(value) for value in extras], JSON_EXTRA), None
    else:
        extra, missing = struct
    columns: dict[str, Any] = {
        "task_type": [TASK_TYPE] * len(samples),
        "style": [sample.style for sample in samples],
        **changeable_columns(samples),
        "extra": extra,
    }
    if missing is not None:
        columns[EXTRA_MISSING] = missing
    schema = sample_schema(extra.type, missing=missing is not None)
    return pa.Table.from_pydict(columns, schema=schema)


# -- decoding ------------------------------------------------------------------------------


def _trusted(
    cls: type[MultipleChoiceSample], fields: dict[str, Any], fields_set: frozenset[str]
) -> MultipleChoiceSample:
    """A sample from values a vectorised check already accepted (``model_construct``'s way)."""
    sample = cls.__new__(cls)
    object.__setattr__(sample, "__dict__", fields)
    object.__setattr__(sample, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(sample, "__pydantic_extra__", None)
    object.__setattr__(sample, "__pydantic_private__", None)
    return sample


def plain_extras(batch: pa.Table | pa.RecordBatch) -> list[dict[str, Any]]:
    """Each row's ``extra`` of a checked batch as a plain dict (the keys it lacks left out)."""
    extra_column = batch.column("extra")
    if not pa.types.is_struct(extra_column.type):
        return [json.loads(text) for text in extra_column.to_pylist()]
    values: list[dict[str, Any]] = extra_column.to_pylist()
    if EXTRA_MISSING in batch.column_names:
        for value, missing in zip(values, batch.column(EXTRA_MISSING).to_pylist(), strict=True):
            for key in missing or ():
                del value[key]
    return values


def plain_blocks(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """A block column's JSON texts decoded to plain dicts (``None`` where absent)."""
    if column.null_count == len(column):
        return [None] * len(column)
    return [None if text is None else json.loads(text) for text in column.to_pylist()]


def _blocks(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    if column.null_count == len(column):
        return [None] * len(column)
    return [None if block is None else frozen_copy(block) for block in plain_blocks(column)]


def decode(batch: pa.Table | pa.RecordBatch) -> Iterator[MultipleChoiceSample]:
    """Typed samples of a checked, canonical batch, column by column.

    A block column left out of ``batch`` (one that is null in every row) decodes to ``None``.
    """
    # the sample types (pydantic) are imported when the first sample is built, not when
    # the sample table is: a load written straight to Parquet never builds one
    from sdvm_hf.samples import MultipleChoiceSample, class_for_style

    fields_set = frozenset(MultipleChoiceSample.model_fields)
    extras = [frozen_copy(value) for value in plain_extras(batch)]
    classes = {style: class_for_style(style) for style in STYLES}
    names = set(batch.column_names)
    nones = [None] * batch.num_rows
    for style, context, choices, answer, extra, audit, fix, reaudit in zip(
        batch.column("style").to_pylist(),
        batch.column("context").to_pylist(),
        batch.column("choices").to_pylist(),
        batch.column("answer_index").to_pylist(),
        extras,
        *(_blocks(batch.column(key)) if key in names else nones for key in BLOCKS),
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
            fields_set,
        )
