"""The wire join: each sample sent carries its row id; each answer is matched back to its row.

Both ways work on columns. A batch's wire dicts are built straight from its Arrow columns
(:func:`wire_batch`), with no sample object per row. An answered batch is checked column-wise
(:func:`join`): each field of the answers is gathered into one list, checked with whole-list
operations (types, blank contexts, counts and ranges, equality with what was sent, blocks
written as JSON and read back), and turned into the Arrow array that becomes the part's
column (Arrow refuses text UTF-8 cannot carry); on 100 rows that is cheaper than Arrow
compute calls, some 50 µs each whatever the size. The rules are the per-row ones of
:func:`join_rows` (each answer decoded into a sample), which stays the reference: whenever
the column-wise check is not sure a batch passes, the batch goes through it, so an answer
that breaks a rule is refused with the same message either way.
"""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sdvm_hf._wire import BLOCKS, RESERVED_KEYS, TASK_TYPE
from sdvm_hf.arrow import changeable_columns, json_text, plain_blocks, plain_extras
from sdvm_hf.samples import MultipleChoiceSample, class_for_style
from sdvm_hf.service._base import RESUME, ROW_ID, ServiceError, Stage
from sdvm_hf.service._rows import extra_change, traded

KEPT_BY_AUDIT = ("context", "choices", "answer_index")
"""The core fields an audit must send back as they were sent (only fix and refine change them)."""
MAX_BRACKETS = 32
"""A block whose JSON text opens at most this many lists and objects nests no deeper than
:data:`sdvm_hf._frozen.MAX_DEPTH` allows; a deeper-looking one is checked row by row."""


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
class Sent:
    """A batch on its way to the service: its wire dicts, each carrying its row id."""

    wire: list[dict[str, Any]]
    """What the SDK sends, in the input's order: the sample's wire dict with the id among the
    extra keys (before the blocks)."""
    start: int
    """The row number of the batch's first row (the ids are ``start``, ``start + 1``, ...)."""
    key: str
    """The wire key of the ids."""
    styles: list[str]
    extras: list[dict[str, Any]]
    """Each row's ``extra`` as sent (without the id)."""
    blocks: bool
    """Whether any sample sent carries a stage block (a file audited before)."""

    @property
    def rows(self) -> range:
        return range(self.start, self.start + len(self.wire))


def wire_batch(batch: pa.Table, start: int, key: str) -> Sent:
    """The wire dicts of a checked batch of the sample table, each tagged with its row number.

    Each equals ``sample.to_dict()`` with ``key: row`` added after the extra keys, built from
    the columns rather than through a sample per row.
    """
    extras = plain_extras(batch)
    for offset, extra in enumerate(extras):
        if key in extra:  # a JSON extra whose keys the schema does not show
            raise ServiceError(f"row {start + offset}: extra already has the key {key!r}")
    styles = batch.column("style").to_pylist()
    blocks = [
        (name, plain_blocks(column))
        for name in BLOCKS
        if (column := batch.column(name)).null_count < len(column)
    ]
    wire = []
    for offset, (context, choices, answer, style, extra) in enumerate(
        zip(
            batch.column("context").to_pylist(),
            batch.column("choices").to_pylist(),
            batch.column("answer_index").to_pylist(),
            styles,
            extras,
            strict=True,
        )
    ):
        item = {
            "task_type": TASK_TYPE,
            "context": context,
            "choices": choices,
            "answer_index": answer,
            "style": style,
            **extra,
            key: start + offset,
        }
        for name, values in blocks:
            if values[offset] is not None:
                item[name] = values[offset]
        wire.append(item)
    return Sent(wire, start, key, styles, extras, bool(blocks))


def _malformed(label: str, what: str) -> ServiceError:
    return ServiceError(f"{label}: malformed response: {what}; {RESUME}")


def by_row(sent: Sent, returned: Any, label: str) -> list[dict[str, Any]]:
    """The returned wire dicts in the order sent; ServiceError unless one per row sent.

    Cheap (no sample is validated): :func:`send` runs it on an answer before the request's
    slot is let go, so that after an answer of the wrong shape no other request leaves.
    """
    if not isinstance(returned, list) or len(returned) != len(sent.wire):
        count = len(returned) if isinstance(returned, list) else type(returned).__name__
        raise _malformed(label, f"sent {len(sent.wire)} samples, got {count}")
    by_id: dict[int, dict[str, Any]] = {}
    for item in returned:
        if not isinstance(item, dict):
            raise _malformed(label, f"an answer that is not a wire sample ({type(item).__name__})")
        row = item.get(sent.key)
        if not isinstance(row, int) or isinstance(row, bool) or row in by_id:
            raise _malformed(label, f"a sample without a row id of its own ({row!r})")
        by_id[row] = item
    for row in sent.rows:
        if row not in by_id:
            raise _malformed(label, f"row {row} did not come back")
    return [by_id[row] for row in sent.rows]


def join(
    sent: Sent, answers: list[dict[str, Any]], label: str, stage: Stage
) -> dict[str, pa.Array]:
    """The part's new columns from the answers (in the order sent); ServiceError on a mismatch.

    The answers are checked column-wise (:func:`checked_columns`); a batch that check is not
    sure of goes through the per-row rules (:func:`join_rows`), which name the first row at
    fault.
    """
    columns = checked_columns(sent, answers, stage)
    if columns is None:
        columns = changeable_columns(join_rows(sent, answers, label, stage))
    return columns


def checked_columns(
    sent: Sent, answers: list[dict[str, Any]], stage: Stage
) -> dict[str, pa.Array] | None:
    """The columns a stage may change, when every answer surely passes the per-row rules.

    ``None`` when some answer may break one (then :func:`join_rows` decides, and names it).
    Built as :func:`~sdvm_hf.arrow._codec.changeable_columns` builds them from samples.
    """
    try:
        return _columns(sent, answers, stage)
    except (ValueError, TypeError, OverflowError, RecursionError, pa.ArrowException):
        return None  # a value Arrow or JSON cannot take: the per-row rules say why


REQUIRED: dict[str, tuple[str, ...]] = {
    "audit": ("audit",),
    "fix": ("fix",),
    "refine": ("audit", "fix"),  # reaudit is null for a sample the fix left alone
}
"""The stage blocks an answer of each stage must carry: without them a row is not done."""


def _columns(sent: Sent, answers: list[dict[str, Any]], stage: Stage) -> dict[str, pa.Array] | None:
    """:func:`checked_columns`, raising where a value cannot be taken."""
    n = len(answers)
    if not _same_but_blocks(sent, answers, stage):
        return None
    if [answer.get("task_type") for answer in answers].count(TASK_TYPE) != n:
        return None
    # the style, and so the class, comes back as sent
    if [answer.get("style", "continuation") for answer in answers] != sent.styles:
        return None
    contexts: list[Any] = [answer.get("context") for answer in answers]
    choices: list[Any] = [answer.get("choices") for answer in answers]
    answer_index: list[Any] = [answer.get("answer_index") for answer in answers]
    # the types: a str context, a list of str choices, an int answer (not a bool, not a float)
    if not {*map(type, contexts)} <= {str} or not {*map(type, choices)} <= {list}:
        return None
    if not {*map(type, answer_index)} <= {int}:
        return None
    flat = [choice for row in choices for choice in row]
    if not {*map(type, flat)} <= {str}:
        return None
    # the values: a context not blank, at least two choices, an answer among them
    lengths = [*map(len, choices)]
    if not all(map(str.strip, contexts)) or min(lengths) < 2:
        return None
    if min(answer_index) < 0 or not all(map(operator.lt, answer_index, lengths)):
        return None
    offsets = pa.array([0, *itertools.accumulate(lengths)], pa.int32())
    columns = {  # text that UTF-8 cannot carry (a lone surrogate) raises here
        "context": pa.array(contexts, pa.string()),
        "choices": pa.ListArray.from_arrays(offsets, pa.array(flat, pa.string())),
        "answer_index": pa.array(answer_index, pa.int64()),
    }
    for name in BLOCKS:
        texts = _block_texts([answer.get(name) for answer in answers])
        if texts is None:
            return None
        columns[name] = texts
    if any(columns[name].null_count for name in REQUIRED[stage]):
        return None
    if stage != "audit" and traded(sent.wire, sent.start, [contexts, choices]):
        return None  # the per-row rules refuse it, naming the rows
    return columns


def _same_but_blocks(sent: Sent, answers: list[dict[str, Any]], stage: Stage) -> bool:
    """Whether each answer holds the extra sent, and after an audit the core fields sent too.

    The answers' stage blocks are left out of the comparison (and the sent ones: a sample
    audited before is audited again), and after a fix or refine the core fields as well.
    """
    if stage == "audit":
        expected = [_without(item, BLOCKS) for item in sent.wire] if sent.blocks else sent.wire
        return all(map(operator.eq, (_without(a, BLOCKS) for a in answers), expected))
    dropped = (*RESERVED_KEYS, sent.key)
    return all(map(operator.eq, (_without(a, dropped) for a in answers), sent.extras))


def _without(item: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    copy = dict(item)
    for key in keys:
        copy.pop(key, None)
    return copy


def _block_texts(blocks: list[Any]) -> pa.Array | None:
    """One stage block of each answer as JSON text (null where absent), when each surely passes.

    A block must be a JSON object: str keys, finite numbers, text that UTF-8 can carry,
    nested at most :data:`~sdvm_hf._frozen.MAX_DEPTH` deep. Its text read back must give the
    very block (a tuple, a non-str key or an object JSON writes otherwise does not), the text
    must be UTF-8 (no lone surrogate) and open at most :data:`MAX_BRACKETS` lists and objects.
    """
    present = [block for block in blocks if block is not None]
    if not present:
        return pa.nulls(len(blocks), pa.string())
    if not {*map(type, present)} <= {dict}:
        return None
    texts = [None if block is None else json_text(block) for block in blocks]
    written = [text for text in texts if text is not None]
    if json.loads(f"[{','.join(written)}]") != present:
        return None
    if max(text.count("[") + text.count("{") for text in written) > MAX_BRACKETS:
        return None
    return pa.array(texts, pa.string())  # a lone surrogate raises


def join_rows(
    sent: Sent, answers: list[dict[str, Any]], label: str, stage: Stage
) -> list[MultipleChoiceSample]:
    """The answers as samples in the order sent; ServiceError naming the first that does not match.

    The per-row rules: each answer's ``extra`` must equal the extra sent (and is left out of
    the samples returned here, since a part keeps the source's own ``extra`` column); the
    rest must decode (:meth:`MultipleChoiceSample.from_dict`) to a sample of the class sent.
    After an audit, context, choices and answer must also be what was sent.
    """

    def malformed(what: str) -> ServiceError:
        return _malformed(label, what)

    out = []
    for row, original, extra_sent, answer in zip(
        sent.rows, sent.wire, sent.extras, answers, strict=True
    ):
        answer = {k: v for k, v in answer.items() if k != sent.key}
        extra = {k: answer.pop(k) for k in [*answer] if k not in RESERVED_KEYS}
        if extra != extra_sent:
            raise malformed(f"row {row} came back {extra_change(extra_sent, extra)}")
        try:
            back = MultipleChoiceSample.from_dict(answer)
        except (TypeError, ValueError) as error:
            raise malformed(f"row {row}: {error}") from None
        if type(back) is not class_for_style(original["style"]):
            raise malformed(f"row {row} came back as {type(back).__name__}")
        missing = [name for name in REQUIRED[stage] if getattr(back, name) is None]
        if missing:
            raise malformed(
                f"row {row} came back without its {missing[0]} block (every {stage} answer "
                "carries one)"
            )
        if stage == "audit":
            for name in KEPT_BY_AUDIT:
                if getattr(back, name) != original[name]:
                    raise malformed(
                        f"row {row} came back with its {name} changed "
                        "(an audit only rates; fix or refine change samples)"
                    )
        out.append(back)
    found = stage != "audit" and traded(
        sent.wire, sent.start, [[s.context for s in out], [s.choices for s in out]]
    )
    if found:
        row, name, other = found
        raise malformed(
            f"row {row} came back with the {name} sent with row {other}, whose own answer "
            "differs from what was sent (rows cannot trade content, whatever their ids and "
            "extras say)"
        )
    return out


def part_table(source: pa.Table, columns: dict[str, pa.Array]) -> pa.Table:
    """The source batch's rows with the returned core fields and stage blocks.

    ``extra`` is the source's own column (the join checked it came back equal), so its Arrow
    types survive the trip exactly.
    """
    for name, array in columns.items():
        source = source.set_column(source.schema.get_field_index(name), name, array)
    return source
