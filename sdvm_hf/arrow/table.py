"""Samples to a sample table and back, and the lazy Arrow-backed sequence of samples."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import pyarrow as pa

from sdvm_hf.arrow.schema import (
    JSON_EXTRA,
    canonical,
    check_schema,
    json_type_problem,
    sample_features,
    sample_schema,
)
from sdvm_hf.arrow.validate import find_problems
from sdvm_hf.errors import Reject, SampleTableError
from sdvm_hf.samples import STAGE_KEYS, TASK_TYPE, MultipleChoiceSample, class_for_style

if TYPE_CHECKING:
    import datasets

_BATCH_ROWS = 8192


def _json_text(value: Any) -> str:
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


def _struct_extra(extras: list[dict[str, Any]]) -> pa.Array | None:
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
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _may_lose(dtype.value_type)
    return False


def samples_to_table(samples: Iterable[MultipleChoiceSample]) -> pa.Table:
    """A sample table holding ``samples``, in order (see :mod:`sdvm_hf.arrow.schema`).

    ``extra`` becomes a struct when it round-trips exactly as one, a JSON column otherwise.
    """
    if isinstance(samples, SampleSequence):
        return samples.table
    rows = list(samples)
    extras = [sample.extra for sample in rows]
    extra = _struct_extra(extras)
    if extra is None:
        extra = pa.array([_json_text(value) for value in extras], JSON_EXTRA)
    columns: dict[str, Any] = {
        "task_type": [TASK_TYPE] * len(rows),
        "style": [sample.style for sample in rows],
        **core_columns(rows),
        "extra": extra,
    }
    return pa.Table.from_pydict(columns, schema=sample_schema(extra.type))


def core_columns(samples: Sequence[MultipleChoiceSample]) -> dict[str, pa.Array]:
    """The columns a stage of the service may change: context, choices, answer, stage blocks.

    Stage blocks become JSON text, null when absent.
    """
    columns = {
        "context": pa.array([s.context for s in samples], pa.string()),
        "choices": pa.array([s.choices for s in samples], pa.list_(pa.string())),
        "answer_index": pa.array([s.answer_index for s in samples], pa.int64()),
    }
    for key in STAGE_KEYS:
        blocks = (getattr(sample, key) for sample in samples)
        texts = [None if block is None else _json_text(block) for block in blocks]
        columns[key] = pa.array(texts, pa.string())
    return columns


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
    return [None if text is None else json.loads(text) for text in column.to_pylist()]


def build_samples(batch: pa.Table | pa.RecordBatch) -> Iterator[MultipleChoiceSample]:
    """Typed samples of a validated, canonical batch, column by column."""
    extra_column = batch.column("extra")
    if pa.types.is_struct(extra_column.type):
        extras = [{} if value is None else value for value in extra_column.to_pylist()]
    else:
        extras = [json.loads(text) for text in extra_column.to_pylist()]
    classes = {style: class_for_style(style) for style in ("continuation", "qa")}
    for style, context, choices, answer, extra, audit, fix, reaudit in zip(
        batch.column("style").to_pylist(),
        batch.column("context").to_pylist(),
        batch.column("choices").to_pylist(),
        batch.column("answer_index").to_pylist(),
        extras,
        *(_blocks(batch.column(key)) for key in STAGE_KEYS),
        strict=True,
    ):
        yield _trusted(
            classes[style],
            {
                "context": context,
                "choices": choices,
                "answer_index": answer,
                "style": style,
                "extra": extra,
                "audit": audit,
                "fix": fix,
                "reaudit": reaudit,
            },
        )


def checked_table(table: pa.Table, source: str = "table") -> pa.Table:
    """``table`` as a canonical sample table, or :class:`SampleTableError` saying what is wrong.

    Checks the schema (every missing or mistyped column) and then every row, vectorised.
    """
    check_schema(table.schema, source)
    table = canonical(table)
    problems = find_problems(table, limit=5)
    if problems:
        listed = "; ".join(map(str, problems))
        raise SampleTableError(f"{source} has rows that are not valid samples: {listed}")
    return table


class SampleSequence(Sequence[MultipleChoiceSample]):
    """Typed samples backed by an Arrow sample table, built lazily.

    ``len``, indexing, slicing and iteration give typed samples; nothing is turned into
    Python objects before it is asked for. ``table`` is the Arrow table, ``dataset`` the same
    data as a ``datasets.Dataset`` in the sample features, and ``rejects`` the rows a
    conversion with ``on_error="skip"`` left out.
    """

    def __init__(
        self,
        table: pa.Table,
        *,
        rejects: Sequence[Reject] = (),
        source: str = "table",
        validate: bool = True,
    ) -> None:
        """Wrap ``table``; with ``validate`` (default) check every row first."""
        self._table = checked_table(table, source) if validate else canonical(table)
        self.rejects: list[Reject] = list(rejects)

    @property
    def table(self) -> pa.Table:
        """The sample table (see :mod:`sdvm_hf.arrow.schema`)."""
        return self._table

    @property
    def extra_type(self) -> pa.DataType:
        """The Arrow type of the ``extra`` column."""
        return self._table.schema.field("extra").type

    @property
    def features(self) -> datasets.Features:
        """The ``datasets.Features`` of this table."""
        return sample_features(self.extra_type)

    @property
    def dataset(self) -> datasets.Dataset:
        """The samples as a ``datasets.Dataset`` in the sample features (shares the memory)."""
        import datasets
        from datasets.table import InMemoryTable

        info = datasets.DatasetInfo(features=self.features)
        return datasets.Dataset(InMemoryTable(self._table), info=info)

    def __len__(self) -> int:
        return int(self._table.num_rows)

    @overload
    def __getitem__(self, index: int) -> MultipleChoiceSample: ...
    @overload
    def __getitem__(self, index: slice) -> SampleSequence: ...
    def __getitem__(self, index: int | slice) -> MultipleChoiceSample | SampleSequence:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                part = self._table.slice(start, max(stop - start, 0))
            else:
                part = self._table.take(pa.array(range(start, stop, step), pa.int64()))
            return SampleSequence(part, validate=False)
        length = len(self)
        position = index + length if index < 0 else index
        if not 0 <= position < length:
            raise IndexError(f"sample index {index} out of range for {length} samples")
        return next(build_samples(self._table.slice(position, 1)))

    def __iter__(self) -> Iterator[MultipleChoiceSample]:
        for batch in self._table.to_batches(max_chunksize=_BATCH_ROWS):
            yield from build_samples(batch)

    def __repr__(self) -> str:
        return f"SampleSequence({len(self)} samples, {len(self.rejects)} rejects)"


def table_to_samples(table: pa.Table) -> list[MultipleChoiceSample]:
    """Every row of a sample table as a typed sample (checked first)."""
    return list(SampleSequence(table))
