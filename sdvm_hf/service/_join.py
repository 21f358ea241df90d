"""The wire join: each sample sent carries its row id; each answer is matched back to its row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sdvm_hf._wire import BLOCKS, RESERVED_KEYS
from sdvm_hf.arrow._codec import changeable_columns
from sdvm_hf.arrow.sequence import SampleSequence
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.service._base import RESUME, ROW_ID, ServiceError, Stage

KEPT_BY_AUDIT = ("context", "choices", "answer_index")
"""The core fields an audit must send back as they were sent (only fix and refine change them)."""


def row_key(extra_type: pa.DataType) -> str:
    """The wire key for the row ids: :data:`ROW_ID`, or the next free ``sdvm_hf_row_N``.

    A source may itself have a column named ``sdvm_hf_row`` (kept in ``extra``): its values
    travel untouched, and the ids take another key.
    """
    taken: set[str] = set()
    if pa.types.is_struct(extra_type):
        taken = {extra_type.field(i).name for i in range(extra_type.num_fields)}
    key, n = ROW_ID, 0
    while key in taken:
        n += 1
        key = f"{ROW_ID}_{n}"
    return key


@dataclass(frozen=True)
class Tagged:
    """A sample on its way to the service, carrying its row id in the wire dict's extra keys.

    The SDK only calls ``to_dict()`` on what it sends, so the id is added there, without
    building (and validating) a second sample.
    """

    sample: MultipleChoiceSample
    row: int
    key: str = ROW_ID

    def to_dict(self) -> dict[str, Any]:
        wire = self.sample.to_dict()
        blocks = {key: wire.pop(key) for key in BLOCKS if key in wire}
        return {**wire, self.key: self.row, **blocks}


def with_ids(batch: SampleSequence, start: int, key: str) -> list[Tagged]:
    """The batch's samples, each tagged with its row number under ``key``."""
    tagged = []
    for offset, sample in enumerate(batch):
        if key in sample.extra:  # a JSON extra whose keys the schema does not show
            raise ServiceError(f"row {start + offset}: extra already has the key {key!r}")
        tagged.append(Tagged(sample, start + offset, key))
    return tagged


def _malformed(label: str, what: str) -> ServiceError:
    return ServiceError(f"{label}: malformed response: {what}; {RESUME}")


def by_row(sent: Sequence[Tagged], returned: Any, label: str) -> dict[int, dict[str, Any]]:
    """Each returned sample's wire dict by its row id; ServiceError unless one per row sent.

    Cheap (no sample is validated): :func:`send` runs it on an answer before the request's
    slot is let go, so that after an answer of the wrong shape no other request leaves.
    """
    if not isinstance(returned, list) or len(returned) != len(sent):
        count = len(returned) if isinstance(returned, list) else type(returned).__name__
        raise _malformed(label, f"sent {len(sent)} samples, got {count}")
    key = sent[0].key if sent else ROW_ID
    by_id: dict[int, dict[str, Any]] = {}
    for item in returned:
        try:
            wire = dict(item.to_dict())
        except (AttributeError, TypeError, ValueError) as error:
            raise _malformed(label, str(error)) from None
        row = wire.pop(key, None)
        if not isinstance(row, int) or isinstance(row, bool) or row in by_id:
            raise _malformed(label, f"a sample without a row id of its own ({row!r})")
        by_id[row] = wire
    for original in sent:
        if original.row not in by_id:
            raise _malformed(label, f"row {original.row} did not come back")
    return by_id


def join(
    sent: Sequence[Tagged], returned: Any, label: str, stage: Stage
) -> list[MultipleChoiceSample]:
    """The returned samples in the order sent; ServiceError if they do not match.

    Each returned sample is validated, all but its ``extra``: that must equal the extra sent
    (already valid), and is left out of the samples returned here, since a part keeps the
    source's own ``extra`` column. After an audit, context, choices and answer must also be
    what was sent.
    """

    def malformed(what: str) -> ServiceError:
        return _malformed(label, what)

    by_id = by_row(sent, returned, label)
    out = []
    for original in sent:
        answer = by_id[original.row]
        extra = {k: answer.pop(k) for k in [*answer] if k not in RESERVED_KEYS}
        if extra != original.sample.extra:
            raise malformed(f"row {original.row} came back with its extra changed")
        try:
            back = MultipleChoiceSample.from_dict(answer)
        except (TypeError, ValueError) as error:
            raise malformed(f"row {original.row}: {error}") from None
        if type(back) is not type(original.sample):
            raise malformed(f"row {original.row} came back as {type(back).__name__}")
        if stage == "audit":
            for name in KEPT_BY_AUDIT:
                if getattr(back, name) != getattr(original.sample, name):
                    raise malformed(
                        f"row {original.row} came back with its {name} changed "
                        "(an audit only rates; fix or refine change samples)"
                    )
        out.append(back)
    return out


def part_table(source: pa.Table, returned: Sequence[MultipleChoiceSample]) -> pa.Table:
    """The source batch's rows with the returned core fields and stage blocks.

    ``extra`` is the source's own column (the join checked it came back equal), so its Arrow
    types survive the trip exactly.
    """
    columns = changeable_columns(returned)
    for name, array in columns.items():
        source = source.set_column(source.schema.get_field_index(name), name, array)
    return source
