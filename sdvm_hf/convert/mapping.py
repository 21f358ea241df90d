"""One generic multiple-choice mapping, in three forms that always agree.

A :class:`MultipleChoiceMapping` names where a source keeps the context, the choices and the
answer; every other column travels in ``extra`` with its Arrow type. From that one
description come:

- the **table form** (:meth:`~MultipleChoiceMapping.table`, :meth:`~MultipleChoiceMapping.convert`):
  a ``pyarrow`` Table or RecordBatch to a sample table, vectorised, a pure function of the
  batch (so it runs in ``datasets`` multiprocessing, Ray ``map_batches`` or Spark
  ``mapInArrow``);
- the **batch form** (:meth:`~MultipleChoiceMapping.batch`) for
  ``Dataset.map(..., batched=True)``, with :meth:`~MultipleChoiceMapping.features` for its
  ``features=`` argument;
- the **row form** (:meth:`~MultipleChoiceMapping.row`): a dict to a typed sample.

The batch and row forms run the table form, so the three cannot disagree.

>>> import pyarrow as pa
>>> arc = MultipleChoiceMapping(name="arc", context="question", choices=("A", "B", "C"),
...                             answer="key", answer_format="letter")
>>> arc.row({"question": "Which is a metal?", "A": "iron", "B": "wood", "C": "glass",
...          "key": "A", "id": "q1"}).extra
{'id': 'q1'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import BLOCKS, TASK_TYPE, Style, reserved_key, shorten
from sdvm_hf.arrow._validate import find_problems, is_list, json_type_problem
from sdvm_hf.arrow.schema import JSON_EXTRA, sample_schema
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert._answers import AnswerFormat, answer_index, expected_answer
from sdvm_hf.errors import ConversionError, LayoutError, PathPart, Problem, Reject
from sdvm_hf.samples import MultipleChoiceSample

if TYPE_CHECKING:
    import datasets

OnError = Literal["raise", "skip"]

_WITHHELD = "the labels of this split are withheld, so its rows cannot be samples"


@dataclass(frozen=True)
class Conversion:
    """What a conversion gives: the sample table and the rows it left out."""

    table: pa.Table
    """The sample table (see :mod:`sdvm_hf.arrow.schema`)."""
    rejects: list[Reject]
    """Every input row that is not in ``table``, with the reason."""


@dataclass(frozen=True)
class MultipleChoiceMapping:
    """Where a multiple-choice source keeps the context, the choices and the answer."""

    name: str
    """The dataset's name, used in error messages (``"hellaswag"``)."""
    context: str
    """The column holding the context (stem or question)."""
    choices: str | tuple[str, ...]
    """One list column, or several columns (``("A", "B", "C", "D")``), one per choice."""
    answer: str
    """The column holding the correct answer."""
    answer_format: AnswerFormat = "index"
    """``"index"`` (an int, or a string of digits), ``"letter"`` (``"A"`` is the first
    choice) or ``"text"`` (the text of the correct choice)."""
    style: Style = "qa"
    """``"qa"`` for complete questions, ``"continuation"`` for sentence stems."""
    unnest: str | None = None
    """A struct column whose fields are the row (MMLU's ``auxiliary_train``)."""
    drop: tuple[str, ...] = ()
    """Columns to leave out of ``extra`` (say so explicitly; nothing is dropped otherwise)."""
    types: Mapping[str, pa.DataType] = field(default_factory=dict)
    """Arrow types to cast source columns to first, so every source of one dataset gives one
    schema (HellaSwag's ``ind`` is int32 on the Hub, int64 when read from JSON)."""
    extra_order: tuple[str, ...] = ()
    """Extra columns to put first, in this order; the rest follow in source order."""

    # -- the description --------------------------------------------------------------------

    @property
    def choice_columns(self) -> tuple[str, ...]:
        """The source columns the choices come from."""
        return (self.choices,) if isinstance(self.choices, str) else self.choices

    @property
    def consumed(self) -> tuple[str, ...]:
        """The source columns that become core fields rather than ``extra``."""
        return (self.context, *self.choice_columns, self.answer)

    @property
    def _choices_label(self) -> str:
        columns = self.choice_columns
        return columns[0] if len(columns) == 1 else f"{columns[0]}..{columns[-1]}"

    def _where(self, split: str) -> str:
        return f"{self.name} {split}".strip()

    def extra_columns(self, names: Sequence[str], split: str = "") -> list[str]:
        """The source columns (after :attr:`unnest`) that go to ``extra``, in order."""
        rest = [n for n in names if n not in self.consumed and n not in self.drop]
        ordered = [n for n in self.extra_order if n in rest]
        ordered += [n for n in rest if n not in ordered]
        clash = reserved_key(ordered)
        if clash is not None:
            raise LayoutError(
                f"{self._where(split)}: column {clash!r} would go to extra, but it is a "
                f"reserved wire key; add it to the mapping's drop=(...) or rename it"
            )
        return ordered

    def _flat_schema(self, schema: pa.Schema) -> pa.Schema:
        if self.unnest and self.unnest in schema.names:
            inner = schema.field(self.unnest).type
            fields = [f for f in schema if f.name != self.unnest] + list(inner)
            schema = pa.schema(fields)
        return pa.schema([pa.field(f.name, self.types.get(f.name, f.type)) for f in schema])

    def schema(self, source: pa.Schema | datasets.Features, split: str = "") -> pa.Schema:
        """The sample schema this mapping gives for a source of schema ``source``."""
        if not isinstance(source, pa.Schema):
            source = source.arrow_schema
        flat = self._flat_schema(source)
        extra = self.extra_columns(flat.names, split)
        if not extra:
            return sample_schema(JSON_EXTRA)
        for name in extra:
            problem = json_type_problem(flat.field(name).type, name)
            if problem:
                raise LayoutError(f"{self._where(split)}: column {problem}; drop it or cast it")
        return sample_schema(pa.struct([flat.field(name) for name in extra]))

    def features(self, source: pa.Schema | datasets.Features) -> datasets.Features:
        """The ``datasets.Features`` to pass as ``Dataset.map(..., features=...)``."""
        import datasets

        return datasets.Features.from_arrow_schema(self.schema(source))

    # -- the table form ---------------------------------------------------------------------

    def convert(
        self,
        data: pa.Table | pa.RecordBatch,
        *,
        split: str = "",
        on_error: OnError = "raise",
        first_row: int = 0,
    ) -> Conversion:
        """Convert a table or record batch; vectorised, no per-row Python on valid rows.

        ``on_error="raise"`` stops at the first bad row with a :class:`ConversionError`
        naming the dataset, split, row (``first_row`` + position), column, what was
        expected and what arrived. ``on_error="skip"`` leaves bad rows out and returns each
        as a :class:`Reject`, so converted + rejected always equals the input.
        """
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        source = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
        table = self._flatten(source)
        out_schema = self.schema(table.schema, split)
        missing = [n for n in (self.context, *self.choice_columns) if n not in table.column_names]
        if missing:
            raise LayoutError(
                f"{self._where(split)}: column {missing[0]!r} is missing; "
                f"columns seen: {', '.join(table.column_names)}"
            )
        context = table.column(self.context)
        if not _is_text(context.type):
            raise LayoutError(
                f"{self._where(split)}: context column {self.context!r} should hold strings, "
                f"got {context.type}"
            )
        choices = self._choices(table)
        answer, answer_problems = self._answer(table, choices)
        n = table.num_rows
        extra = self._extra(table, out_schema.field("extra").type)
        problems = answer_problems + self._core_problems(context, choices, answer, extra)
        samples = pa.Table.from_arrays(
            [
                _constant(TASK_TYPE, n),
                _constant(self.style, n),
                context.cast(pa.string()),
                choices,
                answer,
                extra,
                *(pa.nulls(n, pa.string()) for _ in BLOCKS),
            ],
            schema=out_schema,
        )
        if not problems:
            return Conversion(samples, [])
        problems.sort(key=lambda p: p.row)
        if on_error == "raise":
            first = problems[0]
            raise ConversionError(self._where(split), replace(first, row=first.row + first_row))
        first_by_row: dict[int, Problem] = {}
        for problem in problems:
            first_by_row.setdefault(problem.row, problem)
        rows = sorted(first_by_row)
        rejects = [
            Reject(
                row + first_row,
                p.path,
                p.expected,
                p.got,
                p.note,
                original=source.slice(row, 1).to_pylist()[0],
            )
            for row, p in ((row, first_by_row[row]) for row in rows)
        ]
        keep = np.ones(n, dtype=bool)
        keep[rows] = False
        return Conversion(samples.filter(pa.array(keep)), rejects)

    def table(
        self, data: pa.Table | pa.RecordBatch, *, split: str = "", first_row: int = 0
    ) -> pa.Table:
        """The sample table of ``data``; a bad row raises :class:`ConversionError`."""
        return self.convert(data, split=split, first_row=first_row).table

    def _flatten(self, table: pa.Table) -> pa.Table:
        if self.unnest and self.unnest in table.column_names:
            inner = table.column(self.unnest).combine_chunks()
            others = [n for n in table.column_names if n != self.unnest]
            arrays = [table.column(n) for n in others] + inner.flatten()
            table = pa.Table.from_arrays(arrays, names=others + [f.name for f in inner.type])
        for name, dtype in self.types.items():
            if name in table.column_names and table.schema.field(name).type != dtype:
                index = table.schema.get_field_index(name)
                table = table.set_column(index, name, table.column(name).cast(dtype))
        return table

    def _choices(self, table: pa.Table) -> pa.Array:
        columns = self.choice_columns
        if len(columns) == 1:
            column = table.column(columns[0]).combine_chunks()
            if is_list(column.type):
                return column.cast(pa.list_(pa.string()))
            raise LayoutError(
                f"{self.name}: column {columns[0]!r} should hold a list of choices, "
                f"got {column.type}; name several columns as choices=(...) instead"
            )
        n, k = table.num_rows, len(columns)
        for name in columns:
            dtype = table.schema.field(name).type
            if not (_is_text(dtype) or pa.types.is_integer(dtype)):
                raise LayoutError(
                    f"{self.name}: choice column {name!r} should hold strings (or integers, "
                    f"written as text), got {dtype}"
                )
        values = pa.concat_arrays(
            [table.column(c).combine_chunks().cast(pa.string()) for c in columns]
        )
        # row-major order: row i's choices are values[i], values[n + i], ..., values[(k-1)n + i]
        order = (np.arange(n)[:, None] + np.arange(k)[None, :] * n).ravel()
        offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
        return pa.ListArray.from_arrays(offsets, values.take(pa.array(order)))

    def _answer(self, table: pa.Table, choices: pa.Array) -> tuple[pa.Array, list[Problem]]:
        """The answer as an int64 index (null where unusable) and the problems found."""
        n = table.num_rows
        counts = pc.list_value_length(choices)
        if self.answer not in table.column_names:
            missing = [
                Problem(r, (self.answer,), "a label", "no such column", _WITHHELD) for r in range(n)
            ]
            return pa.nulls(n, pa.int64()), missing
        raw = table.column(self.answer).combine_chunks()
        index = answer_index(
            raw, choices, self.answer_format, f"{self.name}: answer column {self.answer!r}"
        )
        out_of_range = pc.or_kleene(pc.less(index, 0), pc.greater_equal(index, counts))
        bad = pc.and_(
            pc.fill_null(pc.greater_equal(counts, 2), False), pc.fill_null(out_of_range, True)
        )
        problems = []
        for row in pc.indices_nonzero(bad).to_pylist():
            got = raw[row].as_py()
            expected = expected_answer(raw.type, counts[row].as_py(), self.answer_format)
            note = _WITHHELD if got is None or got == "" else ""
            problems.append(Problem(row, (self.answer,), expected, shorten(repr(got)), note))
        return pc.if_else(bad, pa.scalar(None, pa.int64()), index), problems

    def _core_problems(
        self, context: pa.ChunkedArray, choices: pa.Array, answer: pa.Array, extra: pa.Array
    ) -> list[Problem]:
        """Context, choice and extra problems, named by their source columns."""
        n = len(choices)
        probe = pa.table(
            {
                "task_type": _constant(TASK_TYPE, n),
                "style": _constant(self.style, n),
                "context": context.cast(pa.string()),
                "choices": choices,
                "answer_index": answer,
                "extra": extra,
                **{key: pa.nulls(n, pa.string()) for key in BLOCKS},
            }
        )
        found = find_problems(probe, columns=("context", "choices", "extra"))
        return [replace(p, path=self._source_path(p.path)) for p in found]

    def _source_path(self, path: tuple[PathPart, ...]) -> tuple[PathPart, ...]:
        """A sample column's path as the source's: ``extra.ind`` is the column ``ind``."""
        column, *inside = path
        if column == "context":
            return (self.context, *inside)
        if column == "choices":
            return (self._choices_label, *inside)
        return tuple(inside) or path

    def _extra(self, table: pa.Table, extra_type: pa.DataType) -> pa.Array:
        n = table.num_rows
        if not pa.types.is_struct(extra_type):
            return _constant("{}", n)
        arrays = [table.column(f.name).combine_chunks() for f in extra_type]
        return pa.StructArray.from_arrays(arrays, fields=list(extra_type))

    # -- the batch and row forms ------------------------------------------------------------

    def batch(
        self,
        batch: Mapping[str, Sequence[Any]],
        indices: Sequence[int] | None = None,
        *,
        split: str = "",
        on_error: OnError = "raise",
        rejects: list[Reject] | None = None,
    ) -> dict[str, list[Any]] | pa.Table:
        """The batch form, for ``Dataset.map(mapping.batch, batched=True, ...)``.

        Pass ``features=mapping.features(ds.features)`` and ``remove_columns=ds.column_names``
        to ``map`` so the mapped dataset has the sample schema; with ``with_indices=True``
        errors name the dataset's own row numbers. With ``on_error="skip"``, pass a list as
        ``rejects`` (``fn_kwargs={"rejects": ...}``) to collect the rows left out: nothing is
        dropped unreported.

        Inside ``Dataset.map`` the batch arrives as a lazy view of an Arrow table; the form
        converts that table and returns the sample table (which ``map`` accepts), so no value
        makes the trip through Python. Called on a plain dict of lists, it returns one.
        """
        if on_error == "skip" and rejects is None:
            raise ValueError("on_error='skip' needs a rejects list to report the rows left out")
        arrow = getattr(batch, "pa_table", None)  # datasets' LazyBatch keeps its Arrow table
        table = arrow if isinstance(arrow, pa.Table) else pa.Table.from_pydict(dict(batch))
        offset = indices[0] if indices else 0
        if indices and list(indices) != list(range(offset, offset + len(indices))):
            raise ValueError("the batch form expects consecutive indices from Dataset.map")
        result = self.convert(table, split=split, on_error=on_error, first_row=offset)
        if rejects is not None:
            rejects.extend(result.rejects)
        return result.table if isinstance(arrow, pa.Table) else dict(result.table.to_pydict())

    def row(
        self, record: Mapping[str, Any], *, split: str = "", row: int = 0
    ) -> MultipleChoiceSample:
        """The row form: one source record (a dict) to a typed sample (``row``: its number)."""
        table = pa.Table.from_pylist([dict(record)])
        converted = self.convert(table, split=split, first_row=row).table
        return SampleSequence(converted, validate=False)[0]


def _is_text(dtype: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_null(dtype)
    )


def _constant(value: str, n: int) -> pa.Array:
    return pa.nulls(n, pa.string()).fill_null(value)
