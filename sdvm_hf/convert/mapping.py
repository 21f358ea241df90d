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

This module is the description and its forms; the vectorised pass is :mod:`._table`, and
one run of it (row numbers, the 2 GiB chunking, raise, skip or tag) is :mod:`._run`.

>>> import pyarrow as pa
>>> arc = MultipleChoiceMapping(dataset="arc", context="question", choices=("A", "B", "C"),
...                             answer="key", answer_format="letter")
>>> arc.row({"question": "Which is a metal?", "A": "iron", "B": "wood", "C": "glass",
...          "key": "A", "id": "q1"}).extra
{'id': 'q1'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sdvm_hf._wire import Style
from sdvm_hf.arrow import row_chunks
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.convert import _run, _table
from sdvm_hf.convert._answers import ANSWER_FORMATS, AnswerFormat
from sdvm_hf.convert._run import REJECT_COLUMN, Conversion, Key, OnError, Rows, split_rejects
from sdvm_hf.errors import InputError

if TYPE_CHECKING:
    import datasets

    from sdvm_hf.samples import MultipleChoiceSample

__all__ = [
    "REJECT_COLUMN",
    "Conversion",
    "Key",
    "MultipleChoiceMapping",
    "OnError",
    "Rows",
    "split_rejects",
]


@dataclass(frozen=True)
class MultipleChoiceMapping:
    """Where a multiple-choice source keeps the context, the choices and the answer."""

    dataset: str
    """The dataset this mapping reads, as messages name it (``"hellaswag"``)."""
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
    split: str = field(default="", compare=False)
    """The split whose rows this mapping converts, as messages name it (``"validation"``):
    bound once with :meth:`for_split` (or the ``split=`` of a form), read by every pass.
    Not part of the description: one mapping serves every split."""

    def __post_init__(self) -> None:
        if self.answer_format not in ANSWER_FORMATS:
            raise InputError(
                f"{self.dataset}: answer_format must be one of {', '.join(ANSWER_FORMATS)}, "
                f"got {self.answer_format!r}"
            )
        if (self.answer_format == "label") != (self.labels is not None):
            raise InputError(
                f"{self.dataset}: labels=... names the label column of answer_format='label', "
                f"and only of it (got answer_format={self.answer_format!r}, "
                f"labels={self.labels!r})"
            )
        if self.blank is not None and len(self.context_columns) != 1:
            raise InputError(f"{self.dataset}: blank={self.blank!r} needs one context column")

    # -- the description --------------------------------------------------------------------

    def encode(self, sample: MultipleChoiceSample) -> dict[str, Any]:
        """The source row ``sample`` stands for, in this mapping's layout: the inverse half.

        ``extra`` goes back to its columns, the core fields to theirs in the answer's format;
        what the sample cannot give back is an :class:`~._encode.EncodeError`, never a guess.
        Values are plain Python; the export types them by the layout's published features.
        """
        from sdvm_hf.convert.inverse import published_row  # the export's half, imported by it

        return published_row(self, sample)

    def describe(self) -> dict[str, Any]:
        """The description as JSON (Arrow types by name), as a sample file's record keeps it."""
        described: dict[str, Any] = {}
        for item in fields(self):
            if item.name == "split":
                continue
            value = getattr(self, item.name)
            if item.name == "types":
                value = {column: str(kind) for column, kind in value.items()}
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            described[item.name] = value
        return described

    @classmethod
    def from_description(cls, described: Mapping[str, Any]) -> MultipleChoiceMapping:
        """The mapping :meth:`describe` described (as a sample file's record keeps it).

        >>> mapping = MultipleChoiceMapping(dataset="mine", context="q", choices=("a", "b"),
        ...                                 answer="label", style="qa")
        >>> MultipleChoiceMapping.from_description(mapping.describe()) == mapping
        True
        """
        fields_ = dict(described)
        if "name" in fields_:  # a record written before the label was named for what it is
            fields_["dataset"] = fields_.pop("name")
        fields_["types"] = {k: pa.type_for_alias(v) for k, v in fields_.get("types", {}).items()}
        for key in ("keep", "drop", "extra_order"):
            fields_[key] = tuple(fields_.get(key) or ())
        for key in ("context", "choices"):
            if isinstance(fields_.get(key), list):
                fields_[key] = tuple(fields_[key])
        return cls(**fields_)

    def for_split(self, split: str | None) -> MultipleChoiceMapping:
        """The same mapping, its messages naming ``split`` (``None``: as it is)."""
        if split is not None and not isinstance(split, str):
            raise TypeError(f"{self.dataset}: split should be a string, got {split!r}")
        return self if split is None or split == self.split else replace(self, split=split)

    @property
    def where(self) -> str:
        """How its messages begin: the dataset and the split (``"hellaswag validation"``)."""
        return f"{self.dataset} {self.split}".strip()

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

    def extra_columns(self, names: Sequence[str]) -> list[str]:
        """The source columns (after :attr:`unnest`) that go to ``extra``, in order."""
        return _table.extra_columns(self, names)

    def schema(self, source: pa.Schema | datasets.Features) -> pa.Schema:
        """The sample schema this mapping gives for a source of schema ``source``."""
        if not isinstance(source, pa.Schema):
            source = source.arrow_schema
        return _table.sample_schema_of(self, source)

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
        split: str | None = None,
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
        return _run.convert(
            self.for_split(split),
            data,
            on_error=on_error,
            first_row=first_row,
            rows=rows,
            key=key,
            chunks=row_chunks,  # looked up here, so a test can watch the cuts
        )

    def table(
        self,
        data: pa.Table | pa.RecordBatch,
        *,
        split: str | None = None,
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
        split: str | None = None,
        first_row: int = 0,
        rows: Rows = None,
        key: Key = None,
    ) -> pa.Table:
        """Every input row in order, converted or rejected: the skip mode as data.

        The sample columns hold the converted rows (null on a rejected row) and
        :data:`REJECT_COLUMN` holds each rejected row's reject as JSON (row, kind, path,
        expected, got, note, original), so ``datasets`` multiprocessing, Ray or Spark carry
        the rejects with the samples; :func:`split_rejects` takes them apart again.

        A batch is any slice of the source, so its positions are no row numbers: pass
        ``rows`` (the source's row numbers, or the column holding them) and ``key``, the
        column(s) that name a row in its source (``"id"``, or ``("src_file", "src_row")``
        added by a reader); each reject record then carries ``"key": {column: value}``, a
        stable key however the engine splits and orders the rows.

        >>> import pyarrow as pa
        >>> m = MultipleChoiceMapping(dataset="t", context="q", choices=("a", "b"), answer="k")
        >>> batch = pa.table({"q": ["x", "y"], "a": ["1", "2"], "b": ["3", "4"],
        ...                   "k": [0, 5], "id": ["q7", "q8"]})
        >>> import json; json.loads(m.tagged(batch, key="id")["reject"][1].as_py())["key"]
        {'id': 'q8'}
        """
        return _run.tagged(
            self.for_split(split), data, first_row=first_row, rows=rows, key=key, chunks=row_chunks
        )

    # -- the batch and row forms ------------------------------------------------------------

    def batch(
        self,
        batch: Mapping[str, Sequence[Any]],
        indices: Sequence[int] | None = None,
        *,
        split: str | None = None,
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
            raise InputError(
                "pass with_indices=True to Dataset.map, so that errors and rejects name the "
                "dataset's own rows"
            )
        _run.check_on_error(on_error)
        table = arrow if isinstance(arrow, pa.Table) else pa.Table.from_pydict(dict(batch))
        if on_error == "skip":
            result = self.tagged(table, split=split, rows=indices, key=key)
        else:
            result = self.table(table, split=split, rows=indices, key=key)
        return result if isinstance(arrow, pa.Table) else dict(result.to_pydict())

    def __call__(
        self,
        batch: pa.Table | pa.RecordBatch,
        *,
        split: str | None = None,
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
        _run.check_on_error(on_error)
        if on_error == "skip":
            return self.tagged(batch, split=split, rows=rows, key=key)
        return self.table(batch, split=split, rows=rows, key=key)

    def row(
        self, record: Mapping[str, Any], *, split: str | None = None, row: int = 0
    ) -> MultipleChoiceSample:
        """The row form: one source record (a dict) to a typed sample (``row``: its number)."""
        table = pa.Table.from_pylist([dict(record)])
        converted = self.convert(table, split=split, first_row=row).table
        return SampleSequence(converted, validate=False)[0]
