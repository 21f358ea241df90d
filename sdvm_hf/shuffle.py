"""A remedy for answer-position bias: each sample's choices in a reproducible random order.

TruthfulQA's published order puts the correct answer first in every row; a model that
learns "pick A" scores well for nothing. :func:`shuffle_choices` permutes each sample's
choices, moves ``answer_index`` with the answer, and keeps the original order in ``extra``
under :data:`~sdvm_hf.summary.ORDER_KEY` (``order[i]`` is the original position of the
choice now at ``i``), so the original can be put back or the shuffled variant published as
its own configuration. The permutation comes from the seed and the sample's own text, so the
same sample is shuffled the same way wherever it sits and whatever the batches.

Rows whose choices refer to each other ("all of the above", "both A and B") are left in
place, with ``None`` as their order, and counted.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import overload

import pyarrow as pa
import pyarrow.compute as pc

from sdvm_hf._wire import LETTERS
from sdvm_hf.arrow.rejects import Rejects
from sdvm_hf.arrow.sequence import SampleSequence, samples_to_table
from sdvm_hf.record import Record
from sdvm_hf.samples import MultipleChoiceSample
from sdvm_hf.sources.streaming import WHOLE, Part, StreamingSamples
from sdvm_hf.summary import ORDER_KEY

__all__ = [
    "ORDER_KEY",
    "refers_to_other_choices",
    "shuffle_choices",
    "shuffle_table",
    "unshuffled",
]

_OTHERS = re.compile(
    r"\b(?:all|none|both|neither|either|any|each|one)\s+of\s+(?:the\s+)?"
    r"(?:above|below|preceding|following|these|those|them|the\s+(?:options|answers|choices))\b"
    r"|\b(?:all|none|both)\s+(?:the\s+)?(?:above|below)\b"
    r"|\b(?:both|either|neither|only|options?|answers?|choices?)\s+\(?[a-h]\)?"
    r"(?:\s*,\s*\(?[a-h]\)?)*\s*(?:,\s*)?(?:and|or|nor|&)\s+\(?[a-h]\)?(?![\w'])"
    r"|\([a-h]\)(?:\s*,\s*\([a-h]\))*\s*,?\s*(?:and|or|nor|&)\s+\([a-h]\)",
    re.IGNORECASE,
)
_LETTERS = re.compile(
    r"(?<![\w'])\(?[A-H]\)?(?:\s*,\s*\(?[A-H]\)?)*\s*,?\s*(?:and|or|&)\s+\(?[A-H]\)?(?![\w'])"
)


def refers_to_other_choices(choices: Sequence[str]) -> bool:
    """Whether a choice names other choices, so that moving them would change its meaning.

    >>> refers_to_other_choices(["red", "blue", "All of the above"])
    True
    >>> refers_to_other_choices(["both a and b", "c"]), refers_to_other_choices(["A and C", "B"])
    (True, True)
    >>> refers_to_other_choices(["a cat and a dog", "above the clouds", "I and II only"])
    False
    """
    return any(_OTHERS.search(choice) or _LETTERS.search(choice) for choice in choices)


def _order(seed: int, context: str, choices: Sequence[str]) -> list[int]:
    text = "\x1f".join([str(seed), context, *choices]).encode("utf-8")
    rng = random.Random(int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big"))
    order = list(range(len(choices)))
    rng.shuffle(order)
    return order


def shuffle_table(table: pa.Table, seed: int) -> tuple[pa.Table, int]:
    """A (canonical) sample table with each row's choices shuffled; and the rows left in place.

    The same ``seed`` gives the same table. A row shuffled before is shuffled again from its
    current order, and its recorded order still leads back to the first.
    """
    mirrors = _letter_mirrors(table)
    contexts = table.column("context").to_pylist()
    all_choices = table.column("choices").to_pylist()
    answers = table.column("answer_index").to_pylist()
    before = _orders(table)
    new_choices, new_answers, orders, kept = [], [], [], 0
    for row, (context, choices, answer) in enumerate(
        zip(contexts, all_choices, answers, strict=True)
    ):
        if refers_to_other_choices(choices):
            kept += 1
            new_choices.append(choices)
            new_answers.append(answer)
            orders.append(before[row])
            continue
        order = _order(seed, context, choices)
        new_choices.append([choices[i] for i in order])
        new_answers.append(order.index(answer))
        earlier = before[row]
        orders.append(order if earlier is None else [earlier[i] for i in order])
    schema = table.schema
    table = table.set_column(
        schema.get_field_index("choices"),
        schema.field("choices"),
        pa.array(new_choices, schema.field("choices").type),
    )
    table = table.set_column(
        schema.get_field_index("answer_index"),
        schema.field("answer_index"),
        pa.array(new_answers, schema.field("answer_index").type),
    )
    return _with_letters(_with_orders(table, orders), mirrors, new_answers), kept


_ANSWER_NAMES = frozenset({"answer", "answerKey", "answer_key", "target", "label", "Answer"})
"""The ``extra`` keys that may spell the answer again as a letter (MMLU-Pro's ``answer``)."""


def _letter_mirrors(table: pa.Table) -> list[str]:
    """The ``extra`` fields that spell every row's answer as its letter (MMLU-Pro's ``answer``).

    They follow the answer when the choices move, so the samples sent to the service never
    say one answer in ``answer_index`` and another in a letter.
    """
    kind = table.schema.field("extra").type
    if not pa.types.is_struct(kind) or table.num_rows == 0:
        return []
    extra = table.column("extra").combine_chunks()
    if not isinstance(extra, pa.StructArray):
        return []
    letters = pa.array(list(LETTERS))
    index = pc.fill_null(table.column("answer_index"), 0).combine_chunks()
    index = pc.if_else(pc.less(index, len(LETTERS)), index, 0)
    want = letters.take(index)
    found = []
    for number, field in enumerate(kind):
        if field.name not in _ANSWER_NAMES or not pa.types.is_string(field.type):
            continue
        same = pc.equal(extra.field(number), want)
        if same.null_count == 0 and pc.all(same).as_py():
            found.append(field.name)
    return found


def _with_letters(table: pa.Table, mirrors: list[str], answers: list[int]) -> pa.Table:
    """``table`` with each mirror field of ``extra`` the letter of the moved answer."""
    if not mirrors:
        return table
    letters = pa.array([LETTERS[i] if 0 <= i < len(LETTERS) else None for i in answers])
    kind = table.schema.field("extra").type
    return _with_fields(table, {name: letters.cast(kind.field(name).type) for name in mirrors})


def _orders(table: pa.Table) -> list[list[int] | None]:
    """Each row's recorded order, from an earlier shuffle (``None`` where none)."""
    extra = table.column("extra")
    if pa.types.is_struct(extra.type):
        if extra.type.get_field_index(ORDER_KEY) < 0:
            return [None] * table.num_rows
        return [value for value in extra.combine_chunks().field(ORDER_KEY).to_pylist()]
    return [json.loads(text).get(ORDER_KEY) for text in extra.to_pylist()]


def _with_orders(table: pa.Table, orders: list[list[int] | None]) -> pa.Table:
    column = table.column("extra")
    if not pa.types.is_struct(column.type):
        texts = [
            json.dumps({**json.loads(text), ORDER_KEY: order}, ensure_ascii=False)
            for text, order in zip(column.to_pylist(), orders, strict=True)
        ]
        index = table.schema.get_field_index("extra")
        return table.set_column(index, table.schema.field("extra"), pa.array(texts, column.type))
    return _with_fields(table, {ORDER_KEY: pa.array(orders, pa.list_(pa.int64()))})


def _with_fields(table: pa.Table, values: dict[str, pa.Array]) -> pa.Table:
    """``table`` whose struct ``extra`` has these fields set (replaced, or added at its end)."""
    column = table.column("extra")
    extra = column.combine_chunks()
    if not isinstance(extra, pa.StructArray):  # an empty table combines to a plain array
        extra = pa.array(extra.to_pylist(), column.type)
    children = extra.flatten()
    fields = list(column.type)
    for name, value in values.items():
        at = column.type.get_field_index(name)
        if at >= 0:
            children[at], fields[at] = value, pa.field(name, value.type)
        else:
            children.append(value)
            fields.append(pa.field(name, value.type))
    mask = extra.is_null() if extra.null_count else None
    struct = pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    index = table.schema.get_field_index("extra")
    return table.set_column(index, pa.field("extra", struct.type), struct)


class _ShuffledStream(StreamingSamples):
    """A stream whose every converted batch has its choices shuffled."""

    def __init__(self, inner: StreamingSamples, seed: int) -> None:
        self.__dict__.update(inner.__dict__)
        self._seed = seed
        self.left_in_place = 0
        if inner.provenance is not None:  # the record says the choices were shuffled, and how
            self.provenance = partial(_shuffled_record, inner.provenance, seed)

    def _converted(self, parts: Sequence[Part] = (WHOLE,)) -> Iterator[tuple[pa.Table, Rejects]]:
        self.left_in_place = 0
        for table, rejects in super()._converted(parts):
            shuffled, kept = shuffle_table(table, self._seed)
            self.left_in_place += kept
            yield shuffled, rejects

    def _then(
        self, step: tuple[str, int, int | None] | None, node: tuple[int, int] | None = None
    ) -> StreamingSamples:
        return _ShuffledStream(super()._then(step, node), self._seed)


@overload
def shuffle_choices(samples: StreamingSamples, seed: int) -> StreamingSamples: ...
@overload
def shuffle_choices(samples: Sequence[MultipleChoiceSample], seed: int) -> SampleSequence: ...
def shuffle_choices(
    samples: Sequence[MultipleChoiceSample] | StreamingSamples, seed: int
) -> SampleSequence | StreamingSamples:
    """Each sample with its choices in a reproducible random order (see the module).

    A stream gives a stream, shuffled batch by batch as it is read; anything else a
    :class:`~sdvm_hf.arrow.sequence.SampleSequence` (with the same rejects).

    >>> from sdvm_hf import MultipleChoiceSample
    >>> q = MultipleChoiceSample(context="2 + 2?", choices=["4", "3", "5", "22"], answer_index=0)
    >>> s = shuffle_choices([q], seed=7)[0]
    >>> s.choices[s.answer_index], s.extra["sdvm_hf_choice_order"][s.answer_index]
    ('4', 0)
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"shuffle seed: expected an int, got {type(seed).__name__} {seed!r}")
    if isinstance(samples, StreamingSamples):
        return _ShuffledStream(samples, seed)
    rejects = samples.rejects if isinstance(samples, SampleSequence) else None
    table, _ = shuffle_table(samples_to_table(samples), seed)
    shuffled = SampleSequence(table, rejects=rejects, validate=False)
    if isinstance(samples, SampleSequence) and samples.provenance is not None:
        shuffled.provenance = partial(_shuffled_record, samples.provenance, seed)
    return shuffled


def _shuffled_record(record: Callable[[], Record], seed: int) -> Record:
    return record().shuffled(seed)


def unshuffled(sample: MultipleChoiceSample) -> MultipleChoiceSample:
    """The sample as it was before :func:`shuffle_choices`: its choices back in their order.

    A sample that was not shuffled (or was left in place) comes back as it is.

    >>> from sdvm_hf import MultipleChoiceSample
    >>> q = MultipleChoiceSample(context="2 + 2?", choices=["4", "3", "5", "22"], answer_index=0)
    >>> unshuffled(shuffle_choices([q], seed=7)[0]).to_dict() == q.to_dict()
    True
    """
    order = sample.extra.get(ORDER_KEY)
    extra = {key: value for key, value in sample.extra.items() if key != ORDER_KEY}
    if not order:
        return (
            sample if ORDER_KEY not in sample.extra else sample.model_copy(update={"extra": extra})
        )
    choices = [""] * len(order)
    for now, then in enumerate(order):
        choices[then] = sample.choices[now]
    update = {"choices": choices, "answer_index": order[sample.answer_index], "extra": extra}
    return sample.model_copy(update=update)
