"""Render samples as loglikelihood requests, streamed, and write them as AI2's request dumps.

:func:`render_requests` yields :class:`Request` s: per document its conditional requests in
choice order, documents in order, then (OLMES rc, where the dumps have them) the
unconditional ``Answer:`` requests of every document, ``doc_id + 1_000_000``, which it spools
to a temporary file rather than holding. :func:`write_requests` writes ``requests.jsonl.gz``
and ``config.json`` in the layout of ``ai2-olmo-eval``'s ``oe_eval_tasks``, so OLMo's
``OEEvalTask`` reads a cleaned benchmark as a task. ``limit`` subsamples as OLMES does
(``random.Random(1234).sample(range(rows), limit)``, in that order: ``doc_id`` is the
position in the subsample), holding only the chosen documents.
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import random
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdvm_hf._atomic import atomic_path
from sdvm_hf.formulations._batches import table_documents, table_requests
from sdvm_hf.formulations._columnar import TableBuild
from sdvm_hf.formulations._gzip import GzipLines, append_file
from sdvm_hf.formulations._plan import Plan, plan_for
from sdvm_hf.formulations._request import UNCONDITIONAL_OFFSET, RenderError, Request
from sdvm_hf.formulations._source import Samples, Source, open_source
from sdvm_hf.formulations.olmes import Rendered
from sdvm_hf.formulations.template import Template

__all__ = ["FORMULATIONS", "SUBSAMPLE_SEED", "Rendering", "render_requests", "write_requests"]

FORMULATIONS = ("olmes-rc", "olmes-mc", "lm-eval")
"""The formulations known by name."""

SUBSAMPLE_SEED = 1234
"""OLMES' ``random_subsample_seed``: the seed of ``limit``'s subsample."""


@dataclass(frozen=True)
class Rendering:
    """What :func:`write_requests` wrote."""

    folder: Path
    task_name: str
    documents: int
    requests: int


def render_requests(
    samples: Samples,
    formulation: str,
    *,
    dataset: str | None = None,
    config: str | None = None,
    split: str | None = None,
    shots: int = 0,
    limit: int | None = None,
    seed: int = 1234,
    shot_samples: Samples | None = None,
    template: Template | None = None,
) -> Iterator[Request]:
    """The loglikelihood requests of ``samples`` in ``formulation``, one at a time.

    ``samples`` is a sample file (Parquet with its record; JSON Lines with ``dataset=``), a
    ``load`` result or a ``stream`` result; ``formulation`` one of :data:`FORMULATIONS`.
    ``shots`` few-shot examples: OLMES' published ones where the dataset has them, else a
    sample seeded by ``seed`` of ``shot_samples`` (its training split, never the rows
    rendered); ``limit`` documents chosen as OLMES chooses them; ``template`` renders a
    mapping of one's own (see :class:`~sdvm_hf.formulations.Template`). Bad arguments raise
    here, before the first request.
    """
    source, plan = _prepare(
        samples, formulation, dataset, config, split, shots, limit, seed, shot_samples, template
    )
    build = _table_build(source, plan)
    if build is not None and limit is None:
        return table_requests(source, plan, build)  # no generator between
    return _row_requests(source, plan, limit)


def _table_build(source: Source, plan: Plan) -> TableBuild | None:
    """The rule's table form, where the samples are held as tables it can stand for."""
    return plan.table_build if plan.table_build is not None and source.by_table() else None


def _row_requests(source: Source, plan: Plan, limit: int | None) -> Iterator[Request]:
    """The requests of each document rendered one row at a time."""
    with (
        tempfile.TemporaryDirectory(prefix="sdvm_hf-render-") as folder,
        _Spool(Path(folder) / "unconditional.pickles") as spool,
    ):
        for doc_id, rendered in _documents(source, plan, limit):
            doc, task = rendered.doc, rendered.task or plan.task_name
            native_id, label = rendered.native_id, rendered.label
            for idx, (context, continuation) in enumerate(rendered.pairs):
                yield Request(doc, context, continuation, idx, task, doc_id, native_id, label)
            if plan.unconditional:
                spool.add((doc, [c for _, c in rendered.pairs], task, doc_id, native_id, label))
        for doc, continuations, task, doc_id, native_id, label in spool.read():
            doc_id += UNCONDITIONAL_OFFSET
            for idx, continuation in enumerate(continuations):
                yield Request(doc, "Answer:", continuation, idx, task, doc_id, native_id, label)


class _Spool:
    """Items written to a file in pickled chunks, then read back in order.

    What the unconditional requests need is held here until every conditional one is out, so
    memory stays flat however many documents there are. Uncompressed: compressing them cost
    more than rendering them.
    """

    CHUNK = 1024

    def __init__(self, path: Path) -> None:
        self._path = path
        self._file = open(path, "wb")  # noqa: SIM115 (closed by __exit__ or read)
        self._pending: list[Any] = []

    def add(self, item: Any) -> None:
        self._pending.append(item)
        if len(self._pending) >= self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            data = pickle.dumps(self._pending, pickle.HIGHEST_PROTOCOL)
            self._file.write(len(data).to_bytes(8, "little") + data)
            self._pending = []

    def read(self) -> Iterator[Any]:
        """Every item added, in order (the file is closed for writing first)."""
        self._flush()
        self._file.close()
        with open(self._path, "rb") as chunks:
            while size := int.from_bytes(chunks.read(8), "little"):
                yield from pickle.loads(chunks.read(size))  # our own file, just written

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


def write_requests(
    samples: Samples,
    folder: str | os.PathLike[str],
    formulation: str,
    *,
    dataset: str | None = None,
    config: str | None = None,
    split: str | None = None,
    shots: int = 0,
    limit: int | None = None,
    seed: int = 1234,
    shot_samples: Samples | None = None,
    template: Template | None = None,
) -> Rendering:
    """Write ``folder/requests.jsonl.gz`` and ``folder/config.json`` (AI2's dump layout).

    The arguments are :func:`render_requests`'; lines are written as they are made (flat
    memory), each file atomically.
    """
    source, plan = _prepare(
        samples, formulation, dataset, config, split, shots, limit, seed, shot_samples, template
    )
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise RenderError(f"{target} exists and is not a folder; name a folder for the requests")
    made = not target.exists()
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RenderError(f"{target}: cannot make the folder: {error.strerror or error}") from None
    try:
        return _write(source, plan, target, shots, limit, seed)
    except BaseException:
        if made and not any(target.iterdir()):  # a failed render leaves no empty folder
            target.rmdir()
        raise


def _write(
    source: Source, plan: Plan, target: Path, shots: int, limit: int | None, seed: int
) -> Rendering:
    """Write the two files of the dump into ``target``, each atomically."""
    documents = requests = spooled_lines = 0
    with (
        atomic_path(target / "requests.jsonl.gz") as path,
        tempfile.TemporaryDirectory(prefix="sdvm_hf-render-") as folder,
    ):
        spooled = Path(folder) / "unconditional.jsonl.gz"
        with GzipLines(path) as out, GzipLines(spooled) as spool:
            for doc_id, rendered in _documents(source, plan, limit):
                documents += 1
                doc_json = json.dumps(rendered.doc)
                for line, unconditional in _lines(plan, doc_id, rendered, doc_json):
                    if unconditional:
                        spool.write(line)
                        spooled_lines += 1
                    else:
                        out.write(line)
                    requests += 1
        if spooled_lines:
            append_file(path, spooled)  # one more gzip member: the same stream to a reader
    config_json = plan.config_json(source, shots=shots, limit=limit, seed=seed, count=documents)
    with atomic_path(target / "config.json") as path:
        path.write_text(json.dumps(config_json, indent=2) + "\n", encoding="utf-8")
    return Rendering(target, plan.task_name, documents, requests)


def _prepare(
    samples: Samples,
    formulation: str,
    dataset: str | None,
    config: str | None,
    split: str | None,
    shots: int,
    limit: int | None,
    seed: int,
    shot_samples: Samples | None,
    template: Template | None,
) -> tuple[Source, Plan]:
    if formulation not in FORMULATIONS:
        raise RenderError(
            f"unknown formulation {formulation!r}; formulations known: {', '.join(FORMULATIONS)}"
        )
    if limit is not None and limit < 1:
        raise RenderError(f"limit should be at least 1, got {limit}")
    if shots < 0:
        raise RenderError(f"shots should be at least 0, got {shots}")
    source = open_source(samples, dataset, config, split)
    shot_source = None
    if shot_samples is not None:
        shot_source = open_source(shot_samples, source.dataset, source.config, None)
    return source, plan_for(source, formulation, shots, seed, shot_source, template)


def _documents(source: Source, plan: Plan, limit: int | None) -> Iterator[tuple[int, Rendered]]:
    """Each document to render with its ``doc_id``: every row, or OLMES' subsample of them.

    lm-eval's ``--limit`` takes the first rows instead, in order (its few-shot draws run
    through the documents in that order).
    """
    chosen: dict[int, int] | None = None
    if limit is not None and plan.formulation == "lm-eval":
        for position, row in enumerate(itertools.islice(source.rows(), limit)):
            yield position, plan.render(row, position, source)
        return
    if limit is not None:
        count = source.count()
        if limit < count:
            picked = random.Random(SUBSAMPLE_SEED).sample(range(count), limit)
            chosen = {position: doc_id for doc_id, position in enumerate(picked)}
    build = _table_build(source, plan)
    if chosen is None and build is not None:
        yield from enumerate(table_documents(source, plan, build))
        return
    if chosen is None:
        for position, row in enumerate(source.rows()):
            yield position, plan.render(row, position, source)
        return
    held: dict[int, Rendered] = {}
    for position, row in enumerate(source.rows()):
        if position in chosen:
            held[chosen[position]] = plan.render(row, position, source)
    for doc_id in range(len(chosen)):
        yield doc_id, held[doc_id]


def _lines(
    plan: Plan, doc_id: int, rendered: Rendered, doc_json: str
) -> Iterator[tuple[str, bool]]:
    """A document's lines: its conditional requests, then (flagged) its unconditional ones.

    Each is :func:`request_line`'s text; what the requests of a document share (its context,
    often, and the tail after ``doc_id``) is encoded once.
    """
    dumps = json.dumps
    head = f'{{"request_type": "loglikelihood", "doc": {doc_json}, "request": {{"context": '
    tail = (
        f'"task_name": {dumps(rendered.task or plan.task_name)}, "doc_id": {{}}, '
        f'"native_id": {dumps(rendered.native_id)}, "label": {dumps(rendered.label)}}}'
    )
    cond_tail = tail.replace("{}", str(doc_id), 1)
    contexts: dict[str, str] = {}
    continuations = []
    for idx, (context, continuation) in enumerate(rendered.pairs):
        encoded = contexts.get(context)
        if encoded is None:
            encoded = contexts[context] = dumps(context)
        continuations.append(dumps(continuation))
        yield (
            f'{head}{encoded}, "continuation": {continuations[-1]}}}, "idx": {idx}, {cond_tail}',
            False,
        )
    if plan.unconditional:
        uncond_tail = tail.replace("{}", str(doc_id + UNCONDITIONAL_OFFSET), 1)
        for idx, continuation in enumerate(continuations):
            yield (
                f'{head}"Answer:", "continuation": {continuation}}}, "idx": {idx}, {uncond_tail}',
                True,
            )
