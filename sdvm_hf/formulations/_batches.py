"""Rendering a batch of published rows at a time, through a rule's table form.

Where a rule has a table builder (:mod:`._columnar`) and the samples are held as tables,
:func:`table_requests` renders each published batch with it: the same requests, in the same
order, as the row builder renders one row at a time (each ``slow`` row, and each batch the
table form cannot say, goes through the row builder). What the unconditional requests need
waits in a temporary file as Arrow record batches (the columns the table builder made, with
the rows the row builder rendered pickled beside them), so memory stays flat.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sdvm_hf.formulations._columnar import ClozeColumns, TableBuild
from sdvm_hf.formulations._plan import Plan
from sdvm_hf.formulations._request import UNCONDITIONAL_OFFSET, Request
from sdvm_hf.formulations._shapes import Rendered
from sdvm_hf.formulations._source import Source

__all__ = ["table_documents", "table_requests"]

_Item = tuple[dict[str, Any], list[str], str, Any, Any]
"""A document rendered by the row builder, as its unconditional requests need it: its doc,
continuations, task, native id and label."""

_COLUMNS = ("query", "choices", "gold", "native_id")


def table_requests(source: Source, plan: Plan, build: TableBuild) -> Iterator[Request]:
    """Every request of ``source``: the conditional ones a batch at a time, then the rest.

    One generator, its loops inline: each request is yielded once, through no other.
    """
    task, prefix, first = plan.task_name, plan.fixed_prefix, 0
    with tempfile.TemporaryDirectory(prefix="sdvm_hf-render-") as folder:
        path = Path(folder) / "unconditional.arrows"
        with open(path, "wb") as spool:
            for published, fixed in source.published_batches():
                count = len(fixed) if published is None else published.num_rows
                columns, slow = _built(build, source.config, published, fixed, count)
                docs, queries, choices, golds, natives = _lists(columns, count)
                rows, items = _Rows(published, fixed), {}
                doc_id = first
                for position, doc in enumerate(docs):
                    if position in slow:
                        rendered = plan.render(rows.row(position), doc_id, source)
                        items[position] = _item(rendered, task)
                        pairs, native, gold = rendered.pairs, rendered.native_id, rendered.label
                        own = rendered.task or task
                        for idx, (context, continuation) in enumerate(pairs):
                            yield Request(
                                rendered.doc, context, continuation, idx, own, doc_id, native, gold
                            )
                    else:
                        context, native, gold = (
                            prefix + queries[position],
                            natives[position],
                            golds[position],
                        )
                        for idx, choice in enumerate(choices[position]):
                            yield Request(
                                doc, context, " " + choice, idx, task, doc_id, native, gold
                            )
                    doc_id += 1
                if plan.unconditional:
                    _spool(spool, first, len(docs), columns, items)
                first = doc_id
        if not plan.unconditional:
            return
        for first, docs, choices, golds, natives, items in _spooled(path):
            doc_id = first + UNCONDITIONAL_OFFSET
            for position, doc in enumerate(docs):
                item = items.get(position) if items else None
                if item is None:
                    native, gold = natives[position], golds[position]
                    for idx, choice in enumerate(choices[position]):
                        yield Request(doc, "Answer:", " " + choice, idx, task, doc_id, native, gold)
                else:
                    doc, continuations, own, native, label = item
                    for idx, continuation in enumerate(continuations):
                        yield Request(doc, "Answer:", continuation, idx, own, doc_id, native, label)
                doc_id += 1


def table_documents(source: Source, plan: Plan, build: TableBuild) -> Iterator[Rendered]:
    """Each row's document as the row builder renders it, a batch at a time by the table form."""
    prefix, first = plan.fixed_prefix, 0
    for published, fixed in source.published_batches():
        count = len(fixed) if published is None else published.num_rows
        columns, slow = _built(build, source.config, published, fixed, count)
        rows = _Rows(published, fixed)
        lists = zip(*_lists(columns, count), strict=True)
        for position, (doc, query, texts, gold, native) in enumerate(lists):
            if position in slow:
                yield plan.render(rows.row(position), first + position, source)
                continue
            context = prefix + query
            yield Rendered(doc, [(context, " " + text) for text in texts], gold, native)
        first += count


def _built(
    build: TableBuild,
    config: str | None,
    published: pa.Table | None,
    fixed: dict[int, dict[str, Any]],
    count: int,
) -> tuple[ClozeColumns | None, set[int]]:
    """A batch's columns (``None``: none) and the rows the row builder renders."""
    columns = build(published, config) if published is not None else None
    if columns is None:
        return None, set(range(count))
    mask = columns.slow.copy()
    mask[list(fixed)] = True  # the row form's own rows
    slow = set(np.flatnonzero(mask).tolist())
    if len(slow) == count:
        return None, slow
    return columns, slow


class _Rows:
    """The published rows of a batch, as the row form reads them, made when asked for."""

    def __init__(self, published: pa.Table | None, fixed: dict[int, dict[str, Any]]) -> None:
        self._published, self._fixed = published, fixed

    def row(self, position: int) -> dict[str, Any]:
        if position in self._fixed or self._published is None:
            return self._fixed[position]
        row: dict[str, Any] = self._published.slice(position, 1).to_pylist()[0]
        return row


def _lists(
    columns: ClozeColumns | None, count: int = 0
) -> tuple[list[Any], list[str], list[Any], list[Any], list[Any]]:
    """The documents and the columns of a batch as Python values (``count`` Nones: none)."""
    if columns is None:
        nothing: list[Any] = [None] * count
        return nothing, nothing, nothing, nothing, nothing
    queries = columns.query.to_pylist()
    choices = columns.choices.to_pylist()
    golds = columns.gold.to_pylist()
    natives = columns.native_id.to_pylist()
    names = columns.head.column_names
    heads = [column.to_pylist() for column in columns.head.columns]
    if len(names) == 1:
        (name,), (head,) = names, heads
        docs = [
            {name: value, "query": query, "choices": texts, "gold": gold}
            for value, query, texts, gold in zip(head, queries, choices, golds, strict=True)
        ]
    else:
        docs = [
            {**dict(zip(names, values, strict=True)), "query": q, "choices": c, "gold": g}
            for *values, q, c, g in zip(*heads, queries, choices, golds, strict=True)
        ]
    return docs, queries, choices, golds, natives


def _item(rendered: Rendered, task: str) -> _Item:
    continuations = [continuation for _, continuation in rendered.pairs]
    return rendered.doc, continuations, rendered.task or task, rendered.native_id, rendered.label


def _spool(
    spool: Any, first: int, count: int, columns: ClozeColumns | None, items: dict[int, _Item]
) -> None:
    """One batch into the spool: a pickled header, then its columns as an Arrow IPC stream."""
    body: Any = b""
    names: list[str] = []
    if columns is not None:
        names = columns.head.column_names
        arrays = [*columns.head.columns, columns.query, columns.choices, columns.gold]
        arrays.append(columns.native_id)
        table = pa.Table.from_arrays(arrays, names=[f"head.{n}" for n in names] + list(_COLUMNS))
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        body = sink.getvalue()  # written as it is (a buffer), not copied to bytes
    header = pickle.dumps((first, count, names, items), pickle.HIGHEST_PROTOCOL)
    spool.write(len(header).to_bytes(8, "little") + header + len(body).to_bytes(8, "little"))
    spool.write(body)


def _spooled(
    path: Path,
) -> Iterator[tuple[int, list[Any], list[Any], list[Any], list[Any], dict[int, _Item]]]:
    """Each spooled batch back: its first ``doc_id``, documents, columns and row-form items."""
    with open(path, "rb") as spool:
        while size := int.from_bytes(spool.read(8), "little"):
            first, count, names, items = pickle.loads(spool.read(size))  # our own file
            body = spool.read(int.from_bytes(spool.read(8), "little"))
            columns = None
            if body:
                table = pa.ipc.open_stream(body).read_all()
                head = table.select(list(range(len(names)))).rename_columns(names)
                query, choices, gold, native = table.columns[len(names) :]
                columns = ClozeColumns(head, query, choices, gold, native, np.zeros(0, bool))
            docs, _, choices, golds, natives = _lists(columns, count)
            yield first, docs, choices, golds, natives, items
