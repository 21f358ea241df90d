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

The shaping a dataset needs is part of the description too (see :mod:`._columns`): a struct
field named by a dotted path (``choices="choices.text"``), a context joined from several
columns, a sentence with a blank that the choices fill, source columns kept in ``extra``
beside the fields made from them, and extra keys renamed.

This module is longer than ~300 lines because the table form is one vectorised pass whose
steps (columns, choices, answer, extra, problems) read best together.

>>> import pyarrow as pa
>>> arc = MultipleChoiceMapping(name="arc", context="question", choices=("A", "B", "C"),
...                             answer="key", answer_format="letter")
>>> arc.row({"question": "Which is a metal?", "A": "iron", "B": "wood", "C": "glass",
...          "key": "A", "id": "q1"}).extra
{'id': 'q1'}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import BLOCKS, TASK_TYPE, Style, reserved_key
from sdvm_hf.arrow._chunks import row_chunks
from sdvm_hf.arrow._found import Found, first_per_row
from sdvm_hf.arrow._rules import found, is_list
from sdvm_hf.arrow._validate import json_type_problem
from sdvm_hf.arrow.rejects import Rejects, json_line
from sdvm_hf.arrow.schema import JSON_EXTRA, normal_type, sample_schema
from sdvm_hf.arrow.sequence import SampleSequence, arrow_table
from sdvm_hf.convert._answers import ANSWER_FORMATS, AnswerFormat, answer_index, expected_answer
from sdvm_hf.convert._cells import choices_from_columns, choices_from_list, is_text, safe_cast
from sdvm_hf.convert._columns import fill_blank, flatten_paths, join_columns
from sdvm_hf.convert._encode import encode
from sdvm_hf.errors import ConversionError, LayoutError, PathPart
from sdvm_hf.samples import MultipleChoiceSample

if TYPE_CHECKING:
    import datasets

__all__ = [
    "REJECT_COLUMN",
    "Conversion",
    "Key",
    "MultipleChoiceMapping",
    "OnError",
    "Rows",
    "split_rejects",
]

OnError = Literal["raise", "skip"]

Rows = Sequence[int] | np.ndarray | str | None
"""Each input row's number in its source: numbers, or the name of a column holding them."""
Key = str | tuple[str, ...] | None
"""The column(s) naming each row in its source: ``"id"``, or ``("src_file", "src_row")``."""

_WITHHELD = "the labels of this split are withheld, so its rows cannot be samples"


@dataclass(frozen=True)
class Conversion:
    """What a conversion gives: the sample table and the rows it left out."""

    table: pa.Table
    """The sample table (see :mod:`sdvm_hf.arrow.schema`)."""
    rejects: Rejects
    """Every input row that is not in ``table``, with the reason and the original row."""


REJECT_COLUMN = "reject"
"""The column the batch form adds in skip mode: a rejected row's reject as JSON, else null."""


def split_rejects(data: pa.Table | datasets.Dataset) -> Conversion:
    """Samples and rejects from what the batch form gave in skip mode.

    ``data`` is the output of ``Dataset.map(mapping.batch, ..., fn_kwargs={"on_error":
    "skip"})`` (or of :meth:`MultipleChoiceMapping.tagged`): every input row, with the
    :data:`REJECT_COLUMN` set on the rows left out. Returns the checked sample table of the
    converted rows and the :class:`~sdvm_hf.arrow.rejects.Rejects` of the others.
    """
    table = arrow_table(data)
    if REJECT_COLUMN not in table.column_names:
        raise ValueError(f"no {REJECT_COLUMN!r} column: this is not the batch form's skip output")
    column = table.column(REJECT_COLUMN)
    samples = table.filter(pc.is_null(column)).drop_columns([REJECT_COLUMN])
    records = [json.loads(text) for text in column.drop_null().to_pylist()]
    rejects = Rejects.from_records(records)
    return Conversion(SampleSequence(samples, source="the batch form's output").table, rejects)


@dataclass(frozen=True)
class MultipleChoiceMapping:
    """Where a multiple-choice source keeps the context, the choices and the answer."""

    name: str
    """The dataset's name, used in error messages (``"hellaswag"``)."""
    context: str | tuple[str, ...]
    """The column holding the context (stem or question), or several text columns joined
    with :attr:`context_join` (Social IQa's ``("context", "question")``)."""
    choices: str | tuple[str, ...]
    """One list column, or several columns (``("A", "B", "C", "D")``), one per choice. A
    field of a struct column is named by its path: ``"choices.text"``."""
    answer: str
    """The column holding the correct answer (a struct field by its path, too)."""
    answer_format: AnswerFormat = "index"
    """``"index"`` (an int, or its exact spelling as text), ``"one_based"`` (``1`` or ``"1"``
    is the first choice), ``"letter"`` (``"A"`` is the first choice), ``"text"`` (the text of
    the correct choice), ``"label"`` (one of the row's :attr:`labels`) or ``"one_hot"`` (a
    list of 0/1 flags, one per choice, exactly one 1); see :mod:`._answers`."""
    labels: str | None = None
    """For ``answer_format="label"``: the list column of the choices' labels
    (``"choices.label"``), which the answer is matched against."""
    context_join: str = " "
    """The separator between the columns of a context built from several."""
    blank: str | None = None
    """A blank in the context column (Winogrande's ``"_"``): the context is the text before
    it (trailing whitespace removed) and each choice is the choice followed by the text
    after it; a row without exactly one blank, or with nothing before it, is a bad row."""
    keep: tuple[str, ...] = ()
    """Columns used for the core fields to keep in ``extra`` as well (the sources of a
    joined context or a filled blank, which the sample alone cannot give back)."""
    rename: Mapping[str, str] = field(default_factory=dict)
    """Extra keys to rename, ``{column: key}``: a kept column whose name is a reserved wire
    key (Social IQa's ``context``)."""
    style: Style = "qa"
    """``"qa"`` for complete questions, ``"continuation"`` for sentence stems."""
    unnest: str | None = None
    """A struct column whose fields are the row (MMLU's ``auxiliary_train``)."""
    drop: tuple[str, ...] = ()
    """Columns to leave out of ``extra`` (say so explicitly; nothing is dropped otherwise); a
    struct field by its path (``"choices.label"``)."""
    types: Mapping[str, pa.DataType] = field(default_factory=dict)
    """Arrow types to cast source columns to first, so every source of one dataset gives one
    schema (HellaSwag's ``ind`` is int32 on the Hub, int64 when read from JSON)."""
    extra_order: tuple[str, ...] = ()
    """Extra columns to put first, in this order; the rest follow in source order."""

    def __post_init__(self) -> None:
        if self.answer_format not in ANSWER_FORMATS:
            raise ValueError(
                f"{self.name}: answer_format must be one of {', '.join(ANSWER_FORMATS)}, "
                f"got {self.answer_format!r}"
            )
        if (self.answer_format == "label") != (self.labels is not None):
            raise ValueError(
                f"{self.name}: labels=... names the label column of answer_format='label', "
                f"and only of it (got answer_format={self.answer_format!r}, "
                f"labels={self.labels!r})"
            )
        if self.blank is not None and len(self.context_columns) != 1:
            raise ValueError(f"{self.name}: blank={self.blank!r} needs one context column")

    # -- the description --------------------------------------------------------------------

    def encode(self, sample: MultipleChoiceSample) -> dict[str, Any]:
        """The source row ``sample`` stands for, in this mapping's layout: the inverse half.

        ``extra`` goes back to its columns, the core fields to theirs in the answer's format;
        what the sample cannot give back is an :class:`~._encode.EncodeError`, never a guess.
        Values are plain Python; the export types them by the layout's published features.
        """
        return encode(self, sample)

    def describe(self) -> dict[str, Any]:
        """The description as JSON (Arrow types by name), as a sample file's record keeps it."""
        described: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "types":
                value = {column: str(kind) for column, kind in value.items()}
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            described[item.name] = value
        return described

    @property
    def context_columns(self) -> tuple[str, ...]:
        """The source columns the context comes from."""
        return (self.context,) if isinstance(self.context, str) else self.context

    @property
    def choice_columns(self) -> tuple[str, ...]:
        """The source columns the choices come from."""
        return (self.choices,) if isinstance(self.choices, str) else self.choices

    @property
    def consumed(self) -> tuple[str, ...]:
        """The source columns that become core fields (``extra`` also gets :attr:`keep`)."""
        labels = (self.labels,) if self.labels else ()
        return (*self.context_columns, *self.choice_columns, self.answer, *labels)

    @property
    def _context_label(self) -> str:
        return "+".join(self.context_columns)

    @property
    def _choices_label(self) -> str:
        columns = self.choice_columns
        return columns[0] if len(columns) == 1 else f"{columns[0]}..{columns[-1]}"

    def _where(self, split: str) -> str:
        return f"{self.name} {split}".strip()

    def extra_columns(self, names: Sequence[str], split: str = "") -> list[str]:
        """The source columns (after :attr:`unnest`) that go to ``extra``, in order."""
        used = set(self.consumed) - set(self.keep)
        rest = [n for n in names if n not in used and n not in self.drop]
        ordered = [n for n in self.extra_order if n in rest]
        ordered += [n for n in rest if n not in ordered]
        clash = reserved_key(self.rename.get(n, n) for n in ordered)
        if clash is not None:
            raise LayoutError(
                f"{self._where(split)}: column {clash!r} would go to extra, but it is a "
                f"reserved wire key; add it to the mapping's drop=(...) or "
                f"rename={{{clash!r}: ...}}"
            )
        return ordered

    def _flat_schema(self, schema: pa.Schema) -> pa.Schema:
        # the table form's own preparation, on no rows: the two cannot disagree
        return self._prepare(schema.empty_table())[0].schema

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
        fields = [
            pa.field(
                self.rename.get(name, name),
                normal_type(self.types.get(name, flat.field(name).type)),
            )
            for name in extra
        ]
        return sample_schema(pa.struct(fields))

    def features(
        self, source: pa.Schema | datasets.Features, on_error: OnError = "raise"
    ) -> datasets.Features:
        """The ``datasets.Features`` to pass as ``Dataset.map(..., features=...)``.

        With ``on_error="skip"`` they include the batch form's :data:`REJECT_COLUMN`.
        """
        import datasets

        schema = self.schema(source)
        if on_error == "skip":
            schema = schema.append(pa.field(REJECT_COLUMN, pa.string()))
        return datasets.Features.from_arrow_schema(schema)

    # -- the table form ---------------------------------------------------------------------

    def convert(
        self,
        data: pa.Table | pa.RecordBatch,
        *,
        split: str = "",
        on_error: OnError = "raise",
        first_row: int = 0,
        rows: Rows = None,
        key: Key = None,
    ) -> Conversion:
        """Convert a table or record batch; vectorised, no per-row Python on valid rows.

        Rows are numbered ``first_row``, ``first_row + 1``, ... or, with ``rows``, by the
        source's own row numbers (one per input row, e.g. the indices ``Dataset.map`` passes,
        or the name of a column holding them, such as ``"src_row"``).
        ``on_error="raise"`` stops at the first bad row with a :class:`ConversionError`
        naming the dataset, split, row, column, what was expected and what arrived (and the
        row's ``key`` columns, when given, in its note).
        ``on_error="skip"`` leaves bad rows out and returns each as a reject, so converted
        + rejected always equals the input. A cell that cannot be read (a label that does not
        fit an int64, an ``ind`` of ``"abc"`` for an int32) is a bad row like any other.
        """
        if on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        source = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
        numbers = self._numbers(source, first_row, rows)
        pieces = list(row_chunks(source))
        if len(pieces) > 1:  # under Arrow's 2 GiB of offsets, however many rows
            parts = [
                self.convert(
                    part,
                    split=split,
                    on_error=on_error,
                    rows=rows if isinstance(rows, str) else numbers[start:][: len(part)],
                    key=key,
                )
                for start, part in pieces
            ]
            tables = [part.table for part in parts]
            rejects = Rejects.join(part.rejects for part in parts)
            return Conversion(pa.concat_tables(tables), rejects)
        keys = self._key_columns(source, key, split)
        samples, found = self._samples(source, split)
        first = first_per_row(found)
        if not len(first):
            return Conversion(samples, Rejects())
        if on_error == "raise":
            problem = first[0]
            at = replace(problem, row=int(numbers[problem.row]))
            if keys:
                named = ", ".join(f"{k}={v!r}" for k, v in _key_of(keys, problem.row).items())
                at = replace(at, note=f"{at.note}; key {named}" if at.note else f"key {named}")
            raise ConversionError(self._where(split), at)
        keep = np.ones(source.num_rows, dtype=bool)
        keep[first.rows] = False
        rejects = Rejects(first.renumbered(numbers), (source, first.rows))
        return Conversion(samples.filter(pa.array(keep)), rejects)

    def table(
        self,
        data: pa.Table | pa.RecordBatch,
        *,
        split: str = "",
        first_row: int = 0,
        rows: Rows = None,
        key: Key = None,
    ) -> pa.Table:
        """The sample table of ``data``; a bad row raises :class:`ConversionError`."""
        return self.convert(data, split=split, first_row=first_row, rows=rows, key=key).table

    def tagged(
        self,
        data: pa.Table | pa.RecordBatch,
        *,
        split: str = "",
        first_row: int = 0,
        rows: Rows = None,
        key: Key = None,
    ) -> pa.Table:
        """Every input row in order, converted or rejected: the skip mode as data.

        The sample columns hold the converted rows (null on a rejected row) and
        :data:`REJECT_COLUMN` holds each rejected row's reject as JSON (row, path, expected,
        got, note, original), so ``datasets`` multiprocessing, Ray or Spark carry the rejects
        with the samples; :func:`split_rejects` takes them apart again.

        A batch is any slice of the source, so its positions are no row numbers: pass
        ``rows`` (the source's row numbers, or the column holding them) and ``key``, the
        column(s) that name a row in its source (``"id"``, or ``("src_file", "src_row")``
        added by a reader); each reject record then carries ``"key": {column: value}``, a
        stable key however the engine splits and orders the rows.

        >>> import pyarrow as pa
        >>> m = MultipleChoiceMapping(name="t", context="q", choices=("a", "b"), answer="k")
        >>> batch = pa.table({"q": ["x", "y"], "a": ["1", "2"], "b": ["3", "4"],
        ...                   "k": [0, 5], "id": ["q7", "q8"]})
        >>> import json; json.loads(m.tagged(batch, key="id")["reject"][1].as_py())["key"]
        {'id': 'q8'}
        """
        source = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
        numbers = self._numbers(source, first_row, rows)
        keys = self._key_columns(source, key, split)
        samples, found = self._samples(source, split)
        first = first_per_row(found)
        texts: list[str | None] = [None] * source.num_rows
        rejects = Rejects(first.renumbered(numbers), (source, first.rows))
        for position, record in zip(first.rows.tolist(), rejects.records(), strict=True):
            del record["column"]
            if keys:
                record["key"] = _key_of(keys, position)
            texts[position] = json_line(record)
        reject = pa.array(texts, pa.string())
        rejected = pc.is_valid(reject)
        columns = [
            pc.if_else(rejected, pa.nulls(len(reject), column.type), column)
            for column in samples.columns
        ]
        return pa.Table.from_arrays(
            [*columns, reject],
            schema=samples.schema.append(pa.field(REJECT_COLUMN, pa.string())),
        )

    def _numbers(self, source: pa.Table, first_row: int, rows: Rows) -> np.ndarray:
        n = source.num_rows
        if rows is None:
            return np.arange(first_row, first_row + n, dtype=np.int64)
        if isinstance(rows, str):
            if rows not in source.column_names:
                raise LayoutError(f"{self.name}: rows={rows!r} names no column of the batch")
            column = source.column(rows)
            if column.null_count or not pa.types.is_integer(column.type):
                raise LayoutError(
                    f"{self.name}: rows={rows!r} should be a column of row numbers (integers, "
                    f"no nulls), got {column.type} with {column.null_count} nulls"
                )
            return np.asarray(column.to_numpy(), dtype=np.int64)
        numbers = np.asarray(rows, dtype=np.int64)
        if len(numbers) != n:
            raise ValueError(f"rows names {len(numbers)} row numbers for {n} rows")
        return numbers

    def _key_columns(self, source: pa.Table, key: Key, split: str) -> dict[str, pa.ChunkedArray]:
        names = (key,) if isinstance(key, str) else (key or ())
        missing = [name for name in names if name not in source.column_names]
        if missing:
            raise LayoutError(
                f"{self._where(split)}: key column {missing[0]!r} is missing; columns seen: "
                f"{', '.join(source.column_names)}"
            )
        return {name: source.column(name) for name in names}

    def _samples(self, source: pa.Table, split: str) -> tuple[pa.Table, list[Found]]:
        """Every row as a sample row (bad ones may hold anything) and every problem found."""
        table, problems = self._prepare(source)
        labels = (self.labels,) if self.labels else ()
        needed = (*self.context_columns, *self.choice_columns, *labels)
        missing = [n for n in needed if n not in table.column_names]
        if missing:
            raise LayoutError(
                f"{self._where(split)}: column {missing[0]!r} is missing; "
                f"columns seen: {', '.join(table.column_names)}"
            )
        if self.answer not in table.column_names:
            raise LayoutError(
                f"{self._where(split)}: column {self.answer!r} is missing; columns seen: "
                f"{', '.join(table.column_names)} (a split whose labels are withheld has no "
                f"answers, so its rows cannot be samples)"
            )
        out_schema = self.schema(table.schema, split)
        for name in self.context_columns:
            if not is_text(table.schema.field(name).type):
                raise LayoutError(
                    f"{self._where(split)}: context column {name!r} should hold strings, "
                    f"got {table.schema.field(name).type}"
                )
        if len(self.context_columns) == 1:
            context: pa.Array | pa.ChunkedArray = table.column(self.context_columns[0])
        else:
            context = join_columns(table, self.context_columns, self.context_join)
        choices, choice_problems = self._choices(table)
        if self.blank is not None:
            context, choices, blanks = fill_blank(
                context.combine_chunks().cast(pa.string()), choices, self.blank
            )
            where = (self._context_label,)
            problems += [
                Found(np.array([row], np.int64), where, expected, [got], note)
                for row, expected, got, note in blanks
            ]
        answer, answer_problems = self._answer(table, choices, split)
        n = table.num_rows
        extra = self._extra(table, out_schema.field("extra").type)
        problems += [*choice_problems, answer_problems]
        problems += self._core_problems(context, choices, answer, extra)
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
        return samples, problems

    def _prepare(self, table: pa.Table) -> tuple[pa.Table, list[Found]]:
        """Unnest, then cast the :attr:`types` columns; a cell that does not fit is a problem."""
        if self.unnest and self.unnest in table.column_names:
            inner = table.column(self.unnest).combine_chunks()
            others = [n for n in table.column_names if n != self.unnest]
            arrays = [table.column(n) for n in others] + inner.flatten()
            table = pa.Table.from_arrays(arrays, names=others + [f.name for f in inner.type])
        table = flatten_paths(table, (*self.consumed, *self.keep, *self.drop))
        problems: list[Found] = []
        for name, dtype in self.types.items():
            if name in table.column_names and table.schema.field(name).type != dtype:
                index = table.schema.get_field_index(name)
                cast, bad = safe_cast(table.column(name).combine_chunks(), dtype, (name,))
                table = table.set_column(index, name, cast)
                problems += bad
        return table, problems

    def _choices(self, table: pa.Table) -> tuple[pa.Array, list[Found]]:
        columns = self.choice_columns
        if len(columns) == 1:
            column = table.column(columns[0]).combine_chunks()
            if is_list(column.type):
                return choices_from_list(column, columns[0])
            raise LayoutError(
                f"{self.name}: column {columns[0]!r} should hold a list of choices, "
                f"got {column.type}; name several columns as choices=(...) instead"
            )
        arrays = [table.column(name).combine_chunks() for name in columns]
        return choices_from_columns(arrays, columns)

    def _answer(self, table: pa.Table, choices: pa.Array, split: str) -> tuple[pa.Array, Found]:
        """The answer as an int64 index (null where unusable) and the problems found."""
        raw = table.column(self.answer).combine_chunks()
        counts = pc.list_value_length(choices)
        where = f"{self._where(split)}: answer column {self.answer!r}"
        labels = table.column(self.labels).combine_chunks() if self.labels else None
        index = answer_index(raw, choices, self.answer_format, where, labels)
        out_of_range = pc.or_kleene(pc.less(index, 0), pc.greater_equal(index, counts))
        bad = pc.and_(
            pc.fill_null(pc.greater_equal(counts, 2), False), pc.fill_null(out_of_range, True)
        )
        rows = np.asarray(pc.indices_nonzero(bad), dtype=np.int64)
        values = raw.take(pa.array(rows)).to_pylist()
        sizes = counts.take(pa.array(rows)).to_pylist()
        if labels is None:
            described = {
                size: expected_answer(raw.type, size, self.answer_format) for size in set(sizes)
            }
            expected = [described[size] for size in sizes]
        else:
            row_labels = labels.take(pa.array(rows)).to_pylist()
            expected = [
                expected_answer(raw.type, size, self.answer_format, these)
                for size, these in zip(sizes, row_labels, strict=True)
            ]
        withheld = [value is None or value in ("", "-1") or value == -1 for value in values]
        notes = [_WITHHELD if flag else "" for flag in withheld]
        problems = Found.at(raw, rows, (self.answer,), expected, notes)
        return pc.if_else(bad, pa.scalar(None, pa.int64()), index), problems

    def _core_problems(
        self,
        context: pa.Array | pa.ChunkedArray,
        choices: pa.Array,
        answer: pa.Array,
        extra: pa.Array,
    ) -> list[Found]:
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
        # an extra that is not a struct is the constant "{}" (no column left for it): nothing
        # to check, and checking would parse it row by row
        struct = pa.types.is_struct(extra.type)
        checked = ("context", "choices", "extra") if struct else ("context", "choices")
        groups = found(probe, columns=checked)
        return [group.with_path(self._source_path(group.path)) for group in groups]

    def _source_path(self, path: tuple[PathPart, ...]) -> tuple[PathPart, ...]:
        """A sample column's path as the source's: ``extra.ind`` is the column ``ind``."""
        column, *inside = path
        if column == "context":
            return (self._context_label, *inside)
        if column == "choices":
            return (self._choices_label, *inside)
        return tuple(inside) or path

    def _extra(self, table: pa.Table, extra_type: pa.DataType) -> pa.Array:
        n = table.num_rows
        if not pa.types.is_struct(extra_type):
            return _constant("{}", n)
        names = self.extra_columns(table.column_names)
        arrays = [
            table.column(name).combine_chunks().cast(field.type)
            for name, field in zip(names, extra_type, strict=True)
        ]
        return pa.StructArray.from_arrays(arrays, fields=list(extra_type))

    # -- the batch and row forms ------------------------------------------------------------

    def batch(
        self,
        batch: Mapping[str, Sequence[Any]],
        indices: Sequence[int] | None = None,
        *,
        split: str = "",
        on_error: OnError = "raise",
        key: Key = None,
    ) -> dict[str, list[Any]] | pa.Table:
        """The batch form, for ``Dataset.map(mapping.batch, batched=True, with_indices=True)``.

        Pass ``features=mapping.features(ds.features, on_error=...)`` and
        ``remove_columns=ds.column_names`` to ``map`` so the mapped dataset has the sample
        schema; ``with_indices=True`` is required inside ``map``, so that errors and rejects
        name the dataset's own rows under ``num_proc`` and after ``shuffle``/``filter``.

        ``on_error="raise"`` (default) stops at the first bad row with a
        :class:`ConversionError`. ``on_error="skip"`` returns every row, the rejected ones
        with :data:`REJECT_COLUMN` set (see :meth:`tagged`); pass the mapped dataset to
        :func:`split_rejects` for the samples and the rejects. The rejects travel inside the
        dataset, so multiprocessing and ``datasets``' cache never lose them. ``key="id"``
        puts each rejected row's ``id`` in its reject record too (see :meth:`tagged`).

        Inside ``Dataset.map`` the batch arrives as a lazy view of an Arrow table; the form
        converts that table and returns an Arrow table (which ``map`` accepts), so no value
        makes the trip through Python. Called on a plain dict of lists, it returns one.
        """
        arrow = getattr(batch, "pa_table", None)  # datasets' LazyBatch keeps its Arrow table
        if isinstance(arrow, pa.Table) and indices is None:
            raise ValueError(
                "pass with_indices=True to Dataset.map, so that errors and rejects name the "
                "dataset's own rows"
            )
        table = arrow if isinstance(arrow, pa.Table) else pa.Table.from_pydict(dict(batch))
        if on_error == "skip":
            result = self.tagged(table, split=split, rows=indices, key=key)
        elif on_error == "raise":
            result = self.table(table, split=split, rows=indices, key=key)
        else:
            raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
        return result if isinstance(arrow, pa.Table) else dict(result.to_pydict())

    def __call__(
        self,
        batch: pa.Table | pa.RecordBatch,
        *,
        split: str = "",
        on_error: OnError = "raise",
        rows: Rows = None,
        key: Key = None,
    ) -> pa.Table:
        """The mapping as an Arrow batch function: the table form, or the tagged form.

        ``on_error="raise"`` gives :meth:`table`, ``on_error="skip"`` :meth:`tagged`. For
        Ray Data: ``ds.map_batches(mapping, batch_format="pyarrow", fn_kwargs={"split":
        "validation", "on_error": "skip", "rows": "src_row", "key": ("src_file",
        "src_row")})``; :mod:`sdvm_hf.engines` has a reader that adds those columns.
        """
        if on_error == "skip":
            return self.tagged(batch, split=split, rows=rows, key=key)
        if on_error == "raise":
            return self.table(batch, split=split, rows=rows, key=key)
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")

    def row(
        self, record: Mapping[str, Any], *, split: str = "", row: int = 0
    ) -> MultipleChoiceSample:
        """The row form: one source record (a dict) to a typed sample (``row``: its number)."""
        table = pa.Table.from_pylist([dict(record)])
        converted = self.convert(table, split=split, first_row=row).table
        return SampleSequence(converted, validate=False)[0]


def _key_of(keys: Mapping[str, pa.ChunkedArray], position: int) -> dict[str, Any]:
    return {name: column[position].as_py() for name, column in keys.items()}


def _constant(value: str, n: int) -> pa.Array:
    return pa.nulls(n, pa.string()).fill_null(value)
